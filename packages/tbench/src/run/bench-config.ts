/**
 * What one tbench run is asked to do, as the engine (run-benchmark.ts) and tbench tune take it: cli/ makes
 * it from the flags (cli/bench-config.ts resolveBenchConfig), tune/ from a base config and a candidate.
 */
import type { RequestDistribution } from "../load/schedule.js";
import type { SequenceOptions } from "../load/sequence-manager.js";

/** The validated, defaulted, frozen configuration of one tbench run. Internal code trusts it. */
export interface BenchConfig {
  readonly model: string;
  readonly modelVersion: string | undefined;
  /** `http(s)://host:port` for HTTP; for gRPC `host:port` or a grpc-js target, as given (see parse-values). */
  readonly url: string;
  readonly protocol: "http" | "grpc";
  /** `--streaming`: one bidirectional ModelStreamInfer stream per context (gRPC only). */
  readonly streaming: boolean;
  /** `--grpc-compression-algorithm`: compression of gRPC requests. */
  readonly grpcCompression: "none" | "gzip" | "deflate";
  /** `--ssl-grpc-*`: TLS of the gRPC channel (PEM file paths; read once by the run), undefined for plaintext. */
  readonly grpcSsl: GrpcSslFiles | undefined;
  readonly verbosity: number;
  readonly workers: number;
  readonly seed: number;
  // load
  readonly mode: "concurrency" | "request_rate";
  readonly range: { readonly start: number; readonly end: number; readonly step: number };
  /** Explicit levels (library use, e.g. the demo's 1,2,4..32); overrides `range` when set. */
  readonly levels: readonly number[] | undefined;
  readonly requestIntervalsFile: string | undefined;
  readonly requestDistribution: RequestDistribution;
  readonly binarySearch: boolean;
  /** Asynchronous calls; a sequence model turns them on unless `--sync` was given (see `forcedSync`). */
  readonly async: boolean;
  /** `--sync` was given (perf_analyzer's forced_sync): a sequence model then keeps synchronous calls. */
  readonly forcedSync: boolean;
  readonly maxThreads: number;
  // measurement
  readonly measurementMode: "time_windows" | "count_windows";
  readonly measurementIntervalMs: number;
  readonly measurementRequestCount: number;
  readonly stabilityPercent: number;
  readonly maxTrials: number;
  readonly percentile: number | undefined;
  readonly latencyThresholdMs: number;
  readonly warmupRequestCount: number;
  readonly requestCount: number;
  readonly maxErrorRate: number;
  readonly stopOnError: boolean;
  /** perf_analyzer's sequence options, used when the model is a sequence model. */
  readonly sequence: SequenceOptions;
  // input data
  readonly batchSize: number;
  readonly shapes: Readonly<Record<string, readonly number[]>>;
  readonly inputData: "zero" | "random" | readonly string[];
  readonly stringLength: number;
  readonly stringData: string | undefined;
  readonly inputTensorFormat: "binary" | "json";
  readonly outputTensorFormat: "binary" | "json";
  readonly headers: Readonly<Record<string, string>>;
  // metrics and reports
  readonly collectMetrics: boolean;
  readonly metricsUrl: string;
  readonly metricsIntervalMs: number;
  readonly csvFile: string | undefined;
  readonly verboseCsv: boolean;
  readonly profileExportFile: string | undefined;
  readonly jsonFile: string | undefined;
}

/** `--ssl-grpc-use-ssl` and its PEM files (perf_analyzer's names). */
export interface GrpcSslFiles {
  readonly rootCertificationsFile: string | undefined;
  readonly privateKeyFile: string | undefined;
  readonly certificateChainFile: string | undefined;
}
