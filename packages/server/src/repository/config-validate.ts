/**
 * Triton's model configuration validation (model_config_utils.cc ValidateModelConfig,
 * ValidateInstanceGroup, ValidateModelIOConfig), with its messages. Each check returns the first problem as a
 * message (Triton's INVALID_ARG text) or undefined.
 */
import { datatypeFromConfigType } from "@tbench/proto";
import {
  arrayField,
  type ConfigObject,
  dimsField,
  hasField,
  numberField,
  objectArrayField,
  objectField,
  stringField,
  toNumber,
} from "./config-fields.js";
import { ENSEMBLE_PLATFORM, ONNX_BACKEND, ONNX_PLATFORM } from "./config-normalize.js";

/** Checks that need no model file: name vs directory, platform/backend, max_batch_size, version policy. */
export function validateModelIdentity(config: ConfigObject, directoryName: string): string | undefined {
  const name = stringField(config, "name");
  if (name !== directoryName) {
    return (
      `unexpected directory name '${directoryName}' for model '${name}', ` +
      "directory name must equal model name"
    );
  }
  const platform = stringField(config, "platform");
  const backend = stringField(config, "backend");
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
  if (backend !== "" && backend !== ONNX_BACKEND) {
    return (
      `unable to find backend library for backend '${backend}' of model '${name}': ` +
      `tbench-server serves backend '${ONNX_BACKEND}' (platform '${ONNX_PLATFORM}') and ensembles only`
    );
  }
  const maxBatchSize = numberField(config, "max_batch_size");
  if (!Number.isInteger(maxBatchSize) || maxBatchSize < 0) {
    return `'max_batch_size' must be non-negative value for ${name}`;
  }
  const policy = objectField(config, "version_policy");
  if (!policy || (!hasField(policy, "latest") && !hasField(policy, "all") && !hasField(policy, "specific"))) {
    return `must specify 'version policy' for ${name}`;
  }
  return undefined;
}

function validateQueuePolicies(config: ConfigObject, name: string): string | undefined {
  const db = objectField(config, "dynamic_batching") ?? {};
  const levels = numberField(db, "priority_levels");
  const policies = objectField(db, "priority_queue_policy") ?? {};
  if (levels !== 0) {
    const defaultLevel = numberField(db, "default_priority_level");
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
  if (db["preserve_ordering"] === true) {
    if (levels > 1) return `Only one priority level is allowed when 'preserve_ordering' is true for ${name}`;
    const all = [
      objectField(db, "default_queue_policy"),
      ...Object.values(policies).map((p) => p as ConfigObject),
    ];
    for (const policy of all) {
      if (
        numberField(policy, "default_timeout_microseconds") !== 0 &&
        stringField(policy, "timeout_action") === "DELAY"
      ) {
        return `Queue policy can not have DELAY as timeout action when 'preserve_ordering' is true for ${name}`;
      }
    }
  }
  return undefined;
}

/** ValidateModelConfig's batching checks and ValidateInstanceGroup, on a normalized config. */
export function validateSchedulingConfig(config: ConfigObject): string | undefined {
  const name = stringField(config, "name");
  const maxBatchSize = numberField(config, "max_batch_size");
  if (hasField(config, "dynamic_batching")) {
    const db = objectField(config, "dynamic_batching") ?? {};
    for (const size of arrayField(db, "preferred_batch_size").map(toNumber)) {
      if (size <= 0) return `dynamic batching preferred size must be positive for ${name}`;
      if (size > maxBatchSize) return `dynamic batching preferred size must be <= max batch size for ${name}`;
    }
    const problem = validateQueuePolicies(config, name);
    if (problem) return problem;
  }
  const groups = objectArrayField(config, "instance_group");
  if (groups.length === 0) return `must specify one or more 'instance group's for ${name}`;
  for (const group of groups) {
    const kind = stringField(group, "kind");
    const gpus = arrayField(group, "gpus");
    if ((kind === "KIND_CPU" || kind === "KIND_MODEL") && gpus.length > 0) {
      return `instance group ${stringField(group, "name")} of model ${name} has kind ${kind} but specifies one or more GPUs`;
    }
  }
  return undefined;
}

function validateIoShape(io: ConfigObject, maxBatchSize: number, prefix: string): string | undefined {
  const ioName = stringField(io, "name");
  if (ioName === "") return `${prefix}must specify 'name'`;
  const withName = `${prefix}'${ioName}' `;
  const dataType = stringField(io, "data_type");
  if (dataType === "" || dataType === "TYPE_INVALID") return `${withName}must specify 'data_type'`;
  if (!datatypeFromConfigType(dataType)) return `${withName}has unknown data type '${dataType}'`;
  const dims = dimsField(io, "dims");
  if (dims.length === 0) return `${withName}must specify 'dims'`;
  const reshape = objectField(io, "reshape");
  const reshapeDims = dimsField(reshape, "shape");
  if (hasField(io, "reshape") && reshapeDims.length === 0 && maxBatchSize === 0) {
    return `${withName}cannot have empty reshape for non-batching model as scalar tensors are not supported`;
  }
  for (const dim of dims) {
    if (!Number.isInteger(dim) || (dim < 1 && dim !== -1)) {
      return `${withName}dimension must be integer >= 1, or -1 to indicate a variable-size dimension`;
    }
  }
  if (hasField(io, "reshape")) {
    for (const dim of reshapeDims) {
      if (!Number.isInteger(dim) || (dim < 1 && dim !== -1)) {
        return `${withName}reshape dimensions must be integer >= 1, or -1 to indicate a variable-size dimension`;
      }
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
export function validateIoConfig(config: ConfigObject): string | undefined {
  const name = stringField(config, "name");
  const maxBatchSize = numberField(config, "max_batch_size");
  const seen = new Set<string>();
  for (const [key, prefix] of [
    ["input", "model input "],
    ["output", "model output "],
  ] as const) {
    for (const io of objectArrayField(config, key)) {
      const problem = validateIoShape(io, maxBatchSize, prefix);
      if (problem) return `${problem} for ${name}`;
      const ioName = stringField(io, "name");
      if (seen.has(`${key}:${ioName}`)) return `${prefix}'${ioName}' is specified more than once for ${name}`;
      seen.add(`${key}:${ioName}`);
    }
  }
  return undefined;
}
