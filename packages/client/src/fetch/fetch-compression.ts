/**
 * Request bodies compressed with the standard CompressionStream, as Triton's HTTP front end reads them:
 * "gzip", or "deflate" in the zlib format (RFC 1950), which is what both HTTP and CompressionStream mean by
 * it. Responses need nothing here: fetch decodes a `Content-Encoding` it supports by itself.
 */

/** `body` compressed with `algorithm`. */
export async function compressBody(body: Uint8Array, algorithm: "gzip" | "deflate"): Promise<Uint8Array> {
  const compressed = new Blob([body as Uint8Array<ArrayBuffer>])
    .stream()
    .pipeThrough(new CompressionStream(algorithm));
  return new Uint8Array(await new Response(compressed).arrayBuffer());
}
