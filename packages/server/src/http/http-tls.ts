/**
 * HTTPS for the HTTP front end: tbench-server's own `--http-ssl-cert` / `--http-ssl-key` (Triton's HTTP
 * endpoint has no TLS flags; it is meant to sit behind a proxy that terminates TLS). The key and
 * certificate are checked once, at startup, so a bad one fails with its flag's name instead of an OpenSSL
 * error from deep inside node:https.
 */
import { createSecureContext } from "node:tls";

/** PEM text (or bytes) of the HTTPS endpoint. */
export interface HttpTlsOptions {
  /** `--http-ssl-cert`: the server's certificate chain. */
  readonly cert: string | Uint8Array;
  /** `--http-ssl-key`: the server's private key. */
  readonly key: string | Uint8Array;
}

/** A key and certificate that do not load: the message names the flags. */
export class HttpTlsError extends Error {
  override readonly name = "HttpTlsError";
}

/** The node:https options for `tls`, checked. */
export function httpsOptions(tls: HttpTlsOptions): { cert: Buffer; key: Buffer } {
  const toBuffer = (pem: string | Uint8Array) =>
    typeof pem === "string" ? Buffer.from(pem) : Buffer.from(pem.buffer, pem.byteOffset, pem.byteLength);
  const cert = toBuffer(tls.cert);
  const key = toBuffer(tls.key);
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new HttpTlsError(
      `the HTTPS certificate and key (--http-ssl-cert, --http-ssl-key) do not load: ${(error as Error).message}`,
    );
  }
  return { cert, key };
}
