/**
 * TLS options, which the Node transports take the same way (http/ over undici or the wire engine, grpc/):
 * the type and the zod schema that validates it. Node only: PEM material may be a Buffer. Authentication,
 * which every transport takes, is in auth-options.ts.
 */
import { z } from "zod";

/** TLS settings (https URLs, grpcs:// targets; mTLS with `cert` + `key`). */
export interface TlsOptions {
  /** Trusted CA certificate(s), PEM. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Client certificate, PEM (mTLS). */
  cert?: string | Buffer;
  /** Client private key, PEM (mTLS). */
  key?: string | Buffer;
  /** Verify the server's certificate (default true). */
  rejectUnauthorized?: boolean;
  /** Server name for SNI and certificate checks, when it differs from the URL's host. */
  servername?: string;
}

const pem = z.union([z.string(), z.instanceof(Buffer)]);

/** Validates {@link TlsOptions}. */
export const tlsSchema = z.strictObject({
  ca: z.union([pem, z.array(pem)]).optional(),
  cert: pem.optional(),
  key: pem.optional(),
  rejectUnauthorized: z.boolean().optional(),
  servername: z.string().optional(),
});
