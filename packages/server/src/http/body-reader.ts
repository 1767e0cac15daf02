/**
 * Reads a request body into one fresh, unpooled buffer, refusing bodies over the size limit before they are
 * buffered whole: Content-Length is checked up front and the received bytes are counted while streaming.
 * gzip and deflate bodies (Content-Encoding) are inflated with the same limit on the inflated size, as
 * Triton's DataCompressor::DecompressData does it (server src/data_compressor.h: zlib's inflateInit2 with
 * 15 | 32, which takes a gzip or a zlib stream under either name) and with its messages. Triton limits the
 * JSON of a request to --http-max-input-size ("request JSON size of ..."), not the binary data after it;
 * tbench-server limits the whole body, so that a body is never buffered past the limit.
 */
import type { IncomingMessage } from "node:http";
import { promisify } from "node:util";
import * as zlib from "node:zlib";
import type { BufferHold } from "./buffer-budget.js";
import { badRequest, HttpError } from "./http-error.js";

const unzip = promisify(zlib.unzip);

/** The request's content coding: identity, gzip or deflate; anything else is refused with 501 as Triton does. */
export function requestEncoding(header: string | undefined): "identity" | "gzip" | "deflate" {
  if (header === undefined || header === "" || header === "identity") return "identity";
  if (header === "gzip" || header === "deflate") return header;
  throw new HttpError(501, "Unsupported compression type");
}

function tooLarge(size: number, limit: number, wholeBodyIsJson: boolean): HttpError {
  return badRequest(
    `request ${wholeBodyIsJson ? "JSON" : "body"} size of ${size} bytes exceeds the maximum allowed input size of ${limit} bytes. ` +
      "Use --http-max-input-size to increase the limit.",
  );
}

/**
 * Resolves with the whole (decoded) body, or rejects with HttpError. When it rejects for size, the caller
 * should answer and close the connection rather than drain the rest. `wholeBodyIsJson` (no binary data can
 * follow) words an uncompressed body over the limit as Triton words its JSON limit. `hold` reserves every
 * byte buffered before it is (--http-max-buffered-bytes, buffer-budget.ts); its owner releases it.
 */
export function readBody(
  req: IncomingMessage,
  maxBytes: number,
  wholeBodyIsJson: boolean,
  hold: BufferHold,
): Promise<Buffer> {
  const encoding = requestEncoding(req.headers["content-encoding"]);
  const json = wholeBodyIsJson && encoding === "identity";
  const declared = req.headers["content-length"];
  let expected = -1;
  if (declared !== undefined) {
    expected = Number(declared);
    if (expected > maxBytes) return Promise.reject(tooLarge(expected, maxBytes, json));
  }
  const initialBytes = expected >= 0 ? expected : Math.min(16384, maxBytes);
  try {
    // A declared length is reserved whole, so that a body that cannot fit is refused before it is read.
    hold.reserve(initialBytes);
  } catch (error) {
    return Promise.reject(error);
  }
  return new Promise<Buffer>((resolve, reject) => {
    // Unpooled so the core may transfer its ArrayBuffer to a worker without touching other requests' bytes.
    let buffer = Buffer.allocUnsafeSlow(initialBytes);
    let length = 0;
    let failed = false;
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      req.off("data", onData);
      req.pause();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      if (length + chunk.byteLength > maxBytes) {
        fail(tooLarge(length + chunk.byteLength, maxBytes, json));
        return;
      }
      if (length + chunk.byteLength > buffer.byteLength) {
        const grownBytes = Math.min(maxBytes, Math.max(buffer.byteLength * 2, length + chunk.byteLength));
        try {
          // The old buffer is held until the copy is done: both count.
          hold.reserve(grownBytes);
        } catch (error) {
          fail(error as Error);
          return;
        }
        const grown = Buffer.allocUnsafeSlow(grownBytes);
        buffer.copy(grown, 0, 0, length);
        hold.set(grownBytes);
        buffer = grown;
      }
      chunk.copy(buffer, length);
      length += chunk.byteLength;
    };
    req.on("data", onData);
    req.once("error", (error) => fail(error));
    req.once("aborted", () => fail(badRequest("request body truncated: the client closed the connection")));
    req.once("end", () => {
      if (failed) return;
      const raw = length === buffer.byteLength ? buffer : buffer.subarray(0, length);
      if (encoding === "identity") {
        resolve(raw);
        return;
      }
      decompress(raw, encoding, maxBytes, hold).then(resolve, reject);
    });
  });
}

async function decompress(
  raw: Buffer,
  encoding: "gzip" | "deflate",
  maxBytes: number,
  hold: BufferHold,
): Promise<Buffer> {
  if (raw.byteLength === 0) throw badRequest("nothing to be decompressed");
  let inflated: Buffer;
  try {
    inflated = await unzip(raw, { maxOutputLength: maxBytes });
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
      throw badRequest(
        `Decompressed data size exceeds the maximum allowed value of ${maxBytes} bytes. ` +
          "Use --http-max-input-size to increase the limit.",
      );
    }
    // Triton has no answer of its own here: zlib's data errors are not checked, and what inflated so far is
    // parsed as the request.
    throw badRequest(`unable to decompress the ${encoding} request body: ${(error as Error).message}`);
  }
  // The compressed body is dropped once the inflated one is copied; what stays held is the copy.
  hold.reserve(inflated.byteLength);
  // zlib's result may sit in a shared pool slab; give the core a buffer of its own.
  const own = Buffer.allocUnsafeSlow(inflated.byteLength);
  inflated.copy(own);
  hold.set(own.byteLength);
  return own;
}
