/**
 * The answers of the non-infer RPCs, decoded with @tbench/proto's generated code and turned into the same
 * typed results the HTTP transport returns (result-types.ts), so that callers never see the transport:
 * 64-bit counters as numbers, empty proto3 strings as absent fields where HTTP's JSON leaves them out, the
 * model configuration as HTTP's JSON form (int64 as strings, enums by name).
 */
import { DATATYPES, type Datatype, type inference as gen, inference, type ModelConfig } from "@tbench/proto";
import { MalformedResponseError } from "../errors.js";
import type {
  DurationStatistic,
  LogSettings,
  LogSettingValue,
  ModelMetadata,
  ModelStatistics,
  RepositoryIndexEntry,
  ServerMetadata,
  SharedMemoryRegionStatus,
  TensorMetadata,
  TraceSettings,
  TraceSettingValue,
} from "../result-types.js";

type Long = { toNumber(): number };
type IntLike = number | Long | null | undefined;

function num(value: IntLike): number {
  if (value === null || value === undefined) return 0;
  return typeof value === "number" ? value : value.toNumber();
}

/** A message type of the generated code: decode, and toObject for the configuration. */
interface Decoder<T> {
  decode(bytes: Uint8Array): T;
}

/** Decodes an answer; MalformedResponseError naming the call when it does not parse. */
export function decodeAnswer<T>(call: string, type: Decoder<T>, bytes: Buffer): T {
  try {
    return type.decode(bytes);
  } catch (error) {
    throw new MalformedResponseError(`${call}: the answer does not parse`, { cause: error });
  }
}

const DATATYPE_SET: ReadonlySet<string> = new Set(DATATYPES);

function tensor(t: gen.ModelMetadataResponse.TensorMetadata.$Properties, call: string): TensorMetadata {
  const datatype = t.datatype ?? "";
  if (!DATATYPE_SET.has(datatype)) {
    throw new MalformedResponseError(
      `${call}: tensor '${t.name}' has unknown datatype ${JSON.stringify(datatype)}`,
    );
  }
  return { name: t.name ?? "", datatype: datatype as Datatype, shape: (t.shape ?? []).map(num) };
}

export function serverMetadataOf(m: gen.ServerMetadataResponse): ServerMetadata {
  return { name: m.name, version: m.version, extensions: [...m.extensions] };
}

export function modelMetadataOf(m: gen.ModelMetadataResponse): ModelMetadata {
  return {
    name: m.name,
    versions: [...m.versions],
    platform: m.platform,
    inputs: m.inputs.map((t) => tensor(t, "modelMetadata")),
    outputs: m.outputs.map((t) => tensor(t, "modelMetadata")),
  };
}

/** The configuration as HTTP's JSON gives it (proto3 JSON mapping: int64 as strings, enums by name). */
export function modelConfigOf(m: gen.ModelConfigResponse): ModelConfig {
  const config = m.config ?? new inference.ModelConfig();
  return inference.ModelConfig.toObject(config as inference.ModelConfig, {
    longs: String,
    enums: String,
    bytes: String,
    json: true,
  }) as ModelConfig;
}

export function repositoryIndexOf(m: gen.RepositoryIndexResponse): RepositoryIndexEntry[] {
  return m.models.map((e) => {
    const entry: { -readonly [K in keyof RepositoryIndexEntry]: RepositoryIndexEntry[K] } = {
      name: e.name ?? "",
    };
    if (e.version) entry.version = e.version;
    if (e.state) entry.state = e.state;
    // HTTP's index gives a model it knows the state of a reason too, empty or not; proto3 cannot say.
    if (e.reason || e.state) entry.reason = e.reason ?? "";
    return entry;
  });
}

function duration(d: gen.StatisticDuration.$Properties | null | undefined): DurationStatistic {
  return { count: num(d?.count), ns: num(d?.ns) };
}

export function modelStatisticsOf(m: gen.ModelStatisticsResponse): ModelStatistics[] {
  return m.model_stats.map((s) => {
    const i = s.inference_stats;
    return {
      name: s.name ?? "",
      version: s.version ?? "",
      lastInference: num(s.last_inference),
      inferenceCount: num(s.inference_count),
      executionCount: num(s.execution_count),
      inferenceStats: {
        success: duration(i?.success),
        fail: duration(i?.fail),
        queue: duration(i?.queue),
        computeInput: duration(i?.compute_input),
        computeInfer: duration(i?.compute_infer),
        computeOutput: duration(i?.compute_output),
        cacheHit: duration(i?.cache_hit),
        cacheMiss: duration(i?.cache_miss),
      },
      batchStats: (s.batch_stats ?? []).map((b) => ({
        batchSize: num(b.batch_size),
        computeInput: duration(b.compute_input),
        computeInfer: duration(b.compute_infer),
        computeOutput: duration(b.compute_output),
      })),
    };
  });
}

/** Trace settings: `trace_level` is always a list (as HTTP gives it); others one string, or a list. */
export function traceSettingsOf(m: gen.TraceSettingResponse): TraceSettings {
  const out: Record<string, TraceSettingValue> = {};
  for (const [key, setting] of Object.entries(m.settings)) {
    const values = [...(setting.value ?? [])];
    out[key] = key === "trace_level" || values.length > 1 ? values : (values[0] ?? "");
  }
  return out as TraceSettings;
}

/** The TraceSettingRequest settings for an update: null clears (an empty list, as Triton reads it). */
export function traceSettingsRequest(
  settings: Readonly<Record<string, TraceSettingValue | number | null>>,
): Record<string, gen.TraceSettingRequest.SettingValue.$Properties> {
  const out: Record<string, gen.TraceSettingRequest.SettingValue.$Properties> = {};
  for (const [key, v] of Object.entries(settings)) {
    out[key] = { value: v === null ? [] : Array.isArray(v) ? [...v] : [String(v)] };
  }
  return out;
}

export function logSettingsOf(m: gen.LogSettingsResponse): LogSettings {
  const out: Record<string, LogSettingValue> = {};
  for (const [key, s] of Object.entries(m.settings)) {
    const choice = (s as { parameter_choice?: string }).parameter_choice;
    if (choice === "bool_param") out[key] = s.bool_param ?? false;
    else if (choice === "uint32_param") out[key] = s.uint32_param ?? 0;
    else if (choice === "string_param") out[key] = s.string_param ?? "";
  }
  return out as LogSettings;
}

/** The LogSettingsRequest settings: booleans, non-negative integers (uint32) and strings. */
export function logSettingsRequest(
  settings: Readonly<Record<string, LogSettingValue | undefined>>,
): Record<string, gen.LogSettingsRequest.SettingValue.$Properties> {
  const out: Record<string, gen.LogSettingsRequest.SettingValue.$Properties> = {};
  for (const [key, v] of Object.entries(settings)) {
    if (v === undefined) continue;
    if (typeof v === "boolean") out[key] = { bool_param: v };
    else if (typeof v === "number") out[key] = { uint32_param: v };
    else out[key] = { string_param: v };
  }
  return out;
}

export function sharedMemoryStatusOf(m: gen.SystemSharedMemoryStatusResponse): SharedMemoryRegionStatus[] {
  return Object.values(m.regions).map((r) => ({
    name: r.name ?? "",
    key: r.key ?? "",
    offset: num(r.offset),
    byteSize: num(r.byte_size),
  }));
}
