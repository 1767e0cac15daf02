/**
 * Auto-complete of a config from the ONNX model, following Triton's onnxruntime backend
 * (ModelState::AutoCompleteConfig, AutoCompleteMaxBatch, AutoCompleteIO): runs only when the config lacks
 * inputs or outputs; a model whose every input and output has a variable first dimension supports batching
 * and gets `max_batch_size` 4 (Triton's default-max-batch-size) and `dynamic_batching {}` when unset.
 */
import { datatypeFromOrtType, type ModelConfig, type ModelInput, type ModelOutput } from "@tbench/proto";
import type { Logger } from "../core/logger.js";

/** An input or output as the ONNX model declares it (from onnxruntime-node's session metadata). */
export interface OnnxTensorInfo {
  readonly name: string;
  /** onnxruntime-node tensor type (`float32`, `string`, ...); `undefined` for non-tensor values. */
  readonly ortType: string | undefined;
  /** -1 for symbolic or unknown dimensions; empty for scalars. */
  readonly dims: readonly number[];
}

/** What the ONNX model declares. */
export interface OnnxModelInfo {
  readonly inputs: readonly OnnxTensorInfo[];
  readonly outputs: readonly OnnxTensorInfo[];
}

/** Triton's `--backend-config=onnxruntime,default-max-batch-size` default. */
export const DEFAULT_MAX_BATCH_SIZE = 4;

/** The config form of what the model declares (what ModelInput and ModelOutput have in common). */
function completedIo(info: OnnxTensorInfo, maxBatchSize: number): ModelInput & ModelOutput {
  const row = info.ortType === undefined ? undefined : datatypeFromOrtType(info.ortType);
  const io: ModelInput & ModelOutput = { name: info.name, data_type: row?.configType ?? "TYPE_INVALID" };
  const dims = info.dims.slice(maxBatchSize > 0 ? 1 : 0).map(String);
  if (dims.length === 0) {
    // A scalar: dims [1]; with batching, an empty reshape makes the model see [batch].
    dims.push("1");
    if (maxBatchSize > 0) io.reshape = { shape: [] };
  }
  io.dims = dims;
  return io;
}

/** Whether the config needs auto-complete (it lacks inputs or outputs). */
export function needsAutoComplete(config: ModelConfig): boolean {
  return !config.input?.length || !config.output?.length;
}

/**
 * Completes `config` in place from `model`. Returns a problem message (Triton's text) when the config's
 * max_batch_size contradicts a model that cannot batch.
 */
export function autoCompleteConfig(
  config: ModelConfig,
  model: OnnxModelInfo,
  logger: Logger,
): string | undefined {
  if (!needsAutoComplete(config)) return undefined;
  const name = config.name ?? "";
  const all = [...model.inputs, ...model.outputs];
  const canBatch = all.every((info) => info.dims.length > 0 && info.dims[0] === -1);
  if (canBatch) {
    if (!config.max_batch_size) {
      config.max_batch_size = DEFAULT_MAX_BATCH_SIZE;
      logger.warn(
        `autofilled max_batch_size to ${DEFAULT_MAX_BATCH_SIZE} for model '${name}' since batching is supported ` +
          "but no max_batch_size is specified in model configuration. Must specify max_batch_size to utilize " +
          "autofill with a larger max batch size",
      );
    }
    if (config.max_batch_size > 1 && !config.dynamic_batching && !config.sequence_batching) {
      config.dynamic_batching = {};
    }
  } else if (config.max_batch_size) {
    return `autofill failed for model '${name}': model does not support batching while non-zero max_batch_size is specified`;
  }
  const maxBatchSize = config.max_batch_size ?? 0;
  // Sequence controls and states are the server's to fill and read, never a client's tensors.
  const sequence = config.sequence_batching;
  const serverInputs = new Set([
    ...(sequence?.control_input ?? []).map((c) => c.name ?? ""),
    ...(sequence?.state ?? []).map((s) => s.input_name ?? ""),
  ]);
  const serverOutputs = new Set((sequence?.state ?? []).map((s) => s.output_name ?? ""));
  if (!config.input?.length) {
    config.input = model.inputs
      .filter((info) => !serverInputs.has(info.name))
      .map((info) => completedIo(info, maxBatchSize));
  }
  if (!config.output?.length) {
    config.output = model.outputs
      .filter((info) => !serverOutputs.has(info.name))
      .map((info) => completedIo(info, maxBatchSize));
  }
  return undefined;
}
