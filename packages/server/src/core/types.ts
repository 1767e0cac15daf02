/**
 * The contract between the server's front ends (http/, grpc/) and its core (repository/, scheduler/,
 * instances/, ensemble/, stats/). Front ends decode the wire into an InferenceRequest, call
 * InferenceCore.infer, and encode the InferenceResponse; they never touch models or workers directly.
 * Every method that can fail rejects with ServerError.
 */
import type {
  Datatype,
  ModelConfig,
  ModelMetadata,
  RepositoryIndexEntry,
  ServerMetadata,
  TensorTypedArray,
} from "@tbench/proto";
import type { CancelSignal } from "./cancel-signal.js";

/**
 * BYTES tensor data in the binary tensor extension's form: `wire` holds every element as a 4-byte
 * little-endian length followed by its bytes, `count` says how many. One object per tensor, not per
 * element (core/bytes-data.ts builds, walks, splits and checks it).
 */
export interface BytesData {
  readonly count: number;
  readonly wire: Uint8Array;
}

/** Tensor data as the core holds it: a TypedArray for fixed-size types, BytesData for BYTES. */
export type TensorData = TensorTypedArray | BytesData;

/** A tensor of a request or response. `shape` includes the batch dimension where the model batches. */
export interface Tensor {
  readonly name: string;
  readonly datatype: Datatype;
  readonly shape: readonly number[];
  readonly data: TensorData;
}

/** Request-level and output-level parameters, as the v2 protocol carries them. */
export type Parameters = Readonly<Record<string, string | number | boolean>>;

/** One requested output. `classification` > 0 asks for the top-k classes (Triton's classification extension). */
export interface RequestedOutput {
  readonly name: string;
  readonly classification?: number;
  readonly parameters?: Parameters;
}

/**
 * A request's place in a sequence (Triton's sequence extension: the `sequence_id`, `sequence_start` and
 * `sequence_end` parameters). The id is a uint64 or a string; a string "5" and the number 5 are two
 * sequences, as in Triton. Models without sequence_batching ignore it.
 */
export interface SequenceFlags {
  readonly id: bigint | string;
  readonly start: boolean;
  readonly end: boolean;
}

export interface InferenceRequest {
  readonly model: string;
  /** Empty or undefined: the version the model's version policy makes current (the highest ready one). */
  readonly version?: string;
  /** Echoed in the response. */
  readonly id?: string;
  readonly inputs: readonly Tensor[];
  /** Undefined: every output of the model. */
  readonly outputs?: readonly RequestedOutput[];
  /** 0 or undefined: the model's default priority level. 1 is the highest. */
  readonly priority?: number;
  /** Queue timeout in microseconds (the request's `timeout` parameter); honoured when the config allows. */
  readonly timeoutUs?: number;
  readonly parameters?: Parameters;
  /** Set when the request carries any of the sequence parameters. */
  readonly sequence?: SequenceFlags;
  /** Aborted when the client goes away; the core drops the request if it has not run yet. An AbortSignal fits. */
  readonly signal?: CancelSignal;
}

export interface InferenceResponse {
  readonly model: string;
  readonly version: string;
  readonly id?: string;
  readonly outputs: readonly Tensor[];
  readonly parameters?: Parameters;
}

export type { ModelMetadata, RepositoryIndexEntry, ServerMetadata, TensorMetadata } from "@tbench/proto";

/** A duration statistic: how many and how long in total (Triton's StatisticDuration). */
export interface StatisticDuration {
  readonly count: number;
  readonly ns: number;
}

/**
 * Where the responses of one streamed request go (Triton's response callback): a decoupled model sends
 * zero, one or many responses, then says it is done; any other model sends exactly one, final. Calls stop
 * after `end` or `error`.
 */
export interface ResponseSink {
  /** One response; `final` when it is also the last (Triton's TRITONSERVER_RESPONSE_COMPLETE_FINAL). */
  response(response: InferenceResponse, final: boolean): void;
  /** No more responses (a flag-only final response): sent after the last non-final response. */
  end(): void;
  /** The request failed; nothing follows. */
  error(error: unknown): void;
}

/** Per model version statistics, with Triton's field names (statistics extension). */
export interface ModelStatistics {
  readonly name: string;
  readonly version: string;
  readonly last_inference: number;
  readonly inference_count: number;
  readonly execution_count: number;
  readonly inference_stats: {
    readonly success: StatisticDuration;
    readonly fail: StatisticDuration;
    readonly queue: StatisticDuration;
    readonly compute_input: StatisticDuration;
    readonly compute_infer: StatisticDuration;
    readonly compute_output: StatisticDuration;
    readonly cache_hit: StatisticDuration;
    readonly cache_miss: StatisticDuration;
  };
  /**
   * Per response index ("0", "1", ...) of a model's requests, for models that send several responses (a
   * decoupled model's backend reports them); empty for the others, as in Triton.
   */
  readonly response_stats: Readonly<Record<string, ResponseStatistics>>;
  readonly batch_stats: readonly {
    readonly batch_size: number;
    readonly compute_input: StatisticDuration;
    readonly compute_infer: StatisticDuration;
    readonly compute_output: StatisticDuration;
  }[];
  readonly memory_usage: readonly unknown[];
}

/** Triton's InferResponseStatistics: the responses sent at one index of their requests. */
export interface ResponseStatistics {
  readonly compute_infer: StatisticDuration;
  readonly compute_output: StatisticDuration;
  readonly success: StatisticDuration;
  readonly fail: StatisticDuration;
  readonly empty_response: StatisticDuration;
  readonly cancel: StatisticDuration;
}

/** What the front ends call. One implementation lives in the core; tests may provide fakes. */
export interface InferenceCore {
  serverMetadata(): ServerMetadata;
  isLive(): boolean;
  /** Ready: the server accepts requests and (with strict readiness) every model loaded at startup is ready. */
  isReady(): boolean;
  isModelReady(model: string, version?: string): boolean;
  /** Rejects NOT_FOUND / UNAVAILABLE with Triton's messages. */
  modelMetadata(model: string, version?: string): ModelMetadata;
  /** The model's complete configuration (after auto-complete), as parsed from config.pbtxt. */
  modelConfig(model: string, version?: string): ModelConfig;
  infer(request: InferenceRequest): Promise<InferenceResponse>;
  /**
   * Runs a request whose responses are streamed to `sink`: the only way to a decoupled model (infer rejects
   * those with DecoupledModelError), and one response then the end for any other.
   */
  inferStream(request: InferenceRequest, sink: ResponseSink): void;
  /** Whether the version serves many responses per request (`model_transaction_policy { decoupled }`). */
  isDecoupled(model: string, version?: string): boolean;
  /** Every model version when `model` is undefined. */
  modelStatistics(model?: string, version?: string): readonly ModelStatistics[];
  repositoryIndex(options?: { readyOnly?: boolean }): Promise<readonly RepositoryIndexEntry[]>;
  loadModel(
    model: string,
    options?: { config?: string; files?: Readonly<Record<string, Uint8Array>> },
  ): Promise<void>;
  unloadModel(model: string, options?: { unloadDependents?: boolean }): Promise<void>;
  /** What Prometheus metrics need beyond statistics, per model version. */
  metricsSnapshot(): readonly ModelMetricsSnapshot[];
}

/** Counters for metrics that statistics do not carry. */
export interface ModelMetricsSnapshot {
  readonly model: string;
  readonly version: string;
  /** Requests queued and not yet handed to an instance (nv_inference_pending_request_count). */
  readonly pendingRequests: number;
  /** Failed requests by Triton's reason label: REJECTED, CANCELED, BACKEND, OTHER. */
  readonly failuresByReason: Readonly<Record<string, number>>;
  /** Seconds the last load took (nv_model_load_duration_secs). */
  readonly loadDurationSecs: number;
}
