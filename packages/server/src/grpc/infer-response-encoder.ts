/**
 * Encodes the core's InferenceResponse as Triton's gRPC server does (infer_handler.h): every output in
 * `outputs` with its name, datatype and shape, and its bytes in `raw_output_contents` at the same index
 * (BYTES in the binary tensor extension's form: a 4-byte length then the bytes); `id` echoed; response
 * parameters as InferParameter (integers int64_param, other numbers double_param).
 */
import type { inference } from "@tbench/proto";
import { isBytesData } from "../core/bytes-data.js";
import type { InferenceResponse, Parameters, TensorData } from "../core/types.js";

type InferParameter = inference.InferParameter.$Properties;

/** A v2 parameter value as an InferParameter. */
export function inferParameter(value: string | number | boolean): InferParameter {
  if (typeof value === "boolean") return { bool_param: value };
  if (typeof value === "string") return { string_param: value };
  return Number.isSafeInteger(value) ? { int64_param: value } : { double_param: value };
}

function parametersOf(parameters: Parameters | undefined): Record<string, InferParameter> {
  const result: Record<string, InferParameter> = {};
  if (parameters === undefined) return result;
  for (const [key, value] of Object.entries(parameters)) result[key] = inferParameter(value);
  return result;
}

function rawBytes(data: TensorData): Uint8Array {
  if (isBytesData(data)) return data.wire;
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** The ModelInferResponse for `response` (plain properties; the generated encoder serializes them). */
export function encodeGrpcInferResponse(
  response: InferenceResponse,
): inference.ModelInferResponse.$Properties {
  return {
    model_name: response.model,
    model_version: response.version,
    id: response.id ?? "",
    parameters: parametersOf(response.parameters),
    outputs: response.outputs.map((output) => ({
      name: output.name,
      datatype: output.datatype,
      shape: [...output.shape],
    })),
    raw_output_contents: response.outputs.map((output) => rawBytes(output.data)),
  };
}
