/**
 * gzip / deflate for HTTP bodies, as Triton's HTTP front end speaks them: a request body compressed whole
 * and sent with `Content-Encoding`; a response compressed when `Accept-Encoding` allows it. "deflate" is
 * the zlib format (RFC 1950), as HTTP defines it; a raw deflate stream from a lenient server is accepted
 * too. `Inference-Header-Content-Length` always counts the uncompressed JSON header.
 */
import { promisify } from "node:util";
import zlib from "node:zlib";
import { MalformedResponseError } from "../errors.js";

const gzip = promisify(zlib.gzip);
const deflate = promisify(zlib.deflate);
const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const inflateRaw = promisify(zlib.inflateRaw);

/** Compresses a request body. */
export function compressBody(body: Uint8Array, algorithm: "gzip" | "deflate"): Promise<Buffer> {
  return algorithm === "gzip" ? gzip(body) : deflate(body);
}

/** Decompresses a response body according to its Content-Encoding (identity: returned as is). */
export async function decompressBody(body: Buffer, encoding: string | string[] | undefined): Promise<Buffer> {
  const value = (Array.isArray(encoding) ? encoding.join(",") : (encoding ?? "")).trim().toLowerCase();
  if (value === "" || value === "identity") return body;
  try {
    if (value === "gzip" || value === "x-gzip") return await gunzip(body);
    if (value === "deflate") {
      try {
        return await inflate(body);
      } catch {
        return await inflateRaw(body);
      }
    }
  } catch (error) {
    throw new MalformedResponseError(`response body does not decompress as ${value}`, { cause: error });
  }
  throw new MalformedResponseError(`response has an unsupported Content-Encoding: ${value}`);
}
