/**
 * The one client interface. Both transports implement it (http/: createHttpClient, grpc/: createGrpcClient,
 * which adds streams), so application code and tbench depend on this interface only and never branch on
 * the transport.
 */
import type { ModelConfig } from "@tbench/proto";
import type { InferResult } from "./infer-result.js";
import type {
  LogSettings,
  LogSettingsUpdate,
  ModelMetadata,
  ModelStatistics,
  RepositoryIndexEntry,
  ServerMetadata,
  SharedMemoryRegion,
  SharedMemoryRegionStatus,
  TraceSettings,
  TraceSettingsUpdate,
} from "./result-types.js";
import type { InferRequest } from "./tensor-types.js";

/** Options of a single call. */
export interface CallOptions {
  /** Aborts the call; it then rejects with AbortedError whose `cause` is `signal.reason`. */
  signal?: AbortSignal;
  /** Deadline of the whole call (all attempts and waits between them), in ms; overrides the client's. */
  timeoutMs?: number;
  /** Extra headers (HTTP) or metadata (gRPC) for this call; they win over the client's. */
  headers?: Record<string, string>;
  /** Retries for this call; overrides the client's. On `infer`, a value > 0 opts in to retries. */
  maxRetries?: number;
}

/** Options of `loadModel`. */
export interface LoadModelOptions {
  /** A model configuration (JSON text, or an object that is serialised to JSON) used instead of the repository's. */
  config?: string | ModelConfig;
  /**
   * Model files to load from instead of the repository's directory, by path in the model directory with a
   * `file:` prefix (e.g. `file:1/model.onnx`); requires `config`. Sent base64-encoded.
   */
  files?: Record<string, Uint8Array>;
}

/** Options of `unloadModel`. */
export interface UnloadModelOptions {
  /** Also unload the models this one depends on (e.g. an ensemble's steps). */
  unloadDependents?: boolean;
}

/** Options of `repositoryIndex`. */
export interface RepositoryIndexOptions {
  /** Only list models that are ready. */
  readyOnly?: boolean;
}

/** An infer request encoded once, to be sent many times (what tbench uses to generate load). */
export interface PreparedInfer {
  /** The model the request is for. */
  readonly model: string;
  /** Size of the encoded (uncompressed) request body, in bytes. */
  readonly byteLength: number;
  /** Sends the encoded request; the same as `infer()` with the same arguments, without re-encoding. */
  send(options?: CallOptions): Promise<InferResult>;
}

/**
 * A KServe v2 / Triton inference client. Every call takes per-call {@link CallOptions} last and rejects with
 * an {@link InferenceError} subclass.
 */
export interface InferenceClient extends AsyncDisposable {
  /** Whether the server is live. Resolves false when the server answers "not live". */
  isServerLive(options?: CallOptions): Promise<boolean>;
  /** Whether the server is ready for inference. */
  isServerReady(options?: CallOptions): Promise<boolean>;
  /** Whether a model (version) is ready. False for an unknown model too. */
  isModelReady(model: string, version?: string, options?: CallOptions): Promise<boolean>;
  /** Server name, version and extensions. */
  serverMetadata(options?: CallOptions): Promise<ServerMetadata>;
  /** A model's name, versions, platform, inputs and outputs. */
  modelMetadata(model: string, version?: string, options?: CallOptions): Promise<ModelMetadata>;
  /** A model's configuration (Triton's ModelConfig as JSON). */
  modelConfig(model: string, version?: string, options?: CallOptions): Promise<ModelConfig>;
  /** Every model in the repository, loaded or not. */
  repositoryIndex(
    request?: RepositoryIndexOptions,
    options?: CallOptions,
  ): Promise<readonly RepositoryIndexEntry[]>;
  /** Loads or reloads a model (explicit model control mode). */
  loadModel(model: string, request?: LoadModelOptions, options?: CallOptions): Promise<void>;
  /** Unloads a model. */
  unloadModel(model: string, request?: UnloadModelOptions, options?: CallOptions): Promise<void>;
  /** Statistics of one model (version), or of all models when `model` is undefined. */
  modelStatistics(
    model?: string,
    version?: string,
    options?: CallOptions,
  ): Promise<readonly ModelStatistics[]>;
  /** Trace settings, global or of one model. */
  traceSettings(model?: string, options?: CallOptions): Promise<TraceSettings>;
  /** Changes trace settings (global, or of one model) and returns them as they now are. */
  updateTraceSettings(
    settings: TraceSettingsUpdate,
    model?: string,
    options?: CallOptions,
  ): Promise<TraceSettings>;
  /** Log settings. */
  logSettings(options?: CallOptions): Promise<LogSettings>;
  /** Changes log settings and returns them as they now are. */
  updateLogSettings(settings: LogSettingsUpdate, options?: CallOptions): Promise<LogSettings>;
  /** Registered system shared-memory regions (all, or the one named). */
  systemSharedMemoryStatus(
    region?: string,
    options?: CallOptions,
  ): Promise<readonly SharedMemoryRegionStatus[]>;
  /** Registers a system shared-memory region under `name`. */
  systemSharedMemoryRegister(name: string, region: SharedMemoryRegion, options?: CallOptions): Promise<void>;
  /** Unregisters one region, or all when `name` is undefined. */
  systemSharedMemoryUnregister(name?: string, options?: CallOptions): Promise<void>;
  /** Runs an inference. Not retried unless the caller opts in (see CallOptions.maxRetries). */
  infer(model: string, request: InferRequest, options?: CallOptions): Promise<InferResult>;
  /** Encodes a request once for repeated sends (load generation); validation happens here, once. */
  prepareInfer(model: string, request: InferRequest): PreparedInfer;
  /** Closes gracefully: new calls reject with ClientClosedError, calls in flight finish. Idempotent. */
  close(): Promise<void>;
  /** Closes at once: calls in flight reject with ClientClosedError (`cause` = `error`). Idempotent. */
  destroy(error?: Error): Promise<void>;
}
