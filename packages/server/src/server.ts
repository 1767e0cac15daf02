/**
 * startServer: the whole tbench-server in one call. Creates the inference core (or uses an injected one),
 * then the HTTP front end and the metrics endpoint; close() stops accepting, finishes what is in flight and
 * closes the core, in that order.
 */
import { DEFAULT_MAX_BYTES_TENSOR_ELEMENTS } from "./core/bytes-data.js";
import { createConsoleLogger } from "./core/logger.js";
import { checkRestrictedApis, type RestrictedApis } from "./core/restricted-api.js";
import type { InferenceCore } from "./core/types.js";
import { createGrpcFrontEnd, type GrpcFrontEnd } from "./grpc/grpc-front-end.js";
import type { GrpcServerSettings } from "./grpc/grpc-server-settings.js";
import type { GrpcTlsOptions } from "./grpc/grpc-tls.js";
import type { HttpCorsOptions } from "./http/cors.js";
import type { HttpFrontEnd } from "./http/http-server.js";
import type { HttpTlsOptions } from "./http/http-tls.js";
import { startHttpFrontEnd } from "./http/threads/http-threads.js";
import { createInferenceCore, type InferenceCoreOptions } from "./lifecycle/create-inference-core.js";
import { createLatencySummaries } from "./metrics/latency-summaries.js";
import { DEFAULT_METRICS_CONFIG, type MetricsConfig } from "./metrics/metrics-config.js";
import { createMetricsServer, type MetricsServer } from "./metrics/metrics-server.js";

/** Default HTTP port (Triton's). */
export const DEFAULT_HTTP_PORT = 8000;
/** Default gRPC port (Triton's). */
export const DEFAULT_GRPC_PORT = 8001;
/** Default metrics port (Triton's). */
export const DEFAULT_METRICS_PORT = 8002;
/** Default --http-max-input-size: 64 MiB, as Triton. */
export const DEFAULT_HTTP_MAX_INPUT_SIZE = 64 * 1024 * 1024;
export { DEFAULT_MAX_BYTES_TENSOR_ELEMENTS };

/** Options of startServer: the core's options plus the front ends'. */
export interface ServerOptions extends InferenceCoreOptions {
  /** Default 8000; 0 picks a free port. */
  readonly httpPort?: number;
  /** Default "127.0.0.1"; "0.0.0.0" only when asked. Also the metrics endpoint's address. */
  readonly httpAddress?: string;
  /** Default 8002; 0 picks a free port; false serves no metrics. */
  readonly metricsPort?: number | false;
  /**
   * The gRPC front end's port (0 picks a free port); undefined or false serves no gRPC. The command line
   * passes Triton's 8001 unless told otherwise.
   */
  readonly grpcPort?: number | false;
  /** Default: the HTTP address. */
  readonly grpcAddress?: string;
  /** Keepalive, connection age and response compression of the gRPC endpoint (Triton's names and defaults). */
  readonly grpcSettings?: GrpcServerSettings;
  /** HTTPS for the HTTP endpoint (tbench-server's `--http-ssl-cert` / `--http-ssl-key`; Triton has none). */
  readonly httpTls?: HttpTlsOptions;
  /** `--http-cors-*` (ours; Triton has none): let web pages on these origins call the HTTP API. Default: off. */
  readonly httpCors?: HttpCorsOptions;
  /** TLS of the gRPC endpoint (`--grpc-use-ssl`, `--grpc-use-ssl-mutual`, ...); plaintext when absent. */
  readonly grpcTls?: GrpcTlsOptions;
  /**
   * `--http-restricted-api`: groups of HTTP endpoints (Triton's categories) served only to requests that
   * carry the header `key` with `value`; others get 403. Default: none restricted.
   */
  readonly httpRestrictedApis?: RestrictedApis;
  /**
   * `--grpc-restricted-protocol`: groups of RPCs served only to calls whose metadata holds
   * `triton-grpc-protocol-<key>` with `value`; others end UNAVAILABLE. Default: none restricted.
   */
  readonly grpcRestrictedProtocols?: RestrictedApis;
  /** Largest request body in bytes, before and after decompression. Default 64 MiB. */
  readonly httpMaxInputSize?: number;
  /** Time for a request's header block to arrive, in ms (0: none). Default 30 s; 408 when exceeded. */
  readonly httpHeaderTimeoutMs?: number;
  /** Time for a whole request, headers and body, to arrive, in ms (0: none). Default 120 s; 408. */
  readonly httpRequestTimeoutMs?: number;
  /** Time an answer may make no progress on a client that does not read, in ms (0: none). Default 30 s. */
  readonly httpSendTimeoutMs?: number;
  /** Most open HTTP connections (node:http maxConnections); one past it is closed unanswered. 0: none (default). */
  readonly httpMaxConnections?: number;
  /**
   * `--http-max-buffered-bytes`: most bytes held for HTTP request bodies and unsent answers, server-wide;
   * a body past it gets 503. Default: an eighth of os.totalmem(), at least twice httpMaxInputSize.
   */
  readonly httpMaxBufferedBytes?: number;
  /**
   * `--http-thread-count`: threads serving HTTP, 1 to 64, all feeding this server's one core. Default 1
   * (Triton's is 8 C++ threads; here each extra thread is a V8 isolate and a message hop per call). Each
   * thread applies httpMaxConnections to its own connections.
   */
  readonly httpThreadCount?: number;
  /**
   * Which per-model latency families the metrics endpoint publishes (`--metrics-config`): Triton's
   * counters by default; summaries with quantiles when asked. Summaries need the core this server creates.
   */
  readonly metricsConfig?: MetricsConfig;
  /** A core to serve instead of creating one from the repository (tests); the server closes it too. */
  readonly core?: InferenceCore & { close?: () => Promise<void> };
}

/** A running server. */
export interface RunningServer {
  /** `http://address:port` (`https://` with httpTls) of the KServe v2 HTTP API. */
  readonly httpUrl: string;
  /** `host:port` of the gRPC API, or undefined when gRPC is off. */
  readonly grpcAddress: string | undefined;
  /** `http://address:port/metrics`, or undefined when metrics are off. */
  readonly metricsUrl: string | undefined;
  readonly core: InferenceCore;
  /**
   * Stops accepting on every front end at once, lets in-flight requests (HTTP requests, gRPC unary calls,
   * requests sent on open gRPC streams) finish, then closes the core. Each front end cancels what is still
   * open after its 30 s grace period. Idempotent.
   */
  close(): Promise<void>;
}

/** Starts the core and the front ends; rejects (and releases what it started) when any part fails. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const logger = options.logger ?? createConsoleLogger();
  const address = options.httpAddress ?? "127.0.0.1";
  checkRestrictedApis(options.httpRestrictedApis ?? {}, "httpRestrictedApis");
  checkRestrictedApis(options.grpcRestrictedProtocols ?? {}, "grpcRestrictedProtocols");
  const metricsConfig = options.metricsConfig ?? DEFAULT_METRICS_CONFIG;
  const summaries =
    metricsConfig.summaryLatencies && options.metricsPort !== false
      ? createLatencySummaries(metricsConfig.summaryQuantiles)
      : undefined;
  const core =
    options.core ??
    (await createInferenceCore({
      ...options,
      logger,
      ...(summaries !== undefined ? { latencyObserver: summaries } : {}),
    }));
  let http: HttpFrontEnd | undefined;
  let metrics: MetricsServer | undefined;
  let grpc: GrpcFrontEnd | undefined;
  try {
    http = await startHttpFrontEnd({
      core,
      ...(options.httpThreadCount !== undefined ? { threadCount: options.httpThreadCount } : {}),
      port: options.httpPort ?? DEFAULT_HTTP_PORT,
      address,
      maxInputSize: options.httpMaxInputSize ?? DEFAULT_HTTP_MAX_INPUT_SIZE,
      maxBytesTensorElements: options.maxBytesTensorElements ?? DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
      logger,
      ...(options.clock !== undefined ? { clock: options.clock } : {}),
      ...(options.httpHeaderTimeoutMs !== undefined ? { headerTimeoutMs: options.httpHeaderTimeoutMs } : {}),
      ...(options.httpRequestTimeoutMs !== undefined
        ? { requestTimeoutMs: options.httpRequestTimeoutMs }
        : {}),
      ...(options.httpSendTimeoutMs !== undefined ? { sendTimeoutMs: options.httpSendTimeoutMs } : {}),
      ...(options.httpMaxConnections !== undefined ? { maxConnections: options.httpMaxConnections } : {}),
      ...(options.httpMaxBufferedBytes !== undefined
        ? { maxBufferedBytes: options.httpMaxBufferedBytes }
        : {}),
      ...(options.httpRestrictedApis !== undefined ? { restrictedApis: options.httpRestrictedApis } : {}),
      ...(options.httpTls !== undefined ? { tls: options.httpTls } : {}),
      ...(options.httpCors !== undefined ? { cors: options.httpCors } : {}),
    });
    const metricsPort = options.metricsPort ?? DEFAULT_METRICS_PORT;
    if (metricsPort !== false)
      metrics = await createMetricsServer({
        core,
        port: metricsPort,
        address,
        logger,
        latency: { counterLatencies: metricsConfig.counterLatencies, summaries },
      });
    if (options.grpcPort !== undefined && options.grpcPort !== false) {
      grpc = await createGrpcFrontEnd({
        core,
        port: options.grpcPort,
        address: options.grpcAddress ?? address,
        logger,
        maxBytesTensorElements: options.maxBytesTensorElements ?? DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
        ...(options.grpcSettings !== undefined ? { settings: options.grpcSettings } : {}),
        ...(options.grpcRestrictedProtocols !== undefined
          ? { restrictedProtocols: options.grpcRestrictedProtocols }
          : {}),
        ...(options.grpcTls !== undefined ? { tls: options.grpcTls } : {}),
      });
    }
  } catch (error) {
    await http?.close();
    await grpc?.close();
    await metrics?.close();
    await (core as { close?: () => Promise<void> }).close?.();
    throw error;
  }
  const httpFrontEnd = http;
  const grpcFrontEnd = grpc;
  let closed: Promise<void> | undefined;
  return {
    httpUrl: httpFrontEnd.url,
    grpcAddress: grpcFrontEnd?.address,
    metricsUrl: metrics?.url,
    core,
    close() {
      closed ??= (async () => {
        await Promise.all([httpFrontEnd.close(), grpcFrontEnd?.close(), metrics?.close()]);
        await (core as { close?: () => Promise<void> }).close?.();
      })();
      return closed;
    },
  };
}
