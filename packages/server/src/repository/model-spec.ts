/**
 * The typed, resolved view of a normalized and validated model configuration that the scheduler and the
 * instances run on. Built once per loaded version from the proto3-JSON config.
 */
import { type Datatype, datatypeFromConfigType } from "@tbench/proto";
import {
  boolField,
  type ConfigObject,
  dimsField,
  hasField,
  numberField,
  objectArrayField,
  objectField,
  stringField,
} from "./config-fields.js";

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
  readonly instanceGroups: readonly InstanceGroupSpec[];
  readonly defaultModelFilename: string;
  /** `parameters` as key -> string_value. */
  readonly parameters: ReadonlyMap<string, string>;
}

function tensorSpec(io: ConfigObject): TensorSpec {
  const reshape = objectField(io, "reshape");
  const info = datatypeFromConfigType(stringField(io, "data_type"));
  return {
    name: stringField(io, "name"),
    // Validation has already rejected unknown types; FP32 only keeps the type total.
    datatype: info?.datatype ?? "FP32",
    dims: dimsField(io, "dims"),
    ...(reshape ? { reshape: dimsField(reshape, "shape") } : {}),
    optional: boolField(io, "optional"),
    allowRaggedBatch: boolField(io, "allow_ragged_batch"),
    labelFilename: stringField(io, "label_filename"),
  };
}

/** Reads a ModelQueuePolicy object. */
export function queuePolicySpec(policy: ConfigObject | undefined): QueuePolicySpec {
  return {
    timeoutAction: stringField(policy, "timeout_action") === "DELAY" ? "DELAY" : "REJECT",
    defaultTimeoutUs: numberField(policy, "default_timeout_microseconds"),
    allowTimeoutOverride: boolField(policy, "allow_timeout_override"),
    maxQueueSize: numberField(policy, "max_queue_size"),
  };
}

function dynamicBatchingSpec(config: ConfigObject): DynamicBatchingSpec | undefined {
  if (!hasField(config, "dynamic_batching")) return undefined;
  const db = objectField(config, "dynamic_batching") ?? {};
  const sizes = [...new Set(dimsField(db, "preferred_batch_size"))].sort((a, b) => a - b);
  const perPriority = new Map<number, QueuePolicySpec>();
  const policies = objectField(db, "priority_queue_policy") ?? {};
  for (const [level, policy] of Object.entries(policies)) {
    perPriority.set(Number(level), queuePolicySpec(policy as ConfigObject));
  }
  return {
    preferredBatchSizes: sizes,
    maxQueueDelayUs: numberField(db, "max_queue_delay_microseconds"),
    preserveOrdering: boolField(db, "preserve_ordering"),
    priorityLevels: numberField(db, "priority_levels"),
    defaultPriorityLevel: numberField(db, "default_priority_level"),
    defaultQueuePolicy: queuePolicySpec(objectField(db, "default_queue_policy")),
    priorityQueuePolicy: perPriority,
  };
}

/** Builds the ModelSpec of a normalized, validated config. */
export function modelSpecFromConfig(config: ConfigObject): ModelSpec {
  const parameters = new Map<string, string>();
  for (const [key, value] of Object.entries(objectField(config, "parameters") ?? {})) {
    parameters.set(key, stringField(value as ConfigObject, "string_value"));
  }
  const dynamicBatching = dynamicBatchingSpec(config);
  return {
    name: stringField(config, "name"),
    platform: stringField(config, "platform"),
    backend: stringField(config, "backend"),
    maxBatchSize: numberField(config, "max_batch_size"),
    inputs: objectArrayField(config, "input").map(tensorSpec),
    outputs: objectArrayField(config, "output").map(tensorSpec),
    ...(dynamicBatching ? { dynamicBatching } : {}),
    instanceGroups: objectArrayField(config, "instance_group").map((group) => ({
      name: stringField(group, "name"),
      kind: (stringField(group, "kind") || "KIND_CPU") as InstanceGroupSpec["kind"],
      count: numberField(group, "count"),
      gpus: dimsField(group, "gpus"),
    })),
    defaultModelFilename: stringField(config, "default_model_filename") || "model.onnx",
    parameters,
  };
}
