/**
 * Options of createHttpClient, validated once with zod and resolved into a frozen object that the rest of
 * the client trusts. A zod failure becomes an InvalidArgumentError naming the option, what was given and
 * what is allowed.
 */
import type { Dispatcher } from "undici";
import { z } from "zod";
import {
  type AuthHook,
  type AuthOptions,
  authSchema,
  type TlsOptions,
  tlsSchema,
} from "../connection-options.js";
import { InvalidArgumentError } from "../errors.js";
import { type BackoffOptions, DEFAULT_BACKOFF } from "../retry-policy.js";

/** Compression of request and response bodies. */
export interface CompressionOptions {
  /** Compress request bodies with this algorithm (sent with `Content-Encoding`). */
  request?: "gzip" | "deflate";
  /** Ask the server for compressed responses (`Accept-Encoding: gzip, deflate`). */
  response?: boolean;
}

/** Options of {@link createHttpClient}. */
export interface HttpClientOptions {
  /** Server URL, e.g. `http://localhost:8000` (a path prefix is kept: `http://gw/triton`). */
  url: string;
  /** Keep-alive connections in the pool (default 8). */
  connections?: number;
  /** Connect timeout in ms (default 10000). */
  connectTimeoutMs?: number;
  /** Default deadline of each call in ms (default: none). */
  timeoutMs?: number;
  /** Headers sent with every call. */
  headers?: Record<string, string>;
  /** Authentication: basic, bearer, or a hook. */
  auth?: AuthOptions;
  /** TLS settings (https URLs). */
  tls?: TlsOptions;
  /** HTTP(S) proxy URL. */
  proxy?: string;
  /** Compression of requests and responses. */
  compression?: CompressionOptions;
  /** Retries per call (default 2). Applies to infer only with `retryInfer: true`. */
  maxRetries?: number;
  /** Let `maxRetries` apply to infer as well (default false: infer is not retried unless asked per call). */
  retryInfer?: boolean;
  /** Backoff between retries. */
  backoff?: Partial<BackoffOptions>;
  /** An undici Dispatcher to send through instead of the client's own pool (tests, custom agents); not closed by the client. */
  dispatcher?: Dispatcher;
  /**
   * The HTTP/1.1 engine of the client's own pool: "undici" (default, an undici Pool) or "wire" (the
   * client's minimal keep-alive pool, wire-pool.ts: cheaper per request; no proxy, no HTTP/2, no pipelining).
   */
  engine?: HttpEngine;
}

/** The engines of {@link HttpClientOptions.engine}. */
export type HttpEngine = "undici" | "wire";

/** The validated, defaulted, frozen options. */
export interface ResolvedHttpClientOptions {
  readonly origin: string;
  /** URL path prefix without a trailing slash ("" for none). */
  readonly basePath: string;
  readonly connections: number;
  readonly connectTimeoutMs: number;
  readonly timeoutMs: number | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly authHook: AuthHook | undefined;
  readonly tls: Readonly<TlsOptions> | undefined;
  readonly proxy: string | undefined;
  readonly requestCompression: "gzip" | "deflate" | undefined;
  readonly responseCompression: boolean;
  readonly maxRetries: number;
  readonly retryInfer: boolean;
  readonly backoff: Readonly<BackoffOptions>;
  readonly dispatcher: Dispatcher | undefined;
  readonly engine: HttpEngine;
}

const positiveMs = z.number().int().positive();

const schema = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: "expected an http:// or https:// URL" }),
  connections: z.number().int().min(1).max(1024).optional(),
  connectTimeoutMs: positiveMs.optional(),
  timeoutMs: positiveMs.optional(),
  headers: z.record(z.string(), z.string()).optional(),
  auth: authSchema.optional(),
  tls: tlsSchema.optional(),
  proxy: z.url({ protocol: /^https?$/, error: "expected an http:// or https:// proxy URL" }).optional(),
  compression: z
    .strictObject({ request: z.enum(["gzip", "deflate"]).optional(), response: z.boolean().optional() })
    .optional(),
  maxRetries: z.number().int().min(0).max(100).optional(),
  retryInfer: z.boolean().optional(),
  backoff: z
    .strictObject({
      initialDelayMs: z.number().min(0).optional(),
      maxDelayMs: z.number().min(0).optional(),
      multiplier: z.number().min(1).optional(),
      jitter: z.number().min(0).max(1).optional(),
    })
    .optional(),
  dispatcher: z
    .custom<Dispatcher>((v) => typeof (v as { dispatch?: unknown } | null)?.dispatch === "function", {
      error: "expected an undici Dispatcher",
    })
    .optional(),
  engine: z.enum(["undici", "wire"]).optional(),
});

function describe(value: unknown): string {
  if (typeof value === "function") return "a function";
  if (typeof value === "string") return JSON.stringify(value);
  if (value === undefined) return "nothing";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const key of path) v = (v as Record<PropertyKey, unknown> | undefined)?.[key];
  return v;
}

function basicHeader(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, "utf8").toString("base64")}`;
}

/** Validates and resolves client options; throws InvalidArgumentError naming the bad option. */
export function resolveHttpClientOptions(options: HttpClientOptions): ResolvedHttpClientOptions {
  const parsed = schema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length > 0 ? issue.path.join(".") : "(options)";
    const given =
      issue.code === "unrecognized_keys" ? issue.keys.join(", ") : describe(valueAt(options, issue.path));
    throw new InvalidArgumentError(
      `createHttpClient: invalid option '${field}': ${issue.message}; given ${given}`,
      { cause: parsed.error },
    );
  }
  const o = parsed.data;
  if (o.engine === "wire" && (o.proxy !== undefined || o.dispatcher !== undefined)) {
    const given = o.proxy !== undefined ? "proxy" : "dispatcher";
    throw new InvalidArgumentError(
      `createHttpClient: option 'engine' "wire" cannot be used with '${given}' (the wire engine connects directly and is its own pool); drop '${given}' or use engine "undici"`,
    );
  }
  const url = new URL(o.url);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.headers ?? {})) headers[k.toLowerCase()] = v;
  let authHook: AuthHook | undefined;
  if (typeof o.auth === "function") authHook = o.auth;
  else if (o.auth?.type === "basic") headers["authorization"] = basicHeader(o.auth.username, o.auth.password);
  else if (o.auth?.type === "bearer") headers["authorization"] = `Bearer ${o.auth.token}`;
  return Object.freeze({
    origin: url.origin,
    basePath: url.pathname.replace(/\/+$/, ""),
    connections: o.connections ?? 8,
    connectTimeoutMs: o.connectTimeoutMs ?? 10_000,
    timeoutMs: o.timeoutMs,
    headers: Object.freeze(headers),
    authHook,
    tls: o.tls === undefined ? undefined : Object.freeze(stripUndefined(o.tls) as TlsOptions),
    proxy: o.proxy,
    requestCompression: o.compression?.request,
    responseCompression: o.compression?.response ?? false,
    maxRetries: o.maxRetries ?? 2,
    retryInfer: o.retryInfer ?? false,
    backoff: Object.freeze({
      ...DEFAULT_BACKOFF,
      ...(stripUndefined(o.backoff ?? {}) as Partial<BackoffOptions>),
    }),
    dispatcher: o.dispatcher,
    engine: o.engine ?? "undici",
  });
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
