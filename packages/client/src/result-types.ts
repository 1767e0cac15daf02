/**
 * Typed results of the non-infer calls. Server JSON is checked against these shapes when it arrives
 * (http/response-schemas.ts), so a malformed answer fails at the call, with MalformedResponseError.
 * Field names are camelCase; trace and log settings keep Triton's setting names, which are the
 * protocol's own vocabulary (`log_verbose_level`, `trace_rate`).
 */
export type { ModelMetadata, RepositoryIndexEntry, ServerMetadata, TensorMetadata } from "@tbench/proto";

/** A cumulative count and duration. */
export interface DurationStatistic {
  readonly count: number;
  /** Total duration in nanoseconds. */
  readonly ns: number;
}

/** Aggregate inference statistics of a model version. */
export interface InferStatistics {
  readonly success: DurationStatistic;
  readonly fail: DurationStatistic;
  readonly queue: DurationStatistic;
  readonly computeInput: DurationStatistic;
  readonly computeInfer: DurationStatistic;
  readonly computeOutput: DurationStatistic;
  readonly cacheHit?: DurationStatistic;
  readonly cacheMiss?: DurationStatistic;
}

/** Statistics of executions at one batch size. */
export interface BatchStatistics {
  readonly batchSize: number;
  readonly computeInput: DurationStatistic;
  readonly computeInfer: DurationStatistic;
  readonly computeOutput: DurationStatistic;
}

/** Statistics of one model version (`GET /v2/models[/{m}[/versions/{v}]]/stats`). */
export interface ModelStatistics {
  readonly name: string;
  readonly version: string;
  /** Time of the last inference, milliseconds since the epoch (0: none yet). */
  readonly lastInference: number;
  /** Inferences, counting each batch element. */
  readonly inferenceCount: number;
  /** Model executions (a dynamic batch counts once). */
  readonly executionCount: number;
  readonly inferenceStats: InferStatistics;
  readonly batchStats: readonly BatchStatistics[];
}

/** A trace setting value: a string, or a list of strings (`trace_level`). */
export type TraceSettingValue = string | readonly string[];

/**
 * Trace settings (`/v2[/models/{m}]/trace/setting`), by Triton's setting names. Other names the server
 * reports are kept as they are.
 */
export interface TraceSettings {
  readonly trace_file?: string;
  readonly trace_level?: readonly string[];
  readonly trace_rate?: string;
  readonly trace_count?: string;
  readonly log_frequency?: string;
  readonly [setting: string]: TraceSettingValue | undefined;
}

/** Trace settings to change; `null` clears a setting (back to the global value, for a model). */
export type TraceSettingsUpdate = Record<string, TraceSettingValue | number | null>;

/** A log setting value. */
export type LogSettingValue = string | number | boolean;

/** Log settings (`/v2/logging`), by Triton's setting names. */
export interface LogSettings {
  readonly log_file?: string;
  readonly log_info?: boolean;
  readonly log_warnings?: boolean;
  readonly log_errors?: boolean;
  readonly log_verbose_level?: number;
  readonly log_format?: string;
  readonly [setting: string]: LogSettingValue | undefined;
}

/** Log settings to change; settings not named stay as they are. */
export type LogSettingsUpdate = Partial<Record<string, LogSettingValue>>;

/** One registered system shared-memory region. */
export interface SharedMemoryRegionStatus {
  readonly name: string;
  /** Key of the underlying memory object (e.g. the shm_open name). */
  readonly key: string;
  /** Offset of the region in the memory object, in bytes. */
  readonly offset: number;
  readonly byteSize: number;
}

/** A system shared-memory region to register. */
export interface SharedMemoryRegion {
  /** Key of the underlying memory object. */
  key: string;
  /** Size of the region in bytes. */
  byteSize: number;
  /** Offset of the region in the memory object, in bytes (default 0). */
  offset?: number;
}
