/**
 * An ensemble config compiled once for serving: each step with its member's batching and input dims, which
 * steps read each tensor, which step writes it, the steps a request needs for the outputs it asks for
 * (Triton's pruning in EnsembleContext), and Triton's shape fix-up between batching and non-batching sides
 * (EnsembleContext::ReshapeTensorDims).
 */
import type { ModelConfig } from "@tbench/proto";
import { stepVersion } from "./ensemble-members-check.js";

/** One step's mapping between a member tensor and an ensemble tensor. */
export interface TensorMapping {
  /** The member model's input or output name. */
  readonly member: string;
  /** The ensemble tensor's name. */
  readonly tensor: string;
}

export interface StepPlan {
  readonly index: number;
  readonly model: string;
  /** The version the member request asks for; undefined for model_version -1 (the latest ready one). */
  readonly version: string | undefined;
  readonly inputs: readonly TensorMapping[];
  readonly outputs: readonly TensorMapping[];
  /** The member's max_batch_size > 0. */
  readonly memberBatching: boolean;
  /** The member's config dims (without batch dimension) per member input. */
  readonly memberInputDims: ReadonlyMap<string, readonly number[]>;
}

export interface EnsemblePlan {
  readonly name: string;
  /** The ensemble's max_batch_size > 0. */
  readonly batching: boolean;
  readonly steps: readonly StepPlan[];
  /** Ensemble tensor -> the steps that read it. */
  readonly readers: ReadonlyMap<string, readonly number[]>;
  /** Ensemble tensor -> the step that writes it. */
  readonly writer: ReadonlyMap<string, number>;
  /** Each ensemble output's dims (its reshape when it has one), as the response shape fix-up needs them. */
  readonly outputDims: ReadonlyMap<string, readonly number[]>;
  /** Ensemble inputs marked optional: absent from a request, they are absent for the steps too. */
  readonly optionalInputs: ReadonlySet<string>;
}

const numbers = (dims: readonly (string | number)[] | undefined): number[] => (dims ?? []).map(Number);

/**
 * Compiles a validated ensemble config. `members` holds each member's complete config (the version its
 * step runs); validateEnsembleMembers has checked that every one is there.
 */
export function createEnsemblePlan(
  config: ModelConfig,
  members: ReadonlyMap<string, ModelConfig>,
): EnsemblePlan {
  const name = config.name ?? "";
  const readers = new Map<string, number[]>();
  const writer = new Map<string, number>();
  const steps = (config.ensemble_scheduling?.step ?? []).map((step, index): StepPlan => {
    const model = step.model_name ?? "";
    const member = members.get(model);
    if (!member) throw new Error(`ensemble '${name}' step ${index}: no config for member model '${model}'`);
    const inputs = Object.entries(step.input_map ?? {}).map(([m, tensor]) => ({ member: m, tensor }));
    const outputs = Object.entries(step.output_map ?? {}).map(([m, tensor]) => ({ member: m, tensor }));
    for (const { tensor } of inputs) readers.set(tensor, [...(readers.get(tensor) ?? []), index]);
    for (const { tensor } of outputs) writer.set(tensor, index);
    const version = stepVersion(step);
    return {
      index,
      model,
      version: version === -1 ? undefined : String(version),
      inputs,
      outputs,
      memberBatching: (member.max_batch_size ?? 0) > 0,
      memberInputDims: new Map((member.input ?? []).map((io) => [io.name ?? "", numbers(io.dims)])),
    };
  });
  return {
    name,
    batching: (config.max_batch_size ?? 0) > 0,
    steps,
    readers,
    writer,
    outputDims: new Map(
      (config.output ?? []).map((io) => [io.name ?? "", numbers(io.reshape ? io.reshape.shape : io.dims)]),
    ),
    optionalInputs: new Set(
      (config.input ?? []).filter((io) => io.optional === true).map((io) => io.name ?? ""),
    ),
  };
}

/**
 * The steps needed to produce `requested` (ensemble output names): those writing a requested output or a
 * tensor some needed step reads. Steps that feed only unrequested outputs do not run, as in Triton.
 */
export function neededSteps(plan: EnsemblePlan, requested: readonly string[]): ReadonlySet<number> {
  const needed = new Set<number>();
  const pending = [...requested];
  for (let tensor = pending.pop(); tensor !== undefined; tensor = pending.pop()) {
    const index = plan.writer.get(tensor);
    if (index === undefined || needed.has(index)) continue;
    needed.add(index);
    for (const input of plan.steps[index]!.inputs) pending.push(input.tensor);
  }
  return needed;
}

/** Triton's CompareDimsWithWildcard. */
function dimsAgree(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === -1 || b[i] === -1 || d === b[i]);
}

/**
 * Triton's ReshapeTensorDims: the shape a tensor takes on the side it goes to. `batching`: that side
 * batches; `tensorBatchSize`: the batch size of the request that made the tensor (0: it made it without a
 * batch dimension). A batching side gets a batch dimension of 1 in front of a tensor made without one (when
 * the rest matches `dims`); a non-batching side loses the batch dimension of a batch-1 tensor whose shape
 * does not match `dims` as it is. Anything else keeps its shape (the member's own checks judge it).
 */
export function shapeFor(
  dims: readonly number[],
  batching: boolean,
  tensorBatchSize: number,
  shape: readonly number[],
): readonly number[] {
  if (batching === (tensorBatchSize !== 0)) return shape;
  if (batching) return dimsAgree(dims, shape) ? [1, ...shape] : shape;
  return !dimsAgree(dims, shape) && tensorBatchSize === 1 ? shape.slice(1) : shape;
}
