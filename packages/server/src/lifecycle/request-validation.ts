/**
 * Request validation against a model's configuration, as Triton's InferenceRequest::Normalize does it, with
 * its messages (`[request id: <id>] ...`). Produces the request's batch size and each input's shape without
 * the batch dimension (after reshape), which the batcher groups by.
 */
import { datatypeInfo } from "@tbench/proto";
import {
  bytesElementProblem,
  bytesTensorTooLarge,
  DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
  isBytesData,
} from "../core/bytes-data.js";
import { logRequest } from "../core/log-request.js";
import { ServerError } from "../core/server-error.js";
import type { BytesData, InferenceRequest, Tensor } from "../core/types.js";
import { dimsToString } from "../repository/config-numbers.js";
import type { ModelSpec, TensorSpec } from "../repository/model-spec.js";
import type { ValidatedInput, ValidatedRequest } from "../scheduler/scheduler.js";

/** The largest tensor dimension onnxruntime-node's binding accepts (2^32 - 1; Triton's backend takes int64). */
const MAX_ORT_DIM = 4294967295;

function invalid(message: string): ServerError {
  return new ServerError("INVALID_ARG", message);
}

function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

function applyReshape(spec: TensorSpec, shape: readonly number[]): readonly number[] {
  if (!spec.reshape) return shape;
  const variable = spec.dims.map((d, i) => (d === -1 ? shape[i]! : undefined)).filter((d) => d !== undefined);
  return spec.reshape.map((d) => (d === -1 ? (variable.shift() ?? -1) : d));
}

function validateInputCount(spec: ModelSpec, request: InferenceRequest, prefix: string): void {
  let requiredCount = 0;
  for (const io of spec.inputs) if (!io.optional) requiredCount++;
  const count = request.inputs.length;
  if (count <= spec.inputs.length && count >= requiredCount) return;
  const given = request.inputs.map((t) => t.name);
  const required = spec.inputs.filter((io) => !io.optional);
  const missing = required.filter((io) => !given.includes(io.name)).map((io) => `'${io.name}'`);
  const got = given.length === 0 ? "[]" : `[${given.map((n) => `'${n}'`).join(",")}]`;
  // Triton builds "[...]" by trimming a trailing comma; with nothing missing that leaves "]".
  const missingText = missing.length === 0 ? "]" : `[${missing.join(",")}]`;
  const tail = `inputs for model '${spec.name}'. Got input(s) ${got}, but missing required input(s) ${missingText}. Please provide all required input(s).`;
  if (required.length === spec.inputs.length) {
    throw invalid(`${prefix}expected ${spec.inputs.length} inputs but got ${given.length} ${tail}`);
  }
  throw invalid(
    `${prefix}expected number of inputs between ${required.length} and ${spec.inputs.length} but got ${given.length} ${tail}`,
  );
}

/**
 * Checks BYTES data on its bytes, in one walk and without making strings (the worker makes them), in the
 * order of Triton's InferenceRequest::ValidateBytesInputs and with its messages: a length cut short, an
 * element past the shape's count (it stops there), then the count. An element whose bytes run past the
 * end Triton's core lets through (its backend refuses it later); it is refused here, in words of our own.
 * onnxruntime-node holds string tensor elements as JavaScript strings and hands them to onnxruntime as C
 * strings, so an element with a NUL byte would be cut short there (Triton's onnxruntime backend cuts it
 * too, silently) and invalid UTF-8 would be replaced; both are refused here so that no element changes on
 * its way to the model.
 */
function validateBytesData(
  spec: ModelSpec,
  io: TensorSpec,
  data: BytesData,
  count: number,
  prefix: string,
): void {
  const wire = data.wire;
  const size = wire.byteLength;
  const where = `for inference input '${io.name}' for model '${spec.name}'`;
  let offset = 0;
  let checked = 0;
  let problem: { index: number; why: string } | undefined;
  while (offset < size) {
    if (size - offset < 4) {
      throw invalid(
        `${prefix}incomplete string length indicator ${where}, expecting 4 bytes but only ${size - offset} bytes available. Please make sure the string length indicator is in one buffer.`,
      );
    }
    const length =
      (wire[offset]! | (wire[offset + 1]! << 8) | (wire[offset + 2]! << 16) | (wire[offset + 3]! << 24)) >>>
      0;
    checked++;
    if (checked > count) {
      throw invalid(`${prefix}unexpected number of string elements ${checked} ${where}, expecting ${count}`);
    }
    offset += 4;
    if (length > size - offset) {
      throw invalid(
        `${prefix}input '${io.name}' of model '${spec.name}': BYTES element ${checked - 1} declares ${length} bytes, ${size - offset} are left`,
      );
    }
    if (problem === undefined) {
      const why = bytesElementProblem(wire, offset, offset + length);
      if (why !== undefined) problem = { index: checked - 1, why };
    }
    offset += length;
  }
  if (checked !== count) {
    throw invalid(`${prefix}expected ${count} string elements ${where}, got ${checked}`);
  }
  if (checked !== data.count) {
    throw invalid(
      `${prefix}input '${io.name}' for model '${spec.name}': its BYTES data says ${data.count} elements, its wire form holds ${checked}`,
    );
  }
  if (problem !== undefined) {
    throw invalid(
      `${prefix}input '${io.name}' of model '${spec.name}': element ${problem.index} ${problem.why}, which the onnxruntime backend cannot carry`,
    );
  }
}

/** Checks the data against datatype and shape (BYTES: the element limit first, from the shape alone). */
function validateData(
  spec: ModelSpec,
  io: TensorSpec,
  tensor: Tensor,
  fullShape: readonly number[],
  prefix: string,
  maxBytesTensorElements: number,
): void {
  const count = elementCount(fullShape);
  if (io.datatype === "BYTES") {
    if (count > maxBytesTensorElements) {
      throw invalid(`${prefix}${bytesTensorTooLarge(spec.name, io.name, count, maxBytesTensorElements)}`);
    }
    if (!isBytesData(tensor.data)) {
      throw invalid(
        `${prefix}input '${io.name}' for model '${spec.name}' is BYTES but its data is not BytesData (a wire form and a count)`,
      );
    }
    validateBytesData(spec, io, tensor.data, count, prefix);
    return;
  }
  const info = datatypeInfo(io.datatype)!;
  if (isBytesData(tensor.data) || !(tensor.data instanceof info.typedArray!)) {
    throw invalid(
      `${prefix}input '${io.name}' for model '${spec.name}' holds its data in the wrong container for ${io.datatype}`,
    );
  }
  const expected = count * info.byteSize!;
  const got = tensor.data.byteLength;
  if (got !== expected) {
    throw invalid(
      `${prefix}input byte size mismatch for input '${io.name}' for model '${spec.name}'. Expected ${expected}, got ${got}`,
    );
  }
}

/**
 * Validates `request` against `spec`; throws ServerError INVALID_ARG with Triton's message. A BYTES input
 * with more than `maxBytesTensorElements` elements is refused from its shape.
 */
export function validateRequest(
  spec: ModelSpec,
  request: InferenceRequest,
  maxBytesTensorElements: number = DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
): ValidatedRequest {
  const prefix = logRequest(request);
  const outputs = spec.outputs;
  let requested: readonly TensorSpec[] = outputs;
  // Triton refuses a repeated input or output while it builds the request (AddOriginalInput,
  // AddOriginalRequestedOutput), inputs first; everything after is Normalize, which starts with outputs.
  const seen = new Set<string>();
  for (const tensor of request.inputs) {
    if (seen.has(tensor.name)) throw invalid(`${prefix}input '${tensor.name}' already exists in request`);
    seen.add(tensor.name);
  }
  if (request.outputs && request.outputs.length > 0) {
    const names = new Set<string>();
    for (const output of request.outputs) {
      if (names.has(output.name)) throw invalid(`${prefix}output '${output.name}' already exists in request`);
      names.add(output.name);
    }
    for (const output of request.outputs) {
      if (!outputs.some((o) => o.name === output.name)) {
        throw invalid(`unexpected inference output '${output.name}' for model '${spec.name}'`);
      }
    }
    requested = outputs.filter((o) => names.has(o.name));
  }
  validateInputCount(spec, request, prefix);
  // Linear searches: models have a handful of inputs, and this runs for every request.
  for (const tensor of request.inputs) {
    if (!spec.inputs.some((io) => io.name === tensor.name)) {
      throw invalid(`unexpected inference input '${tensor.name}' for model '${spec.name}'`);
    }
  }
  let batchSize = 0;
  if (spec.maxBatchSize > 0) {
    for (const tensor of request.inputs) {
      if (tensor.shape.length === 0) {
        throw invalid(
          `${prefix}input '${tensor.name}' has no shape but model requires batch dimension for '${spec.name}'`,
        );
      }
      if (batchSize === 0) batchSize = tensor.shape[0]!;
      else if (tensor.shape[0] !== batchSize) {
        throw invalid(
          `${prefix}input '${tensor.name}' batch size does not match other inputs for '${spec.name}'`,
        );
      }
    }
    // Triton's loop takes the batch size from the first input whose first dimension is not 0, so an earlier
    // input with 0 rows escapes its check; here it is refused as any other mismatch would be (the batch
    // would otherwise reach the instance with rows missing: a 500 from onnxruntime, the fuzz test found).
    const zeroRows = batchSize > 0 ? request.inputs.find((tensor) => tensor.shape[0] === 0) : undefined;
    if (zeroRows !== undefined) {
      throw invalid(
        `${prefix}input '${zeroRows.name}' batch size does not match other inputs for '${spec.name}'`,
      );
    }
    if (batchSize > spec.maxBatchSize) {
      throw invalid(
        `${prefix}inference request batch-size must be <= ${spec.maxBatchSize} for '${spec.name}'`,
      );
    }
  }
  const inputs: ValidatedInput[] = [];
  for (const io of spec.inputs) {
    const tensor = request.inputs.find((t) => t.name === io.name);
    if (!tensor) continue;
    if (tensor.datatype !== io.datatype) {
      throw invalid(
        `${prefix}inference input '${io.name}' data-type is '${tensor.datatype}', but model '${spec.name}' expects '${io.datatype}'`,
      );
    }
    const shape = spec.maxBatchSize > 0 ? tensor.shape.slice(1) : tensor.shape;
    let matches = shape.length === io.dims.length;
    for (let i = 0; matches && i < shape.length; i++) {
      if (shape[i] === -1) {
        throw invalid(
          `${prefix}All input dimensions should be specified for input '${io.name}' for model '${spec.name}', got ${dimsToString(tensor.shape)}`,
        );
      }
      if (io.dims[i] !== -1 && io.dims[i] !== shape[i]) matches = false;
    }
    if (!matches || shape.some((d) => !Number.isInteger(d) || d < 0)) {
      const full = spec.maxBatchSize > 0 ? [-1, ...io.dims] : io.dims;
      const note =
        spec.maxBatchSize > 0
          ? "NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended " +
            "to each input shape. If you want to specify the full shape including the batch dim in your input dims " +
            "config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size."
          : "";
      throw invalid(
        `${prefix}unexpected shape for input '${io.name}' for model '${spec.name}'. Expected ${dimsToString(full)}, got ${dimsToString(tensor.shape)}. ${note}`,
      );
    }
    const reshaped = applyReshape(io, shape);
    validateData(spec, io, tensor, tensor.shape, prefix, maxBytesTensorElements);
    // Only a tensor without elements gets here with such a dimension (its data would not fit in memory).
    const wide = tensor.shape.find((d) => d > MAX_ORT_DIM);
    if (wide !== undefined) {
      throw invalid(
        `${prefix}input '${io.name}' of model '${spec.name}' has dimension ${wide}; onnxruntime-node takes dimensions up to ${MAX_ORT_DIM}`,
      );
    }
    inputs.push({ spec: io, tensor, shape: reshaped });
  }
  validateCorrelationId(spec, request, prefix);
  return { request, batchSize, inputs, outputs: requested };
}

/**
 * Triton's ValidateCorrelationId (part of Normalize): for a sequence model with a CORRID control, a string
 * id needs a STRING control and a numeric id (no id is the number 0) a numeric one.
 */
function validateCorrelationId(spec: ModelSpec, request: InferenceRequest, prefix: string): void {
  const control = spec.sequenceBatching?.controls.find((c) => c.kind === "CORRID");
  if (control === undefined) return;
  const given = typeof request.sequence?.id === "string" ? "BYTES" : "UINT64";
  if ((given === "BYTES") === (control.datatype === "BYTES")) return;
  throw invalid(
    `${prefix}sequence batching control '${control.name}' data-type is '${given}', but model '${spec.name}' expects '${control.datatype}'`,
  );
}
