/**
 * A fetch Response read into an HttpAnswer: status, headers and the whole body as bytes. An infer answer
 * with binary tensors is read into memory laid out as Node's transport lays it (http/exchange.ts): the
 * binary section, which starts `Inference-Header-Content-Length` bytes in, lands on an 8-byte boundary, so
 * output TypedArrays can view it without copying. Other answers are read with `arrayBuffer()`.
 */
import type { HttpAnswer } from "../http/http-answer.js";

/** A completed answer (any status). */
export class FetchAnswer implements HttpAnswer {
  readonly status: number;
  readonly body: Uint8Array;
  readonly #headers: Headers;

  constructor(status: number, headers: Headers, body: Uint8Array) {
    this.status = status;
    this.#headers = headers;
    this.body = body;
  }

  header(name: string): string | undefined {
    return this.#headers.get(name) ?? undefined;
  }
}

/** A header holding a non-negative decimal integer, or undefined. */
function integerHeader(headers: Headers, name: string): number | undefined {
  const value = headers.get(name);
  if (value === null || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}

/**
 * Reads the body into one buffer of `contentLength` + 7 bytes, starting where the binary section after
 * `jsonLength` bytes is 8-byte aligned. Content-Length may not be the length read (a body fetch has
 * decompressed, where the runtime hides Content-Encoding from a cross-origin caller): past it, the chunks
 * are collected and joined instead.
 */
async function readAligned(
  stream: ReadableStream<Uint8Array>,
  contentLength: number,
  jsonLength: number,
): Promise<Uint8Array> {
  const buffer = new Uint8Array(contentLength + 7);
  const start = (8 - (jsonLength % 8)) % 8;
  let pos = start;
  let overflow: Uint8Array[] | null = null;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (overflow === null && pos + value.length <= buffer.length) {
      buffer.set(value, pos);
      pos += value.length;
    } else {
      overflow ??= [buffer.subarray(start, pos)];
      overflow.push(value);
    }
  }
  if (overflow === null) return buffer.subarray(start, pos);
  let total = 0;
  for (const chunk of overflow) total += chunk.length;
  const joined = new Uint8Array(total);
  total = 0;
  for (const chunk of overflow) {
    joined.set(chunk, total);
    total += chunk.length;
  }
  return joined;
}

/** Reads `response` whole. */
export async function readAnswer(response: Response): Promise<FetchAnswer> {
  const headers = response.headers;
  const jsonLength = integerHeader(headers, "inference-header-content-length");
  const contentLength = integerHeader(headers, "content-length");
  let body: Uint8Array;
  if (
    response.body !== null &&
    jsonLength !== undefined &&
    contentLength !== undefined &&
    contentLength > 0
  ) {
    body = await readAligned(response.body, contentLength, jsonLength);
  } else {
    body = new Uint8Array(await response.arrayBuffer());
  }
  return new FetchAnswer(response.status, headers, body);
}
