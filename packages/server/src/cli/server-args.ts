/**
 * tbench-server's command line: Triton's flag names where the concept is the same, parsed by commander and
 * validated once by zod into ServerOptions. Every usage problem becomes a CliUsageError with a one-line
 * message (the caller prints it and exits 2).
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError, Option } from "commander";
import { z } from "zod";
import { parseRestrictions, type RestrictedApis, RestrictionFlagError } from "../core/restricted-api.js";
import {
  DEFAULT_GRPC_MAX_MESSAGE_BYTES,
  GRPC_COMPRESSION_LEVELS,
  GRPC_SETTING_DEFAULTS,
  type GrpcCompressionLevel,
  type GrpcServerSettings,
} from "../grpc/grpc-server-settings.js";
import type { GrpcTlsOptions } from "../grpc/grpc-tls.js";
import {
  CorsConfigError,
  type CorsSettingNames,
  DEFAULT_CORS_ALLOW_HEADERS,
  DEFAULT_CORS_MAX_AGE_SECS,
  type HttpCorsOptions,
  MAX_CORS_MAX_AGE_SECS,
  normalizeCorsOptions,
  shownValue,
} from "../http/cors.js";
import {
  DEFAULT_HTTP_HEADER_TIMEOUT_MS,
  DEFAULT_HTTP_REQUEST_TIMEOUT_MS,
  DEFAULT_HTTP_SEND_TIMEOUT_MS,
} from "../http/http-server.js";
import { MAX_HTTP_THREAD_COUNT } from "../http/threads/http-threads.js";
import { DEFAULT_GPU_EXECUTION_PROVIDER, GPU_EXECUTION_PROVIDERS } from "../instances/gpu-provider-choice.js";
import type { GpuExecutionProvider } from "../instances/worker-protocol.js";
import { DEFAULT_MAX_PENDING_REQUESTS } from "../lifecycle/create-inference-core.js";
import { type MetricsConfig, MetricsConfigFlagError, parseMetricsConfig } from "../metrics/metrics-config.js";
import type { ServerOptions } from "../server.js";
import {
  DEFAULT_GRPC_PORT,
  DEFAULT_HTTP_MAX_INPUT_SIZE,
  DEFAULT_HTTP_PORT,
  DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
  DEFAULT_METRICS_PORT,
} from "../server.js";

/** A bad command line: print `message` and exit 2. */
export class CliUsageError extends Error {
  override readonly name = "CliUsageError";
}

/** What the command line asks for. */
export interface ServerArgs {
  /** undefined when --help or --version was answered (exit 0). */
  readonly options: ServerOptions | undefined;
  /** --log-verbose level (0: off). */
  readonly logVerbose: number;
  /** Flags given that are accepted without effect, each with why: the server logs them as warnings. */
  readonly warnings?: readonly string[];
}

const BOOLEAN_WORDS: Readonly<Record<string, boolean>> = {
  true: true,
  false: false,
  "1": true,
  "0": false,
  on: true,
  off: false,
  yes: true,
  no: false,
};

const port = z.coerce
  .number({ error: "expected a port number" })
  .int("expected an integer port")
  .min(0, "expected a port from 0 to 65535")
  .max(65535, "expected a port from 0 to 65535");
const flag = z.union([z.boolean(), z.string()]).transform((value, ctx) => {
  if (typeof value === "boolean") return value;
  const parsed = BOOLEAN_WORDS[value.toLowerCase()];
  if (parsed === undefined) {
    ctx.addIssue({ code: "custom", message: "expected true or false" });
    return z.NEVER;
  }
  return parsed;
});

/** A count or a duration in ms, as Triton's ParseOption<int> reads it (a 32-bit int; negatives refused here). */
const grpcInt = z.coerce
  .number({ error: "expected a whole number" })
  .int("expected a whole number")
  .min(0, "expected a number >= 0")
  .max(2 ** 31 - 1, "expected a number <= 2147483647");

/** A gRPC message bound in bytes: grpc-js reads lengths as 32-bit; Triton's own bound is INT32_MAX. */
const grpcMessageSize = z.coerce
  .number({ error: "expected a size in bytes" })
  .int("expected a whole number of bytes")
  .positive("expected a positive size in bytes")
  .max(2 ** 31 - 1, "expected at most 2147483647 bytes (INT32_MAX, Triton's own limit)");

const timeoutMs = z.coerce
  .number({ error: "expected a number of milliseconds" })
  .int("expected a whole number of milliseconds")
  .min(0, "expected 0 (no limit) or a positive number of milliseconds");

/** --http-cors-max-age: digits only (no sign, exponent, hex or blank, which Number() would take), bounded. */
const EXPECTED_MAX_AGE = `expected whole seconds from 0 to ${MAX_CORS_MAX_AGE_SECS}`;
const corsMaxAge = z
  .string()
  .regex(/^[0-9]{1,6}$/, EXPECTED_MAX_AGE)
  .transform(Number)
  .pipe(z.number().max(MAX_CORS_MAX_AGE_SECS, EXPECTED_MAX_AGE));

const argsSchema = z.object({
  modelRepository: z.string().min(1, "expected a directory"),
  httpPort: port,
  grpcPort: port,
  grpcAddress: z.string().min(1, "expected an address").optional(),
  metricsPort: port,
  httpAddress: z.string().min(1, "expected an address"),
  modelControlMode: z.enum(["none", "poll", "explicit"], { error: "expected none, poll or explicit" }),
  repositoryPollSecs: z.coerce
    .number({ error: "expected a number of seconds" })
    .positive("expected a positive number of seconds")
    .max(86_400, "expected at most 86400 seconds"),
  loadModel: z.array(z.string().min(1, "expected a model name")),
  strictReadiness: flag,
  httpMaxInputSize: z.coerce
    .number({ error: "expected a size in bytes" })
    .int("expected a whole number of bytes")
    .positive("expected a positive size in bytes"),
  httpHeaderTimeoutMs: timeoutMs,
  httpRequestTimeoutMs: timeoutMs,
  httpSendTimeoutMs: timeoutMs,
  httpMaxConnections: z.coerce
    .number({ error: "expected a number of connections" })
    .int("expected a whole number of connections")
    .min(0, "expected 0 (no limit) or a positive number of connections"),
  // --http-max-buffered-bytes (issue 36): default derived from the machine's memory by the server.
  httpMaxBufferedBytes: z.coerce
    .number({ error: "expected a size in bytes" })
    .int("expected a whole number of bytes")
    .positive("expected a positive size in bytes")
    .max(Number.MAX_SAFE_INTEGER, "expected a size in bytes below 2^53")
    .optional(),
  maxPendingRequests: z.coerce
    .number({ error: "expected a number of requests" })
    .int("expected a whole number of requests")
    .min(0, "expected 0 (no limit) or a positive number of requests"),
  maxBytesTensorElements: z.coerce
    .number({ error: "expected a number of elements" })
    .int("expected a whole number of elements")
    .positive("expected a positive number of elements"),
  disableAutoCompleteConfig: z.boolean(),
  exitOnError: flag,
  logVerbose: z.union([z.literal(true), z.coerce.number().int().min(0)], {
    error: "expected a level (0, 1, ...)",
  }),
  allowHttp: flag,
  allowMetrics: flag,
  allowGrpc: flag,
  grpcKeepaliveTime: grpcInt.optional(),
  grpcKeepaliveTimeout: grpcInt.optional(),
  grpcKeepalivePermitWithoutCalls: flag.optional(),
  grpcHttp2MaxPingsWithoutData: grpcInt.optional(),
  grpcHttp2MinRecvPingIntervalWithoutData: grpcInt.optional(),
  grpcHttp2MaxPingStrikes: grpcInt.optional(),
  grpcMaxConnectionAge: grpcInt.optional(),
  grpcMaxConnectionAgeGrace: grpcInt.optional(),
  grpcMaxReceiveMessageSize: grpcMessageSize.optional(),
  grpcMaxSendMessageSize: grpcMessageSize.optional(),
  // Triton lowercases the value before comparing.
  grpcInferResponseCompressionLevel: z
    .string()
    .transform((v) => v.toLowerCase())
    .pipe(
      z.enum(GRPC_COMPRESSION_LEVELS as unknown as [GrpcCompressionLevel, ...GrpcCompressionLevel[]], {
        error: "expected none, low, medium or high",
      }),
    )
    .optional(),
  grpcInferAllocationPoolSize: grpcInt.optional(),
  httpThreadCount: z.coerce
    .number({ error: "expected a whole number" })
    .int("expected a whole number")
    .min(1, `expected a number in the range 1 to ${MAX_HTTP_THREAD_COUNT}`)
    .max(MAX_HTTP_THREAD_COUNT, `expected a number in the range 1 to ${MAX_HTTP_THREAD_COUNT}`)
    .optional(),
  grpcInferThreadCount: z.coerce
    .number({ error: "expected a whole number" })
    .int("expected a whole number")
    .min(2, "expected a number in the range 2 to 128")
    .max(128, "expected a number in the range 2 to 128")
    .optional(),
  httpRestrictedApi: z.array(z.string()),
  metricsConfig: z.array(z.string()),
  grpcRestrictedProtocol: z.array(z.string()),
  grpcUseSsl: flag.optional(),
  grpcUseSslMutual: flag.optional(),
  grpcServerCert: z.string().min(1, "expected a PEM file").optional(),
  grpcServerKey: z.string().min(1, "expected a PEM file").optional(),
  grpcRootCert: z.string().min(1, "expected a PEM file").optional(),
  httpSslCert: z.string().min(1, "expected a PEM file").optional(),
  httpSslKey: z.string().min(1, "expected a PEM file").optional(),
  httpCorsAllowOrigin: z.array(z.string()),
  httpCorsAllowHeaders: z.array(z.string()),
  httpCorsMaxAge: corsMaxAge.optional(),
  httpCorsAllowCredentials: flag.optional(),
  gpuExecutionProvider: z.enum(GPU_EXECUTION_PROVIDERS as [GpuExecutionProvider, ...GpuExecutionProvider[]], {
    error: "expected auto, webgpu or cuda",
  }),
});

const FLAG_OF: Readonly<Record<string, string>> = {
  modelRepository: "--model-repository",
  httpPort: "--http-port",
  grpcPort: "--grpc-port",
  grpcAddress: "--grpc-address",
  metricsPort: "--metrics-port",
  metricsConfig: "--metrics-config",
  httpAddress: "--http-address",
  modelControlMode: "--model-control-mode",
  repositoryPollSecs: "--repository-poll-secs",
  loadModel: "--load-model",
  strictReadiness: "--strict-readiness",
  httpMaxInputSize: "--http-max-input-size",
  httpHeaderTimeoutMs: "--http-header-timeout-ms",
  httpRequestTimeoutMs: "--http-request-timeout-ms",
  httpSendTimeoutMs: "--http-send-timeout-ms",
  httpMaxConnections: "--http-max-connections",
  httpMaxBufferedBytes: "--http-max-buffered-bytes",
  maxPendingRequests: "--max-pending-requests",
  maxBytesTensorElements: "--max-bytes-tensor-elements",
  disableAutoCompleteConfig: "--disable-auto-complete-config",
  exitOnError: "--exit-on-error",
  logVerbose: "--log-verbose",
  allowHttp: "--allow-http",
  allowMetrics: "--allow-metrics",
  allowGrpc: "--allow-grpc",
  grpcKeepaliveTime: "--grpc-keepalive-time",
  grpcKeepaliveTimeout: "--grpc-keepalive-timeout",
  grpcKeepalivePermitWithoutCalls: "--grpc-keepalive-permit-without-calls",
  grpcHttp2MaxPingsWithoutData: "--grpc-http2-max-pings-without-data",
  grpcHttp2MinRecvPingIntervalWithoutData: "--grpc-http2-min-recv-ping-interval-without-data",
  grpcHttp2MaxPingStrikes: "--grpc-http2-max-ping-strikes",
  grpcMaxConnectionAge: "--grpc-max-connection-age",
  grpcMaxConnectionAgeGrace: "--grpc-max-connection-age-grace",
  grpcMaxReceiveMessageSize: "--grpc-max-receive-message-size",
  grpcMaxSendMessageSize: "--grpc-max-send-message-size",
  grpcInferResponseCompressionLevel: "--grpc-infer-response-compression-level",
  grpcInferAllocationPoolSize: "--grpc-infer-allocation-pool-size",
  grpcInferThreadCount: "--grpc-infer-thread-count",
  httpThreadCount: "--http-thread-count",
  gpuExecutionProvider: "--gpu-execution-provider",
  grpcUseSsl: "--grpc-use-ssl",
  grpcUseSslMutual: "--grpc-use-ssl-mutual",
  grpcServerCert: "--grpc-server-cert",
  grpcServerKey: "--grpc-server-key",
  grpcRootCert: "--grpc-root-cert",
  httpSslCert: "--http-ssl-cert",
  httpSslKey: "--http-ssl-key",
  httpCorsAllowOrigin: "--http-cors-allow-origin",
  httpCorsAllowHeaders: "--http-cors-allow-headers",
  httpCorsMaxAge: "--http-cors-max-age",
  httpCorsAllowCredentials: "--http-cors-allow-credentials",
};

/** How CORS errors name their settings on the command line. */
const CORS_FLAGS: CorsSettingNames = {
  allowOrigins: "--http-cors-allow-origin",
  allowHeaders: "--http-cors-allow-headers",
  maxAgeSecs: "--http-cors-max-age",
  allowCredentials: "--http-cors-allow-credentials",
};

const collect = (value: string, previous: string[]) => [...previous, value];

function createProgram(): Command {
  return new Command("tbench-server")
    .description("A Triton-compatible inference server for ONNX models (KServe v2 HTTP API)")
    .version("0.1.0")
    .requiredOption("--model-repository <dir>", "model repository directory")
    .option("--http-port <port>", "HTTP port (0: any free port)", String(DEFAULT_HTTP_PORT))
    .option("--grpc-port <port>", "gRPC port (0: any free port)", String(DEFAULT_GRPC_PORT))
    .option("--grpc-address <address>", "address the gRPC endpoint binds (default: --http-address)")
    .option(
      "--metrics-port <port>",
      "Prometheus metrics port (0: any free port)",
      String(DEFAULT_METRICS_PORT),
    )
    .option(
      "--metrics-config <setting=value>",
      "latency metrics: summary_latencies=true, counter_latencies=false, summary_quantiles=<q>:<err>,... (repeatable)",
      collect,
      [] as string[],
    )
    .option("--http-address <address>", "address the HTTP and metrics endpoints bind", "127.0.0.1")
    .option("--model-control-mode <mode>", "none, poll or explicit", "none")
    .option("--repository-poll-secs <seconds>", "poll mode: seconds between repository scans", "15")
    .option(
      "--load-model <name>",
      "model to load at startup in explicit mode (repeatable; * for all)",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .addOption(
      new Option("--strict-readiness [bool]", "ready only when every startup model is ready").default("true"),
    )
    .option(
      "--http-max-input-size <bytes>",
      "largest request body in bytes",
      String(DEFAULT_HTTP_MAX_INPUT_SIZE),
    )
    .option(
      "--http-header-timeout-ms <ms>",
      "time for a request's headers to arrive before a 408 (0: no limit)",
      String(DEFAULT_HTTP_HEADER_TIMEOUT_MS),
    )
    .option(
      "--http-request-timeout-ms <ms>",
      "time for a whole request, headers and body, to arrive before a 408 (0: no limit)",
      String(DEFAULT_HTTP_REQUEST_TIMEOUT_MS),
    )
    .option(
      "--http-send-timeout-ms <ms>",
      "time an answer may wait on a client that does not read it before the connection is cut (0: no limit)",
      String(DEFAULT_HTTP_SEND_TIMEOUT_MS),
    )
    .option(
      "--http-max-connections <n>",
      "most open HTTP connections; one past it is closed at once, unanswered (0: no limit)",
      "0",
    )
    .option(
      "--http-max-buffered-bytes <bytes>",
      "most bytes held for HTTP request bodies and unsent answers, all connections together; a body past " +
        "it gets 503 (default: an eighth of the machine's memory, at least twice --http-max-input-size)",
    )
    .option(
      "--max-pending-requests <n>",
      "most requests queued per model version; past it a request gets 503 (0: no limit)",
      String(DEFAULT_MAX_PENDING_REQUESTS),
    )
    .option(
      "--max-bytes-tensor-elements <n>",
      "most elements one BYTES input of a request may have (one string each in the worker)",
      String(DEFAULT_MAX_BYTES_TENSOR_ELEMENTS),
    )
    .option("--disable-auto-complete-config", "do not complete configs from the ONNX models", false)
    .addOption(
      new Option(
        "--exit-on-error [bool]",
        "exit when a startup model fails to load (Triton defaults to true)",
      ).default("false"),
    )
    .addOption(new Option("--log-verbose [level]", "verbose logging level (0: off)").default("0"))
    .addOption(new Option("--allow-http [bool]", "serve the HTTP API").default("true"))
    .addOption(new Option("--allow-metrics [bool]", "serve Prometheus metrics").default("true"))
    .addOption(new Option("--allow-grpc [bool]", "serve the gRPC API").default("true"))
    .option(
      "--grpc-keepalive-time <ms>",
      `ms between the server's keepalive pings (default ${GRPC_SETTING_DEFAULTS.keepaliveTimeMs})`,
    )
    .option(
      "--grpc-keepalive-timeout <ms>",
      `ms to wait for a keepalive ping's acknowledgement (default ${GRPC_SETTING_DEFAULTS.keepaliveTimeoutMs})`,
    )
    .option(
      "--grpc-keepalive-permit-without-calls [bool]",
      "Triton's flag, accepted; no effect on grpc-js (default false)",
    )
    .option(
      "--grpc-http2-max-pings-without-data <n>",
      "Triton's flag, accepted; no effect on grpc-js (default 2)",
    )
    .option(
      "--grpc-http2-min-recv-ping-interval-without-data <ms>",
      "Triton's flag, accepted; no effect on grpc-js (default 300000)",
    )
    .option(
      "--grpc-http2-max-ping-strikes <n>",
      "Triton's flag, accepted; no effect on grpc-js, which tolerates every ping (default 2)",
    )
    .option("--grpc-max-connection-age <ms>", "most ms a connection may live (default: unlimited)")
    .option(
      "--grpc-max-connection-age-grace <ms>",
      "ms calls may go on after the connection's max age (default: unlimited)",
    )
    .option(
      "--grpc-max-receive-message-size <bytes>",
      "largest gRPC request message in bytes; a larger one is answered RESOURCE_EXHAUSTED before it is read " +
        `whole (default ${DEFAULT_GRPC_MAX_MESSAGE_BYTES}; Triton: INT32_MAX, no flag)`,
    )
    .option(
      "--grpc-max-send-message-size <bytes>",
      "largest gRPC response message in bytes; a larger infer response is answered RESOURCE_EXHAUSTED " +
        `naming its model (default ${DEFAULT_GRPC_MAX_MESSAGE_BYTES}; Triton: INT32_MAX, no flag)`,
    )
    .option(
      "--grpc-infer-response-compression-level <level>",
      "none, low, medium or high: Triton's flag, accepted; grpc-js sends responses uncompressed (default none)",
    )
    .option(
      "--grpc-infer-allocation-pool-size <n>",
      "Triton's flag, accepted; no effect (no per-request state pool here)",
    )
    .option(
      "--http-thread-count <n>",
      `threads serving HTTP, 1 to ${MAX_HTTP_THREAD_COUNT}, all feeding one core (default 1; Triton's is 8 C++ ` +
        "threads, here each extra thread is a V8 isolate and a message hop per request: see the README)",
    )
    .option(
      "--grpc-infer-thread-count <n>",
      "Triton's flag (2 to 128), accepted; no effect (one event loop serves gRPC)",
    )
    .option(
      "--http-restricted-api <apis:key=value>",
      "serve these API groups (comma-separated: health, metadata, inference, shared-memory, model-config, " +
        "model-repository, statistics, trace, logging) only to requests with header <key>: <value>; 403 " +
        "otherwise (repeatable)",
      collect,
      [] as string[],
    )
    .option(
      "--grpc-restricted-protocol <protocols:key=value>",
      "serve these RPC groups (as --http-restricted-api) only to calls with metadata " +
        "triton-grpc-protocol-<key>: <value>; UNAVAILABLE otherwise (repeatable)",
      collect,
      [] as string[],
    )
    .option("--grpc-use-ssl [bool]", "serve gRPC over TLS (needs --grpc-server-cert and --grpc-server-key)")
    .option(
      "--grpc-use-ssl-mutual [bool]",
      "serve gRPC over TLS and require client certificates signed by --grpc-root-cert; as in Triton, " +
        "giving it turns TLS on",
    )
    .option("--grpc-server-cert <file>", "PEM certificate chain of the gRPC endpoint (with TLS)")
    .option("--grpc-server-key <file>", "PEM private key of the gRPC endpoint (with TLS)")
    .option("--grpc-root-cert <file>", "PEM CA certificates that verify client certificates (mutual TLS)")
    .option(
      "--http-ssl-cert <file>",
      "serve HTTPS with this PEM certificate chain (ours; Triton has no HTTP TLS)",
    )
    .option("--http-ssl-key <file>", "PEM private key of --http-ssl-cert")
    .option(
      "--http-cors-allow-origin <origin>",
      "let web pages from this origin (scheme://host[:port], http or https) call the HTTP API, or * for any " +
        "origin; repeatable (default: none, CORS off; ours, Triton has no CORS)",
      collect,
      [] as string[],
    )
    .option(
      "--http-cors-allow-headers <names>",
      `request headers pages may send, comma-separated, besides ${DEFAULT_CORS_ALLOW_HEADERS.join(", ")} and ` +
        "the --http-restricted-api keys; repeatable",
      collect,
      [] as string[],
    )
    .option(
      "--http-cors-max-age <seconds>",
      `how long browsers may reuse a preflight's answer, 0 to ${MAX_CORS_MAX_AGE_SECS} (default ${DEFAULT_CORS_MAX_AGE_SECS})`,
    )
    .option(
      "--http-cors-allow-credentials [bool]",
      "let pages send cookies and HTTP authentication (exact origins only, never with *; default false)",
    )
    .option(
      "--gpu-execution-provider <provider>",
      "what KIND_GPU instances run on: auto (CUDA if installed, else WebGPU), webgpu or cuda; CPU when none starts",
      DEFAULT_GPU_EXECUTION_PROVIDER,
    )
    .exitOverride()
    .configureOutput({ writeErr: () => {}, outputError: () => {} });
}

/** The gRPC endpoint settings the command line names; undefined when it names none. */
function grpcSettingsOf(a: z.infer<typeof argsSchema>): GrpcServerSettings | undefined {
  const entries: [keyof GrpcServerSettings, unknown][] = [
    ["keepaliveTimeMs", a.grpcKeepaliveTime],
    ["keepaliveTimeoutMs", a.grpcKeepaliveTimeout],
    ["keepalivePermitWithoutCalls", a.grpcKeepalivePermitWithoutCalls],
    ["http2MaxPingsWithoutData", a.grpcHttp2MaxPingsWithoutData],
    ["http2MinRecvPingIntervalWithoutDataMs", a.grpcHttp2MinRecvPingIntervalWithoutData],
    ["http2MaxPingStrikes", a.grpcHttp2MaxPingStrikes],
    ["maxConnectionAgeMs", a.grpcMaxConnectionAge],
    ["maxConnectionAgeGraceMs", a.grpcMaxConnectionAgeGrace],
    ["maxReceiveMessageBytes", a.grpcMaxReceiveMessageSize],
    ["maxSendMessageBytes", a.grpcMaxSendMessageSize],
    ["inferResponseCompressionLevel", a.grpcInferResponseCompressionLevel],
  ];
  const given = entries.filter(([, value]) => value !== undefined);
  return given.length > 0 ? (Object.freeze(Object.fromEntries(given)) as GrpcServerSettings) : undefined;
}

/** Reads one PEM file a flag names; an unreadable file is a usage error naming both. */
function readPem(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new CliUsageError(
      `${flag} '${path}': cannot read the file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
}

/**
 * The gRPC endpoint's TLS from Triton's flags, or undefined for plaintext. As Triton: giving
 * --grpc-use-ssl-mutual (whatever its value) turns TLS on, and the file flags alone do nothing. Unlike
 * Triton, which starts with an empty certificate when a file is missing, a missing file is an error here.
 */
function grpcTlsOf(a: z.infer<typeof argsSchema>): GrpcTlsOptions | undefined {
  const useSsl = a.grpcUseSsl === true || a.grpcUseSslMutual !== undefined;
  if (!useSsl) return undefined;
  const mutual = a.grpcUseSslMutual === true;
  const using = mutual ? "--grpc-use-ssl-mutual" : "--grpc-use-ssl";
  if (a.grpcServerCert === undefined || a.grpcServerKey === undefined)
    throw new CliUsageError(`${using} needs --grpc-server-cert and --grpc-server-key (PEM files)`);
  if (mutual && a.grpcRootCert === undefined)
    throw new CliUsageError(
      "--grpc-use-ssl-mutual needs --grpc-root-cert (the CA certificates that verify client certificates)",
    );
  return Object.freeze({
    serverCert: readPem("--grpc-server-cert", a.grpcServerCert),
    serverKey: readPem("--grpc-server-key", a.grpcServerKey),
    ...(a.grpcRootCert !== undefined ? { rootCert: readPem("--grpc-root-cert", a.grpcRootCert) } : {}),
    mutual,
  });
}

/**
 * The CORS settings of the --http-cors-* flags, or undefined when no origin is given (CORS off). The other
 * flags without an origin would do nothing: refused, so that a mistyped command line does not pass.
 */
function corsOf(a: z.infer<typeof argsSchema>): HttpCorsOptions | undefined {
  const headers: string[] = [];
  for (const list of a.httpCorsAllowHeaders) {
    const names = list.split(",").map((name) => name.trim());
    if (names.some((name) => name === ""))
      throw new CliUsageError(
        `invalid --http-cors-allow-headers ${shownValue(list)}: expected header names separated by commas`,
      );
    headers.push(...names);
  }
  if (a.httpCorsAllowOrigin.length === 0) {
    const needless =
      headers.length > 0
        ? "--http-cors-allow-headers"
        : a.httpCorsMaxAge !== undefined
          ? "--http-cors-max-age"
          : a.httpCorsAllowCredentials === true
            ? "--http-cors-allow-credentials"
            : undefined;
    if (needless !== undefined)
      throw new CliUsageError(`${needless} needs --http-cors-allow-origin (CORS is off without an origin)`);
    return undefined;
  }
  try {
    return normalizeCorsOptions(
      {
        allowOrigins: a.httpCorsAllowOrigin,
        allowHeaders: headers,
        ...(a.httpCorsMaxAge !== undefined ? { maxAgeSecs: a.httpCorsMaxAge } : {}),
        ...(a.httpCorsAllowCredentials !== undefined ? { allowCredentials: a.httpCorsAllowCredentials } : {}),
      },
      CORS_FLAGS,
    );
  } catch (error) {
    if (error instanceof CorsConfigError) throw new CliUsageError(error.message);
    throw error;
  }
}

/** Parses `argv` (without node and script); `write` receives --help and --version text. */
export function parseServerArgs(argv: readonly string[], write: (text: string) => void): ServerArgs {
  const program = createProgram();
  program.configureOutput({ writeOut: write, writeErr: () => {}, outputError: () => {} });
  try {
    program.parse([...argv], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version") {
        return { options: undefined, logVerbose: 0 };
      }
      throw new CliUsageError(error.message.replace(/^error: /, ""));
    }
    throw error;
  }
  const parsed = argsSchema.safeParse(program.opts());
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0] ?? "");
    const given = (program.opts() as Record<string, unknown>)[key];
    throw new CliUsageError(`invalid ${FLAG_OF[key] ?? key} ${shownValue(given)}: ${issue.message}`);
  }
  const a = parsed.data;
  if (!a.allowHttp)
    throw new CliUsageError("--allow-http false is not supported: the HTTP API is the only front end");
  const logVerbose = a.logVerbose === true ? 1 : a.logVerbose;
  const grpcSettings = grpcSettingsOf(a);
  let httpRestrictedApis: RestrictedApis;
  let grpcRestrictedProtocols: RestrictedApis;
  try {
    httpRestrictedApis = parseRestrictions(a.httpRestrictedApi, "http-restricted-api", "api");
    grpcRestrictedProtocols = parseRestrictions(
      a.grpcRestrictedProtocol,
      "grpc-restricted-protocol",
      "protocol",
    );
  } catch (error) {
    if (error instanceof RestrictionFlagError) throw new CliUsageError(error.message);
    throw error;
  }
  let metricsConfig: MetricsConfig;
  try {
    metricsConfig = parseMetricsConfig(a.metricsConfig);
  } catch (error) {
    if (error instanceof MetricsConfigFlagError) throw new CliUsageError(error.message);
    throw error;
  }
  const httpCors = corsOf(a);
  const grpcTls = a.allowGrpc ? grpcTlsOf(a) : undefined;
  if ((a.httpSslCert === undefined) !== (a.httpSslKey === undefined))
    throw new CliUsageError("--http-ssl-cert and --http-ssl-key go together (HTTPS needs both PEM files)");
  const httpTls =
    a.httpSslCert !== undefined && a.httpSslKey !== undefined
      ? Object.freeze({
          cert: readPem("--http-ssl-cert", a.httpSslCert),
          key: readPem("--http-ssl-key", a.httpSslKey),
        })
      : undefined;
  return {
    logVerbose,
    options: Object.freeze({
      modelRepository: a.modelRepository,
      httpPort: a.httpPort,
      grpcPort: a.allowGrpc ? a.grpcPort : false,
      ...(a.grpcAddress !== undefined ? { grpcAddress: a.grpcAddress } : {}),
      ...(grpcSettings !== undefined ? { grpcSettings } : {}),
      ...(grpcTls !== undefined ? { grpcTls } : {}),
      ...(httpTls !== undefined ? { httpTls } : {}),
      ...(httpCors !== undefined ? { httpCors } : {}),
      ...(a.httpRestrictedApi.length > 0 ? { httpRestrictedApis } : {}),
      ...(a.grpcRestrictedProtocol.length > 0 ? { grpcRestrictedProtocols } : {}),
      metricsPort: a.allowMetrics ? a.metricsPort : false,
      ...(a.metricsConfig.length > 0 ? { metricsConfig } : {}),
      httpAddress: a.httpAddress,
      modelControlMode: a.modelControlMode,
      repositoryPollSecs: a.repositoryPollSecs,
      loadModels: a.loadModel,
      strictReadiness: a.strictReadiness,
      httpMaxInputSize: a.httpMaxInputSize,
      httpHeaderTimeoutMs: a.httpHeaderTimeoutMs,
      httpRequestTimeoutMs: a.httpRequestTimeoutMs,
      httpSendTimeoutMs: a.httpSendTimeoutMs,
      httpMaxConnections: a.httpMaxConnections,
      ...(a.httpMaxBufferedBytes !== undefined ? { httpMaxBufferedBytes: a.httpMaxBufferedBytes } : {}),
      ...(a.httpThreadCount !== undefined ? { httpThreadCount: a.httpThreadCount } : {}),
      maxPendingRequests: a.maxPendingRequests,
      maxBytesTensorElements: a.maxBytesTensorElements,
      disableAutoCompleteConfig: a.disableAutoCompleteConfig,
      exitOnError: a.exitOnError,
      gpuExecutionProvider: a.gpuExecutionProvider,
    }),
  };
}
