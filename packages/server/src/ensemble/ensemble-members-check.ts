/**
 * The checks Triton makes on an ensemble against its members, once the members are loaded and their
 * configs complete (core model_repository_manager.cc ConnectDependencyGraph and CheckNode, then
 * ensemble_scheduler/ensemble_utils.cc ValidateEnsembleConfig), with Triton's messages (INVALID_ARG):
 * every member present and loaded in the version a step asks for; the ensemble's max_batch_size within each
 * batching member's; every step input and output naming a member input or output, every required member
 * input mapped; and one datatype and one shape per ensemble tensor across the ensemble's own inputs and
 * outputs and every member tensor mapped to it.
 *
 * Shapes follow Triton's rule: two dims agree when equal with -1 matching anything, or else when they
 * agree with the batch dimension (-1) put in front of the batching side's dims, so a non-batching member
 * with dims [-1, 4] can share a tensor with a batching one with dims [4].
 */
import type { ConfigDataType as DataType, ModelConfig, ModelEnsembling_Step } from "@tbench/proto";
import { dimsToString } from "../repository/config-numbers.js";

/** What the core knows about one member model (a model named by a step) when the ensemble loads. */
export type MemberInfo =
  /** Loaded: its complete config (the version a step with model_version -1 would use) and loaded versions. */
  | { readonly state: "ready"; readonly config: ModelConfig; readonly versions: readonly string[] }
  /** Its configuration failed to read or validate (Triton's dependency node status is not OK). */
  | { readonly state: "invalid"; readonly error: string }
  /** Its config is fine but no version is loaded; `error`: why loading failed, when it did. */
  | { readonly state: "unavailable"; readonly error?: string };

/** An ensemble tensor's type and shape as one side (the ensemble or a member) declares it. */
interface TensorNode {
  readonly model: string;
  readonly datatype: DataType;
  readonly dims: readonly number[];
  /** dims with the batch dimension (-1) in front when that side batches. */
  readonly fullDims: readonly number[];
}

function tensorNode(
  model: string,
  batching: boolean,
  datatype: DataType | undefined,
  dims: readonly (string | number)[] | undefined,
): TensorNode {
  const values = (dims ?? []).map(Number);
  return {
    model,
    datatype: datatype ?? "TYPE_INVALID",
    dims: values,
    fullDims: batching ? [-1, ...values] : values,
  };
}

/** Triton's CompareDimsWithWildcard. */
function dimsAgree(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === -1 || b[i] === -1 || d === b[i]);
}

/** ValidateTensorConsistency: `known` is the tensor's first declaration, `other` the one being added. */
function consistency(known: TensorNode, other: TensorNode, prefix: string): string | undefined {
  if (known.datatype !== other.datatype) {
    return (
      `${prefix}inconsistent data type: ${known.datatype} is inferred from model ${known.model} while ` +
      `${other.datatype} is inferred from model ${other.model}`
    );
  }
  if (!dimsAgree(known.dims, other.dims) && !dimsAgree(known.fullDims, other.fullDims)) {
    return (
      `${prefix}inconsistent shape: ${dimsToString(known.fullDims)} is inferred from model ${known.model} ` +
      `while ${dimsToString(other.fullDims)} is inferred from model ${other.model}`
    );
  }
  return undefined;
}

/** Records `node` as `tensorName`, or checks it against the tensor's first declaration. */
function declare(
  tensors: Map<string, TensorNode>,
  tensorName: string,
  node: TensorNode,
  ensemble: string,
): string | undefined {
  const known = tensors.get(tensorName);
  if (!known) {
    tensors.set(tensorName, node);
    return undefined;
  }
  return consistency(known, node, `in ensemble ${ensemble}, ensemble tensor ${tensorName}: `);
}

/**
 * ValidateTensorMapping for one step. Triton's "mapped to multiple ensemble tensors" and "multiple outputs
 * … mapped to the same ensemble tensor" cannot occur: the maps hold one value per key, and the structural
 * check already refused a tensor written twice.
 */
function checkStep(
  ensemble: string,
  step: ModelEnsembling_Step,
  member: ModelConfig,
  tensors: Map<string, TensorNode>,
): string | undefined {
  const model = step.model_name ?? "";
  const batching = (member.max_batch_size ?? 0) > 0;
  const inputMap = step.input_map ?? {};
  const outputMap = step.output_map ?? {};
  const inputs = member.input ?? [];
  const outputs = member.output ?? [];
  for (const [memberInput, tensorName] of Object.entries(inputMap)) {
    if (!inputs.some((io) => io.name === memberInput)) {
      return `in ensemble ${ensemble}, ensemble tensor ${tensorName} is mapping to non-existing input ${memberInput} in model ${model}`;
    }
  }
  for (const io of inputs) {
    const ioName = io.name ?? "";
    const tensorName = Object.hasOwn(inputMap, ioName) ? inputMap[ioName] : undefined;
    if (tensorName === undefined) {
      if (io.optional === true) continue;
      return `in ensemble ${ensemble}, input ${ioName} in model ${model} is not mapped to any ensemble tensors`;
    }
    const problem = declare(
      tensors,
      tensorName,
      tensorNode(model, batching, io.data_type, io.dims),
      ensemble,
    );
    if (problem) return problem;
  }
  for (const [memberOutput, tensorName] of Object.entries(outputMap)) {
    if (!outputs.some((io) => io.name === memberOutput)) {
      return `in ensemble ${ensemble}, ensemble tensor ${tensorName} is mapped from non-existing output ${memberOutput} in model ${model}`;
    }
  }
  for (const [memberOutput, tensorName] of Object.entries(outputMap)) {
    const io = outputs.find((o) => o.name === memberOutput)!;
    const problem = declare(
      tensors,
      tensorName,
      tensorNode(model, batching, io.data_type, io.dims),
      ensemble,
    );
    if (problem) return problem;
  }
  return undefined;
}

/** The version a step asks for: -1 the latest; an unset model_version is 0, as in Triton. */
export function stepVersion(step: ModelEnsembling_Step): number {
  return Number(step.model_version ?? 0);
}

/** ConnectDependencyGraph and CheckNode: every member known, valid and loaded in the versions asked for. */
function checkDependencies(
  config: ModelConfig,
  members: ReadonlyMap<string, MemberInfo>,
): string | undefined {
  const name = config.name ?? "";
  const steps = config.ensemble_scheduling?.step ?? [];
  // Triton sets the status at the first missing member and never rewrites it, so it names that one only.
  const missing = steps.find((step) => !members.has(step.model_name ?? ""));
  if (missing) {
    return `ensemble ${name} contains models that are not available or ambiguous: ${missing.model_name ?? ""}`;
  }
  const required = new Map<string, Set<number>>();
  for (const step of steps) {
    const model = step.model_name ?? "";
    const versions = required.get(model) ?? new Set<number>();
    versions.add(stepVersion(step));
    required.set(model, versions);
  }
  for (const [model, versions] of required) {
    const info = members.get(model)!;
    const head = `ensemble '${name}' depends on '${model}'`;
    if (info.state === "invalid") {
      return `${head} which is not valid. Model '${model}' failed with error: ${info.error}`;
    }
    if (info.state === "unavailable") {
      return info.error === undefined
        ? `${head} which has no loaded version.`
        : `${head} which has no loaded version. Model '${model}' loading failed with error: ${info.error}`;
    }
    // Triton keeps checking after a missing version, so the message names the highest one missing.
    let problem: string | undefined;
    for (const version of [...versions].sort((a, b) => a - b)) {
      if (version !== -1 && !info.versions.includes(String(version))) {
        problem = `${head} whose required version ${version} is not loaded.`;
      }
    }
    if (problem) return problem;
  }
  return undefined;
}

/**
 * Triton's checks of an ensemble against its members, for a config that passed validateEnsembleScheduling:
 * the message of the first problem, or undefined. `members` maps each model a step names to what the core
 * knows of it; a name missing from the map is a model the repository does not have.
 */
export function validateEnsembleMembers(
  config: ModelConfig,
  members: ReadonlyMap<string, MemberInfo>,
): string | undefined {
  const dependencies = checkDependencies(config, members);
  if (dependencies) return dependencies;
  const name = config.name ?? "";
  const maxBatchSize = config.max_batch_size ?? 0;
  const batching = maxBatchSize > 0;
  const tensors = new Map<string, TensorNode>();
  for (const io of [...(config.input ?? []), ...(config.output ?? [])]) {
    const ioName = io.name ?? "";
    if (tensors.has(ioName)) continue;
    const dims = io.reshape ? io.reshape.shape : io.dims;
    tensors.set(ioName, tensorNode(name, batching, io.data_type, dims));
  }
  for (const step of config.ensemble_scheduling?.step ?? []) {
    const model = step.model_name ?? "";
    const info = members.get(model);
    if (info?.state !== "ready") continue; // checkDependencies returned already
    const memberMax = info.config.max_batch_size ?? 0;
    // A batching ensemble may hold non-batching members (max_batch_size 0) when the shapes agree.
    if (memberMax !== 0 && memberMax < maxBatchSize) {
      return (
        `ensemble ${name} allows maximum batch size ${maxBatchSize}, but it contains model ${model} ` +
        `which only allows maximum batch size to be ${memberMax}`
      );
    }
    const problem = checkStep(name, step, info.config, tensors);
    if (problem) return problem;
  }
  return undefined;
}
