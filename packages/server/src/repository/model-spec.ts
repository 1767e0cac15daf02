/**
 * The typed, resolved view of a normalized and validated model configuration that the scheduler and the
 * instances run on. Built once per loaded version from the proto3-JSON config.
 */
import {
  type Datatype,
  datatypeFromConfigType,
  type ModelConfig,
  type ModelDynamicBatching,
  type ModelInput,
  type ModelOutput,
  type ModelQueuePolicy,
} from "@tbench/proto";
import { int64List, int64Value } from "./config-numbers.js";
import { type SequenceBatchingSpec, sequenceBatchingSpec } from "./sequence-batching.js";

/** One input or output of the model configuration. */
export interface TensorSpec {
  readonly name: string;
  readonly datatype: Datatype;
  /** Config dims without the batch dimension; -1 is variable. */
  readonly dims: readonly number[];
  /** `reshape.shape` when the config has a reshape (the shape the model itself sees). */
  readonly reshape?: readonly number[];
  readonly optional: boolean;
  readonly allowRaggedBatch: boolean;
  /** Output `label_filename` (classification extension). */
  readonly labelFilename: string;
}

/** A queue policy (model_config.proto ModelQueuePolicy). */
export interface QueuePolicySpec {
  readonly timeoutAction: "REJECT" | "DELAY";
  readonly defaultTimeoutUs: number;
  readonly allowTimeoutOverride: boolean;
  /** 0: unlimited. */
  readonly maxQueueSize: number;
}

/** The dynamic_batching section, normalized (preferred sizes default to [max_batch_size]). */
export interface DynamicBatchingSpec {
  /** Sorted ascending, unique. */
  readonly preferredBatchSizes: readonly number[];
  readonly maxQueueDelayUs: number;
  readonly preserveOrdering: boolean;
  /** 0: one priority level. */
  readonly priorityLevels: number;
  readonly defaultPriorityLevel: number;
  readonly defaultQueuePolicy: QueuePolicySpec;
  readonly priorityQueuePolicy: ReadonlyMap<number, QueuePolicySpec>;
}

/** One instance group after defaults (name, kind, count). */
export interface InstanceGroupSpec {
  readonly name: string;
  readonly kind: "KIND_CPU" | "KIND_GPU" | "KIND_MODEL";
  readonly count: number;
  readonly gpus: readonly number[];
}

/** Everything the serving path needs to know about one model version. */
export interface ModelSpec {
  readonly name: string;
  readonly platform: string;
  readonly backend: string;
  readonly maxBatchSize: number;
  readonly inputs: readonly TensorSpec[];
  readonly outputs: readonly TensorSpec[];
  readonly dynamicBatching?: DynamicBatchingSpec;
  /** sequence_batching: the model is stateful and served by the sequence batch scheduler. */
  readonly sequenceBatching?: SequenceBatchingSpec;
  readonly instanceGroups: readonly InstanceGroupSpec[];
  readonly defaultModelFilename: string;
  /** `parameters` as key -> string_value. */
  readonly parameters: ReadonlyMap<string, string>;
}

function tensorSpec(
  io: ModelInput | ModelOutput,
  modelName: string,
): Pick<TensorSpec, "name" | "datatype" | "dims" | "reshape"> {
  const name = io.name ?? "";
  const field = `'${name}' of model '${modelName}'`;
  return {
    name,
    // Validation has already rejected unknown types; FP32 only keeps the type total.
    datatype: datatypeFromConfigType(io.data_type ?? "")?.datatype ?? "FP32",
    dims: int64List(io.dims, `dims of ${field}`),
    ...(io.reshape ? { reshape: int64List(io.reshape.shape, `reshape of ${field}`) } : {}),
  };
}

function inputSpec(io: ModelInput, modelName: string): TensorSpec {
  return {
    ...tensorSpec(io, modelName),
    optional: io.optional ?? false,
    allowRaggedBatch: io.allow_ragged_batch ?? false,
    labelFilename: "",
  };
}

function outputSpec(io: ModelOutput, modelName: string): TensorSpec {
  return {
    ...tensorSpec(io, modelName),
    optional: false,
    allowRaggedBatch: false,
    labelFilename: io.label_filename ?? "",
  };
}

/** Reads a ModelQueuePolicy (absent: Triton's default, REJECT with no timeout and no size limit). */
export function queuePolicySpec(policy: ModelQueuePolicy | undefined): QueuePolicySpec {
  return {
    timeoutAction: policy?.timeout_action ?? "REJECT",
    defaultTimeoutUs: int64Value(policy?.default_timeout_microseconds, "default_timeout_microseconds"),
    allowTimeoutOverride: policy?.allow_timeout_override ?? false,
    maxQueueSize: policy?.max_queue_size ?? 0,
  };
}

function dynamicBatchingSpec(db: ModelDynamicBatching): DynamicBatchingSpec {
  const perPriority = new Map<number, QueuePolicySpec>();
  for (const [level, policy] of Object.entries(db.priority_queue_policy ?? {})) {
    perPriority.set(Number(level), queuePolicySpec(policy));
  }
  return {
    preferredBatchSizes: [...new Set(db.preferred_batch_size)].sort((a, b) => a - b),
    maxQueueDelayUs: int64Value(db.max_queue_delay_microseconds, "max_queue_delay_microseconds"),
    preserveOrdering: db.preserve_ordering ?? false,
    priorityLevels: int64Value(db.priority_levels, "priority_levels"),
    defaultPriorityLevel: int64Value(db.default_priority_level, "default_priority_level"),
    defaultQueuePolicy: queuePolicySpec(db.default_queue_policy),
    priorityQueuePolicy: perPriority,
  };
}

/** The instance groups of a config whose groups are normalized. */
export function instanceGroupSpecs(config: ModelConfig): InstanceGroupSpec[] {
  return (config.instance_group ?? []).map((group) => ({
    name: group.name ?? "",
    kind: group.kind === undefined || group.kind === "KIND_AUTO" ? "KIND_CPU" : group.kind,
    count: group.count ?? 0,
    gpus: group.gpus ?? [],
  }));
}

/** Builds the ModelSpec of a normalized, validated config. */
export function modelSpecFromConfig(config: ModelConfig): ModelSpec {
  const name = config.name ?? "";
  const parameters = new Map<string, string>();
  for (const [key, value] of Object.entries(config.parameters ?? {})) {
    parameters.set(key, value.string_value ?? "");
  }
  const sequenceBatching = sequenceBatchingSpec(config);
  return {
    name,
    platform: config.platform ?? "",
    backend: config.backend ?? "",
    maxBatchSize: config.max_batch_size ?? 0,
    inputs: (config.input ?? []).map((io) => inputSpec(io, name)),
    outputs: (config.output ?? []).map((io) => outputSpec(io, name)),
    ...(config.dynamic_batching ? { dynamicBatching: dynamicBatchingSpec(config.dynamic_batching) } : {}),
    ...(sequenceBatching ? { sequenceBatching } : {}),
    instanceGroups: instanceGroupSpecs(config),
    defaultModelFilename: config.default_model_filename || "model.onnx",
    parameters,
  };
}
