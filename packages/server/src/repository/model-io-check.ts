/**
 * The check of a config against the ONNX model it serves, as Triton's onnxruntime backend does at instance
 * creation (ValidateInputs, ValidateOutputs, CompareDimsSupported), with its messages.
 */
import { type Datatype, datatypeFromOrtType, datatypeInfo } from "@tbench/proto";
import type { OnnxModelInfo, OnnxTensorInfo } from "./auto-complete.js";
import { dimsToString } from "./config-numbers.js";
import type { ModelSpec, TensorSpec } from "./model-spec.js";

function compareDims(
  model: string,
  tensor: string,
  modelShape: readonly number[],
  dims: readonly number[],
  maxBatchSize: number,
  exact: boolean,
): string | undefined {
  const matches = (full: readonly number[]) =>
    modelShape.length === full.length &&
    full.every((dim, i) => (!exact && modelShape[i] === -1) || modelShape[i] === dim);
  if (maxBatchSize > 0) {
    if (modelShape.length === 0 || modelShape[0] !== -1) {
      return (
        `model '${model}', tensor '${tensor}': for the model to support batching the shape should have at least ` +
        `1 dimension and the first dimension must be -1; but shape expected by the model is ${dimsToString(modelShape)}`
      );
    }
    const full = [-1, ...dims];
    if (!matches(full)) {
      return (
        `model '${model}', tensor '${tensor}': the model expects ${modelShape.length} dimensions (shape ` +
        `${dimsToString(modelShape)}) but the model configuration specifies ${full.length} dimensions (an initial ` +
        `batch dimension because max_batch_size > 0 followed by the explicit tensor shape, making complete shape ` +
        `${dimsToString(full)})`
      );
    }
    return undefined;
  }
  if (!matches(dims)) {
    return (
      `model '${model}', tensor '${tensor}': the model expects ${modelShape.length} dimensions (shape ` +
      `${dimsToString(modelShape)}) but the model configuration specifies ${dims.length} dimensions (shape ` +
      `${dimsToString(dims)})`
    );
  }
  return undefined;
}

function checkTensor(
  spec: ModelSpec,
  io: TensorSpec,
  kind: "input" | "output",
  infos: ReadonlyMap<string, OnnxTensorInfo>,
): string | undefined {
  const info = infos.get(io.name);
  if (!info) {
    const allowed = [...infos.keys()].sort().join(", ");
    return `unexpected inference ${kind} '${io.name}', allowed ${kind}s are: ${allowed}`;
  }
  const configType = datatypeInfo(io.datatype)?.configType ?? "TYPE_INVALID";
  const modelType = info.ortType === undefined ? undefined : ortToConfigType(info.ortType);
  if (io.datatype === "BF16") {
    return `unable to load model '${spec.name}', ${kind} '${io.name}' is TYPE_BF16, which onnxruntime-node cannot hold (no bfloat16 tensors)`;
  }
  if (modelType !== configType) {
    return (
      `unable to load model '${spec.name}', configuration expects datatype ${configType} for ${kind} '${io.name}', ` +
      `model provides ${modelType ?? "a non-tensor value"}`
    );
  }
  const dims = io.reshape ?? io.dims;
  if (info.dims.length === 0) {
    if (dims.some((d) => d !== 1)) {
      return (
        `unable to load model '${spec.name}', scalar tensor '${io.name}', should only provide 1 in the model ` +
        `configuration when the model doesn't support batching. Model configuration provided: ${dimsToString(dims)}.`
      );
    }
    return undefined;
  }
  return compareDims(spec.name, io.name, info.dims, dims, spec.maxBatchSize, kind === "output");
}

/** The config type name of an onnxruntime-node type, as Triton names what a model provides. */
function ortToConfigType(ortType: string): string {
  // The datatype table has no ORT type for BF16 (onnxruntime-node has no bfloat16 tensors).
  if (ortType === "bfloat16") return "TYPE_BF16";
  return datatypeFromOrtType(ortType)?.configType ?? `an unsupported type '${ortType}'`;
}

/** Returns the first mismatch between the config and the model (Triton's message), or undefined. */
export function checkConfigAgainstModel(spec: ModelSpec, model: OnnxModelInfo): string | undefined {
  // A sequence model's control inputs and implicit states are model inputs (and outputs) too, that the
  // server fills and no client sends (Triton's backend counts them the same way).
  const { inputs: sequenceInputs, outputs: sequenceOutputs } = sequenceTensors(spec);
  const expected = spec.inputs.length + sequenceInputs.length;
  if (model.inputs.length !== expected) {
    return (
      `unable to load model '${spec.name}', configuration expects ${expected} inputs, ` +
      `model provides ${model.inputs.length}`
    );
  }
  const inputs = new Map(model.inputs.map((info) => [info.name, info]));
  const outputs = new Map(model.outputs.map((info) => [info.name, info]));
  for (const io of spec.inputs) {
    if (io.optional && spec.maxBatchSize !== 0) {
      return `unable to load model '${spec.name}', optional input '${io.name}' is not supported for models that support batching`;
    }
    const problem = checkTensor(spec, io, "input", inputs);
    if (problem) return problem;
  }
  for (const io of spec.outputs) {
    const problem = checkTensor(spec, io, "output", outputs);
    if (problem) return problem;
  }
  for (const [ios, kind, infos] of [
    [sequenceInputs, "input", inputs],
    [sequenceOutputs, "output", outputs],
  ] as const) {
    for (const io of ios) {
      if (!infos.has(io.name)) {
        return `unable to load model '${spec.name}', configuration specifies sequence batching ${kind} '${io.name}', but the model does not provide that ${kind}`;
      }
      const problem = checkTensor(spec, io, kind, infos);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** The tensors sequence_batching adds to the model's own: controls ([1] per row) and states. */
function sequenceTensors(spec: ModelSpec): { inputs: TensorSpec[]; outputs: TensorSpec[] } {
  const sequence = spec.sequenceBatching;
  if (!sequence) return { inputs: [], outputs: [] };
  const tensor = (name: string, datatype: Datatype, dims: readonly number[]): TensorSpec => ({
    name,
    datatype,
    dims,
    optional: false,
    allowRaggedBatch: false,
    labelFilename: "",
  });
  return {
    inputs: [
      ...sequence.controls.map((control) => tensor(control.name, control.datatype, [1])),
      ...sequence.states.map((state) => tensor(state.inputName, state.datatype, state.dims)),
    ],
    outputs: sequence.states.map((state) => tensor(state.outputName, state.datatype, state.dims)),
  };
}
