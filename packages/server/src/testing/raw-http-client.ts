/**
 * A minimal raw HTTP client for the front end's tests: exact control over headers and body bytes (which
 * fetch does not give for Content-Length, Content-Encoding and truncated bodies), keep-alive off.
 */
import { request } from "node:http";

/** A whole answer: status, headers, body bytes. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

/** Method, headers and body of a raw request. */
export interface RawRequestOptions {
  readonly method?: string;
  readonly headers?: Record<string, string | number>;
  readonly body?: Uint8Array | string;
}

/**
 * Sends one request to `baseUrl` with `path` as the request target, byte for byte (no URL parsing, so dot
 * segments and percent-escapes reach the server as written), and resolves with the whole answer.
 */
export function rawRequest(
  baseUrl: string,
  path: string,
  options: RawRequestOptions = {},
): Promise<RawResponse> {
  const base = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        hostname: base.hostname,
        port: base.port,
        path: base.pathname.replace(/\/$/, "") + path,
        method: options.method ?? "GET",
        headers: options.headers ?? {},
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on("error", reject);
        // A connection lost mid-answer must fail the call, never leave it pending.
        res.on("close", () => {
          if (!res.complete) reject(new Error("connection closed before the whole answer arrived"));
        });
      },
    );
    req.on("error", reject);
    if (options.body !== undefined) req.end(options.body);
    else req.end();
  });
}

/** Builds a binary-extension infer body: the JSON header then the binary sections. */
export function binaryBody(
  header: unknown,
  sections: readonly Uint8Array[],
): { body: Buffer; headerLength: number } {
  const json = Buffer.from(JSON.stringify(header));
  return { body: Buffer.concat([json, ...sections]), headerLength: json.byteLength };
}

/** Splits a binary-extension response into its JSON and the bytes after it. */
export function splitBinaryResponse(response: RawResponse): { json: Record<string, unknown>; rest: Buffer } {
  const raw = response.headers["inference-header-content-length"];
  const length = raw === undefined ? response.body.byteLength : Number(raw);
  return {
    json: JSON.parse(response.body.subarray(0, length).toString("utf8")) as Record<string, unknown>,
    rest: response.body.subarray(length),
  };
}

/** An identity_fp32 infer body of `elements` copies of `value`, binary both ways. */
export function identityFp32Body(elements: number, value: number): { body: Buffer; headerLength: number } {
  const data = new Float32Array(elements).fill(value);
  return binaryBody(
    {
      inputs: [
        {
          name: "INPUT0",
          datatype: "FP32",
          shape: [1, elements],
          parameters: { binary_data_size: data.byteLength },
        },
      ],
      outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }],
    },
    [new Uint8Array(data.buffer)],
  );
}
