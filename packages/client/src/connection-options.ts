/**
 * Options both transports take the same way: authentication and TLS, as types and as the zod schemas that
 * validate them (http/http-client-options.ts and grpc/grpc-client-options.ts build their schemas on these).
 */
import { z } from "zod";

/** A hook that sets authentication headers on each request (it may refresh a token first). */
export type AuthHook = (headers: Record<string, string>) => void | Promise<void>;

/** Built-in authentication, or a hook. */
export type AuthOptions =
  | { type: "basic"; username: string; password: string }
  | { type: "bearer"; token: string }
  | AuthHook;

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

/** Validates {@link AuthOptions}. */
export const authSchema = z.union([
  z.strictObject({ type: z.literal("basic"), username: z.string(), password: z.string() }),
  z.strictObject({ type: z.literal("bearer"), token: z.string().min(1) }),
  z.custom<AuthHook>((v) => typeof v === "function"),
]);

/** Validates {@link TlsOptions}. */
export const tlsSchema = z.strictObject({
  ca: z.union([pem, z.array(pem)]).optional(),
  cert: pem.optional(),
  key: pem.optional(),
  rejectUnauthorized: z.boolean().optional(),
  servername: z.string().optional(),
});
