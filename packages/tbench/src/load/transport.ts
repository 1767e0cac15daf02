import {
  createGrpcClient,
  createHttpClient,
  type GrpcInferenceClient,
  type InferenceClient,
} from "@tbench/client";

/** PEM text of the gRPC channel's TLS (read from the `--ssl-grpc-*` files once, by the main thread). */
export interface GrpcTlsPem {
  ca?: string;
  cert?: string;
  key?: string;
}

/** How to reach the server; crosses to load workers by structured clone, so plain data only. */
export interface TransportSpec {
  protocol: "http" | "grpc";
  /** `http(s)://host:port` for HTTP; `host:port`, `grpc(s)://host:port` or a grpc-js target for gRPC. */
  url: string;
  /** HTTP headers, or gRPC metadata, sent with every call (`-H`). */
  headers: Record<string, string>;
  /** gRPC only: request compression. */
  compression: "none" | "gzip" | "deflate";
  /** gRPC only: TLS (`--ssl-grpc-use-ssl`), undefined for a plaintext channel. */
  tls: GrpcTlsPem | undefined;
}

/** Per-client settings that differ between the load's client and the one that reads metadata and statistics. */
export interface TransportClientOptions {
  /** HTTP keep-alive connections (gRPC multiplexes every call over its channel). */
  connections: number;
  maxRetries: number;
}

/**
 * The `@tbench/client` client of a transport: the HTTP client, or the gRPC client (whose channel is secure
 * when TLS is given, whatever the URL's form: perf_analyzer's `--ssl-grpc-use-ssl` with `-u host:port`).
 */
export function createTransportClient(spec: TransportSpec, options: TransportClientOptions): InferenceClient {
  if (spec.protocol === "http") {
    // The wire engine: the client's own HTTP/1.1 pool, less CPU per request than undici's Pool (see
    // @tbench/client's README); every engine error maps to the same client errors.
    return createHttpClient({
      url: spec.url,
      headers: spec.headers,
      connections: options.connections,
      maxRetries: options.maxRetries,
      engine: "wire",
    });
  }
  return createGrpcTransportClient(spec, options);
}

/** The gRPC client of a transport (the streaming sender needs its `stream()`). */
export function createGrpcTransportClient(
  spec: TransportSpec,
  options: Pick<TransportClientOptions, "maxRetries">,
): GrpcInferenceClient {
  return createGrpcClient({
    url: spec.url,
    headers: spec.headers,
    maxRetries: options.maxRetries,
    compression: spec.compression,
    ...(spec.tls !== undefined ? { tls: spec.tls } : {}),
  });
}
