/**
 * Triton's model configuration validation (model_config_utils.cc ValidateModelConfig,
 * ValidateInstanceGroup, ValidateModelIOConfig), with its messages. Each check returns the first problem as a
 * message (Triton's INVALID_ARG text) or undefined.
 */
import {
  datatypeFromConfigType,
  type ModelConfig,
  type ModelInput,
  type ModelOutput,
  type ModelQueuePolicy,
} from "@tbench/proto";
import { ENSEMBLE_PLATFORM, GENERATOR_BACKEND, ONNX_BACKEND, ONNX_PLATFORM } from "./config-normalize.js";
import { int64List, int64Value } from "./config-numbers.js";
import { validateSequenceBatching } from "./sequence-batching.js";

/** Checks that need no model file: name vs directory, platform/backend, max_batch_size, version policy. */
export function validateModelIdentity(config: ModelConfig, directoryName: string): string | undefined {
  const name = config.name ?? "";
  if (name !== directoryName) {
    return (
      `unexpected directory name '${directoryName}' for model '${name}', ` +
      "directory name must equal model name"
    );
  }
  const platform = config.platform ?? "";
  const backend = config.backend ?? "";
  if (backend === "" && platform !== ENSEMBLE_PLATFORM) {
    if (platform === "") return `must specify 'platform' or 'backend' for '${name}'`;
    return `unexpected platform type '${platform}' for ${name}`;
  }
  if (backend !== "" && platform === ENSEMBLE_PLATFORM) {
    return `Ensemble model '${name}' must have platform type '${platform}' and empty backend type`;
  }
  if (backend === ONNX_BACKEND && platform !== ONNX_PLATFORM) {
    return `unexpected 'platform' and 'backend' pair, got:${platform}, ${backend}`;
  }
  if (backend === GENERATOR_BACKEND && platform !== "") {
    return `unexpected 'platform' and 'backend' pair, got:${platform}, ${backend}`;
  }
  if (backend !== "" && backend !== ONNX_BACKEND && backend !== GENERATOR_BACKEND) {
    return (
      `unable to find backend library for backend '${backend}' of model '${name}': ` +
      `tbench-server serves backends '${ONNX_BACKEND}' (platform '${ONNX_PLATFORM}') and '${GENERATOR_BACKEND}', and ensembles`
    );
  }
  if ((config.max_batch_size ?? 0) < 0) {
    return `'max_batch_size' must be non-negative value for ${name}`;
  }
  const policy = config.version_policy;
  if (!policy || (!policy.latest && !policy.all && !policy.specific)) {
    return `must specify 'version policy' for ${name}`;
  }
  return undefined;
}

/**
 * Features Triton serves that tbench-server does not: a config that asks for one fails to load (UNSUPPORTED)
 * rather than serving requests without the semantics it asked for.
 */
export function unsupportedFeature(config: ModelConfig): string | undefined {
  const name = config.name ?? "";
  // Triton's ragged batching feeds a [-1] model input with every request's elements concatenated (the
  // onnxruntime backend supports it); the batch assembly here would use the first request's shape instead.
  const ragged = (config.input ?? []).find((io) => io.allow_ragged_batch === true);
  if (ragged) {
    return (
      `input '${ragged.name ?? ""}' of model '${name}' sets allow_ragged_batch, and ragged batching is not ` +
      "supported by tbench-server"
    );
  }
  return undefined;
}

function validateQueuePolicies(config: ModelConfig, name: string): string | undefined {
  const db = config.dynamic_batching ?? {};
  const levels = int64Value(db.priority_levels, "dynamic_batching.priority_levels");
  const policies = db.priority_queue_policy ?? {};
  if (levels !== 0) {
    const defaultLevel = int64Value(db.default_priority_level, "dynamic_batching.default_priority_level");
    if (defaultLevel === 0 || defaultLevel > levels) {
      return `default priority level must be in range [1, ${levels}] for ${name}`;
    }
    for (const level of Object.keys(policies)) {
      const n = Number(level);
      if (n === 0 || n > levels) {
        return `priority queue policy must have priority level in range [1, ${levels}] for ${name}`;
      }
    }
  }
  if (db.preserve_ordering === true) {
    if (levels > 1) return `Only one priority level is allowed when 'preserve_ordering' is true for ${name}`;
    const all: (ModelQueuePolicy | undefined)[] = [db.default_queue_policy, ...Object.values(policies)];
    for (const policy of all) {
      if (
        int64Value(policy?.default_timeout_microseconds, "default_timeout_microseconds") !== 0 &&
        policy?.timeout_action === "DELAY"
      ) {
        return `Queue policy can not have DELAY as timeout action when 'preserve_ordering' is true for ${name}`;
      }
    }
  }
  return undefined;
}

/** ValidateModelConfig's batching checks and ValidateInstanceGroup, on a normalized config. */
export function validateSchedulingConfig(config: ModelConfig): string | undefined {
  const name = config.name ?? "";
  const maxBatchSize = config.max_batch_size ?? 0;
  if (config.dynamic_batching) {
    for (const size of config.dynamic_batching.preferred_batch_size ?? []) {
      if (size <= 0) return `dynamic batching preferred size must be positive for ${name}`;
      if (size > maxBatchSize) return `dynamic batching preferred size must be <= max batch size for ${name}`;
    }
    const problem = validateQueuePolicies(config, name);
    if (problem) return problem;
  }
  const sequence = validateSequenceBatching(config);
  if (sequence) return sequence;
  const groups = config.instance_group ?? [];
  if (groups.length === 0) return `must specify one or more 'instance group's for ${name}`;
  for (const group of groups) {
    const kind = group.kind;
    if ((kind === "KIND_CPU" || kind === "KIND_MODEL") && group.gpus?.length) {
      return `instance group ${group.name} of model ${name} has kind ${kind} but specifies one or more GPUs`;
    }
  }
  return undefined;
}

const isDim = (dim: number) => dim >= 1 || dim === -1;

function validateIoShape(
  io: ModelInput | ModelOutput,
  maxBatchSize: number,
  prefix: string,
): string | undefined {
  const ioName = io.name ?? "";
  if (ioName === "") return `${prefix}must specify 'name'`;
  const withName = `${prefix}'${ioName}' `;
  const dataType = io.data_type ?? "TYPE_INVALID";
  if (dataType === "TYPE_INVALID") return `${withName}must specify 'data_type'`;
  if (!datatypeFromConfigType(dataType)) return `${withName}has unknown data type '${dataType}'`;
  const dims = int64List(io.dims, `${withName}dims`);
  if (dims.length === 0) return `${withName}must specify 'dims'`;
  const reshape = io.reshape;
  const reshapeDims = int64List(reshape?.shape, `${withName}reshape`);
  if (reshape && reshapeDims.length === 0 && maxBatchSize === 0) {
    return `${withName}cannot have empty reshape for non-batching model as scalar tensors are not supported`;
  }
  if (!dims.every(isDim)) {
    return `${withName}dimension must be integer >= 1, or -1 to indicate a variable-size dimension`;
  }
  if (reshape) {
    if (!reshapeDims.every(isDim)) {
      return `${withName}reshape dimensions must be integer >= 1, or -1 to indicate a variable-size dimension`;
    }
    const count = (d: number[]) => (d.includes(-1) ? -1 : d.reduce((a, b) => a * b, 1));
    const dimsSize = count(dims);
    const reshapeSize = reshapeDims.length === 0 ? 0 : count(reshapeDims);
    if (dimsSize !== reshapeSize && (reshapeSize !== 0 || dimsSize !== 1)) {
      return `${withName}has different size for dims and reshape`;
    }
  }
  return undefined;
}

/** ValidateModelIOConfig: every input and output, with Triton's " for <model>" suffix. */
export function validateIoConfig(config: ModelConfig): string | undefined {
  const name = config.name ?? "";
  const maxBatchSize = config.max_batch_size ?? 0;
  for (const [ios, prefix] of [
    [config.input ?? [], "model input "],
    [config.output ?? [], "model output "],
  ] as const) {
    const seen = new Set<string>();
    for (const io of ios) {
      const problem = validateIoShape(io, maxBatchSize, prefix);
      if (problem) return `${problem} for ${name}`;
      const ioName = io.name ?? "";
      if (seen.has(ioName)) return `${prefix}'${ioName}' is specified more than once for ${name}`;
      seen.add(ioName);
    }
  }
  return undefined;
}
