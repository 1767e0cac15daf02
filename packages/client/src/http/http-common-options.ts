/**
 * The options every HTTP transport takes (Node's undici and wire engines, and fetch): server URL, deadline,
 * headers, auth, compression, retries. Each transport's options extend these; their schemas start from
 * {@link httpCommonShape} and their resolvers from {@link resolveHttpCommonOptions}.
 */
import * as z from "zod/mini";
import { type AuthHook, type AuthOptions, applyAuth, authSchema } from "../auth-options.js";
import { definedOnly } from "../option-validation.js";
import { type BackoffOptions, DEFAULT_BACKOFF } from "../retry-policy.js";

/** Compression of request and response bodies. */
export interface CompressionOptions {
  /** Compress request bodies with this algorithm (sent with `Content-Encoding`). */
  request?: "gzip" | "deflate";
  /** Ask the server for compressed responses (`Accept-Encoding: gzip, deflate`). */
  response?: boolean;
}

/** Options of every HTTP client, whatever sends its requests. */
export interface HttpCommonOptions {
  /** Server URL, e.g. `http://localhost:8000` (a path prefix is kept: `http://gw/triton`). */
  url: string;
  /** Default deadline of each call in ms (default: none). */
  timeoutMs?: number;
  /** Headers sent with every call. */
  headers?: Record<string, string>;
  /** Authentication: basic, bearer, or a hook. */
  auth?: AuthOptions;
  /** Compression of requests and responses. */
  compression?: CompressionOptions;
  /** Retries per call (default 2). Applies to infer only with `retryInfer: true`. */
  maxRetries?: number;
  /** Let `maxRetries` apply to infer as well (default false: infer is not retried unless asked per call). */
  retryInfer?: boolean;
  /** Backoff between retries. */
  backoff?: Partial<BackoffOptions>;
}

/** The common options validated and defaulted. */
export interface ResolvedHttpCommonOptions {
  readonly origin: string;
  /** URL path prefix without a trailing slash ("" for none). */
  readonly basePath: string;
  readonly timeoutMs: number | undefined;
  /** The client's headers with names in lower case, `authorization` included for basic and bearer auth. */
  readonly headers: Readonly<Record<string, string>>;
  readonly authHook: AuthHook | undefined;
  readonly requestCompression: "gzip" | "deflate" | undefined;
  readonly responseCompression: boolean;
  readonly maxRetries: number;
  readonly retryInfer: boolean;
  readonly backoff: Readonly<BackoffOptions>;
}

/** The zod shape of {@link HttpCommonOptions}, for a transport's strict schema to extend (zod/mini: see auth-options.ts). */
export const httpCommonShape = {
  url: z.url({ protocol: /^https?$/, error: "expected an http:// or https:// URL" }),
  timeoutMs: z.optional(z.int().check(z.positive())),
  headers: z.optional(z.record(z.string(), z.string())),
  auth: z.optional(authSchema),
  compression: z.optional(
    z.strictObject({ request: z.optional(z.enum(["gzip", "deflate"])), response: z.optional(z.boolean()) }),
  ),
  maxRetries: z.optional(z.int().check(z.minimum(0), z.maximum(100))),
  retryInfer: z.optional(z.boolean()),
  backoff: z.optional(
    z.strictObject({
      initialDelayMs: z.optional(z.number().check(z.minimum(0))),
      maxDelayMs: z.optional(z.number().check(z.minimum(0))),
      multiplier: z.optional(z.number().check(z.minimum(1))),
      jitter: z.optional(z.number().check(z.minimum(0), z.maximum(1))),
    }),
  ),
};

/** Resolves the common part of options that a transport's schema has validated. */
export function resolveHttpCommonOptions(
  o: z.output<z.ZodMiniObject<typeof httpCommonShape>>,
): ResolvedHttpCommonOptions {
  const url = new URL(o.url);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.headers ?? {})) headers[k.toLowerCase()] = v;
  const authHook = applyAuth(o.auth, headers);
  return {
    origin: url.origin,
    basePath: url.pathname.replace(/\/+$/, ""),
    timeoutMs: o.timeoutMs,
    headers: Object.freeze(headers),
    authHook,
    requestCompression: o.compression?.request,
    responseCompression: o.compression?.response ?? false,
    maxRetries: o.maxRetries ?? 2,
    retryInfer: o.retryInfer ?? false,
    backoff: Object.freeze({
      ...DEFAULT_BACKOFF,
      ...(definedOnly(o.backoff ?? {}) as Partial<BackoffOptions>),
    }),
  };
}
