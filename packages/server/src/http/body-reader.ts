/**
 * Reads a request body into one fresh, unpooled buffer, refusing bodies over the size limit before they are
 * buffered whole: Content-Length is checked up front and the received bytes are counted while streaming.
 * gzip and deflate bodies (Content-Encoding) are inflated with the same limit on the inflated size.
 */
import type { IncomingMessage } from "node:http";
import { promisify } from "node:util";
import * as zlib from "node:zlib";
import { badRequest, HttpError } from "./http-error.js";

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);

/** The request's content coding: identity, gzip or deflate; anything else is refused with 501 as Triton does. */
export function requestEncoding(header: string | undefined): "identity" | "gzip" | "deflate" {
  if (header === undefined || header === "" || header === "identity") return "identity";
  if (header === "gzip" || header === "deflate") return header;
  throw new HttpError(501, "Unsupported compression type");
}

function tooLarge(size: number, limit: number, what: string): HttpError {
  return badRequest(
    `${what} size of ${size} bytes exceeds the maximum allowed input size of ${limit} bytes. ` +
      "Use --http-max-input-size to increase the limit.",
  );
}

/**
 * Resolves with the whole (decoded) body, or rejects with HttpError. When it rejects for size, the caller
 * should answer and close the connection rather than drain the rest.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const encoding = requestEncoding(req.headers["content-encoding"]);
  const declared = req.headers["content-length"];
  let expected = -1;
  if (declared !== undefined) {
    expected = Number(declared);
    if (expected > maxBytes) return Promise.reject(tooLarge(expected, maxBytes, "request body"));
  }
  return new Promise<Buffer>((resolve, reject) => {
    // Unpooled so the core may transfer its ArrayBuffer to a worker without touching other requests' bytes.
    let buffer = Buffer.allocUnsafeSlow(expected >= 0 ? expected : 16384);
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
        fail(tooLarge(length + chunk.byteLength, maxBytes, "request body"));
        return;
      }
      if (length + chunk.byteLength > buffer.byteLength) {
        const grown = Buffer.allocUnsafeSlow(
          Math.min(maxBytes, Math.max(buffer.byteLength * 2, length + chunk.byteLength)),
        );
        buffer.copy(grown, 0, 0, length);
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
      decompress(raw, encoding, maxBytes).then(resolve, reject);
    });
  });
}

async function decompress(raw: Buffer, encoding: "gzip" | "deflate", maxBytes: number): Promise<Buffer> {
  try {
    const options = { maxOutputLength: maxBytes };
    const inflated = encoding === "gzip" ? await gunzip(raw, options) : await inflate(raw, options);
    // zlib's result may sit in a shared pool slab; give the core a buffer of its own.
    const own = Buffer.allocUnsafeSlow(inflated.byteLength);
    inflated.copy(own);
    return own;
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
      throw badRequest(
        `decompressed request body exceeds the maximum allowed input size of ${maxBytes} bytes. ` +
          "Use --http-max-input-size to increase the limit.",
      );
    }
    throw badRequest(`unable to decompress the ${encoding} request body: ${(error as Error).message}`);
  }
}
