/**
 * Options of createGrpcClient, validated once with zod and resolved into a frozen object: the grpc-js
 * target, channel credentials and channel options the client's one Channel is built from. Defaults differ
 * from grpc-js's where grpc-js's would surprise a Triton user: message sizes are unlimited both ways (grpc-js
 * refuses answers over 4 MiB; Triton itself sets INT32_MAX), and `channelOptions` win over everything.
 */
import * as grpcJs from "@grpc/grpc-js";
import { z } from "zod";
import { type AuthHook, type AuthOptions, applyAuth, authSchema } from "../auth-options.js";
import { type TlsOptions, tlsSchema } from "../connection-options.js";
import { InvalidArgumentError } from "../errors.js";
import { type BackoffOptions, DEFAULT_BACKOFF } from "../retry-policy.js";

/** Options of {@link createGrpcClient}. */
export interface GrpcClientOptions {
  /**
   * `host:port`, `grpc://host:port`, `grpcs://host:port` (TLS), or a grpc-js target such as
   * `dns:///host:8001`, `ipv4:10.0.0.1:8001,10.0.0.2:8001` or `unix:/path` (passed to grpc-js as is).
   */
  url: string;
  /** Default deadline of each call in ms (default: none). */
  timeoutMs?: number;
  /** Metadata sent with every call. */
  headers?: Record<string, string>;
  /** Authentication: basic, bearer, or a hook that sets headers (sent as metadata). */
  auth?: AuthOptions;
  /** TLS settings: with them (or a `grpcs://` URL) the channel is secure; `cert` + `key` for mTLS. */
  tls?: TlsOptions;
  /** Request compression (`grpc-encoding`); answers are decompressed whatever the server picks. */
  compression?: "none" | "gzip" | "deflate";
  /** Retries per call (default 2). Applies to infer only with `retryInfer: true` or a per-call value. */
  maxRetries?: number;
  /** Let `maxRetries` apply to infer as well (default false). */
  retryInfer?: boolean;
  /** Backoff between retries. */
  backoff?: Partial<BackoffOptions>;
  /** HTTP/2 keepalive pings: interval, how long to wait for the ack, and whether to ping without calls. */
  keepalive?: { timeMs?: number; timeoutMs?: number; permitWithoutCalls?: boolean };
  /** Largest answer accepted, in bytes (default unlimited, not grpc-js's 4 MiB). */
  maxReceiveMessageBytes?: number;
  /** Largest request sent, in bytes (default unlimited). */
  maxSendMessageBytes?: number;
  /** How calls are spread over the addresses the target resolves to (default grpc-js's pick_first). */
  loadBalancing?: "pick_first" | "round_robin";
  /** Raw grpc-js channel options; they win over the ones these options set. */
  channelOptions?: Record<string, string | number>;
}

/** The validated, defaulted, frozen options. */
export interface ResolvedGrpcClientOptions {
  /** The grpc-js target. */
  readonly target: string;
  readonly secure: boolean;
  readonly credentials: grpcJs.ChannelCredentials;
  readonly channelOptions: Readonly<grpcJs.ChannelOptions>;
  readonly timeoutMs: number | undefined;
  /** Metadata of every call, names in lower case (auth included). */
  readonly headers: Readonly<Record<string, string>>;
  readonly authHook: AuthHook | undefined;
  readonly maxRetries: number;
  readonly retryInfer: boolean;
  readonly backoff: Readonly<BackoffOptions>;
}

const size = z
  .number()
  .int()
  .min(-1)
  .max(2 ** 31 - 1);

const schema = z.strictObject({
  url: z
    .string()
    .min(1, { error: "expected host:port, grpc://host:port, grpcs://host:port or a grpc-js target" }),
  timeoutMs: z.number().int().positive().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  auth: z.optional(authSchema),
  tls: tlsSchema.optional(),
  compression: z.enum(["none", "gzip", "deflate"]).optional(),
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
  keepalive: z
    .strictObject({
      timeMs: z.number().int().positive().optional(),
      timeoutMs: z.number().int().positive().optional(),
      permitWithoutCalls: z.boolean().optional(),
    })
    .optional(),
  maxReceiveMessageBytes: size.optional(),
  maxSendMessageBytes: size.optional(),
  loadBalancing: z.enum(["pick_first", "round_robin"]).optional(),
  channelOptions: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
});

function describe(value: unknown): string {
  if (typeof value === "function") return "a function";
  if (value === undefined) return "nothing";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function fail(field: string, message: string, given: string, cause?: unknown): never {
  throw new InvalidArgumentError(
    `createGrpcClient: invalid option '${field}': ${message}; given ${given}`,
    cause === undefined ? undefined : { cause },
  );
}

/** The grpc-js target and whether the URL asks for TLS. */
function targetOf(url: string, tls: boolean): { target: string; secure: boolean } {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i.exec(url);
  if (scheme !== null && (scheme[1] === "grpc" || scheme[1] === "grpcs")) {
    const rest = scheme[2]!.replace(/\/+$/, "");
    if (rest === "" || rest.includes("/")) {
      fail("url", "expected grpc://host:port or grpcs://host:port (no path)", JSON.stringify(url));
    }
    if (scheme[1] === "grpc" && tls) {
      fail("url", "a grpc:// URL is plain text; use grpcs:// (or host:port) with `tls`", JSON.stringify(url));
    }
    return { target: rest, secure: scheme[1] === "grpcs" || tls };
  }
  if (scheme !== null && (scheme[1] === "http" || scheme[1] === "https")) {
    fail("url", "this is the gRPC client; use grpc://, grpcs:// or host:port", JSON.stringify(url));
  }
  // host:port, [v6]:port, or a grpc-js target (dns:, ipv4:, ipv6:, unix:): grpc-js parses it.
  return { target: url, secure: tls };
}

function buffer(value: string | Buffer | undefined): Buffer | null {
  if (value === undefined) return null;
  return typeof value === "string" ? Buffer.from(value, "utf8") : value;
}

function credentialsOf(tls: TlsOptions | undefined): grpcJs.ChannelCredentials {
  const ca = tls?.ca;
  const roots = Array.isArray(ca) ? Buffer.concat(ca.map((c) => buffer(c)!)) : buffer(ca);
  if ((tls?.cert === undefined) !== (tls?.key === undefined)) {
    fail("tls", "mTLS needs both `cert` and `key`", tls?.cert === undefined ? "only key" : "only cert");
  }
  const verify: grpcJs.VerifyOptions = {};
  // grpc-js checks the host name itself; with rejectUnauthorized false, no check at all.
  if (tls?.rejectUnauthorized === false) verify.rejectUnauthorized = false;
  return grpcJs.credentials.createSsl(roots, buffer(tls?.key), buffer(tls?.cert), verify);
}

const COMPRESSION_ALGORITHM = { none: 0, deflate: 1, gzip: 2 } as const;

/** Validates and resolves client options; throws InvalidArgumentError naming the bad option. */
export function resolveGrpcClientOptions(options: GrpcClientOptions): ResolvedGrpcClientOptions {
  const parsed = schema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length > 0 ? issue.path.join(".") : "(options)";
    let given: unknown = options;
    for (const key of issue.path) given = (given as Record<PropertyKey, unknown> | undefined)?.[key];
    fail(
      field,
      issue.message,
      issue.code === "unrecognized_keys" ? issue.keys.join(", ") : describe(given),
      parsed.error,
    );
  }
  const o = parsed.data;
  const { target, secure } = targetOf(o.url, o.tls !== undefined);
  const channelOptions: grpcJs.ChannelOptions = {
    "grpc.max_receive_message_length": o.maxReceiveMessageBytes ?? -1,
    "grpc.max_send_message_length": o.maxSendMessageBytes ?? -1,
  };
  if (o.compression !== undefined) {
    channelOptions["grpc.default_compression_algorithm"] = COMPRESSION_ALGORITHM[o.compression];
  }
  if (o.keepalive?.timeMs !== undefined) channelOptions["grpc.keepalive_time_ms"] = o.keepalive.timeMs;
  if (o.keepalive?.timeoutMs !== undefined)
    channelOptions["grpc.keepalive_timeout_ms"] = o.keepalive.timeoutMs;
  if (o.keepalive?.permitWithoutCalls !== undefined) {
    channelOptions["grpc.keepalive_permit_without_calls"] = o.keepalive.permitWithoutCalls ? 1 : 0;
  }
  if (o.loadBalancing !== undefined) {
    channelOptions["grpc.service_config"] = JSON.stringify({
      loadBalancingConfig: [{ [o.loadBalancing]: {} }],
    });
  }
  if (o.tls?.servername !== undefined) {
    channelOptions["grpc.ssl_target_name_override"] = o.tls.servername;
    channelOptions["grpc.default_authority"] = o.tls.servername;
  }
  Object.assign(channelOptions, o.channelOptions);

  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.headers ?? {})) headers[k.toLowerCase()] = v;
  const authHook = applyAuth(o.auth, headers);

  return Object.freeze({
    target,
    secure,
    credentials: secure
      ? credentialsOf(o.tls as TlsOptions | undefined)
      : grpcJs.credentials.createInsecure(),
    channelOptions: Object.freeze(channelOptions),
    timeoutMs: o.timeoutMs,
    headers: Object.freeze(headers),
    authHook,
    maxRetries: o.maxRetries ?? 2,
    retryInfer: o.retryInfer ?? false,
    backoff: Object.freeze({
      ...DEFAULT_BACKOFF,
      ...(Object.fromEntries(
        Object.entries(o.backoff ?? {}).filter(([, v]) => v !== undefined),
      ) as Partial<BackoffOptions>),
    }),
  });
}
