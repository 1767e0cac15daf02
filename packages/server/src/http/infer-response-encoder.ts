/**
 * Encodes the core's InferenceResponse as Triton's HTTP server does: a JSON object (`id` when the request had
 * one, `model_name`, `model_version`, `parameters`, `outputs`), outputs either inline as `data` or, with the
 * binary tensor extension, as `parameters.binary_data_size` with the raw bytes appended after the JSON in
 * output order. The JSON length goes in the Inference-Header-Content-Length response header.
 */
import type { InferenceResponse, Tensor } from "../core/types.js";
import { binaryByteSize, encodeBinaryData } from "./binary-tensor.js";
import type { DecodedInferRequest } from "./infer-request-decoder.js";
import { encodeJsonData } from "./json-tensor.js";

/** The response body in pieces: the JSON header, then binary sections, with their total size. */
export interface EncodedInferResponse {
  readonly json: Buffer;
  readonly binary: readonly Uint8Array[];
  readonly byteLength: number;
}

function parametersJson(parameters: InferenceResponse["parameters"]): string {
  if (parameters === undefined) return "";
  const keys = Object.keys(parameters);
  if (keys.length === 0) return "";
  return `,"parameters":${JSON.stringify(parameters)}`;
}

/** Encodes `response` for the request decoded as `decoded`. */
export function encodeInferResponse(
  response: InferenceResponse,
  decoded: DecodedInferRequest,
): EncodedInferResponse {
  let json = "{";
  if (response.id !== undefined && response.id !== "") json += `"id":${JSON.stringify(response.id)},`;
  json += `"model_name":${JSON.stringify(response.model)},"model_version":${JSON.stringify(response.version)}`;
  json += parametersJson(response.parameters);
  json += ',"outputs":[';
  const binary: Uint8Array[] = [];
  let binaryLength = 0;
  const outputs = response.outputs;
  for (let i = 0; i < outputs.length; i++) {
    const output: Tensor = outputs[i]!;
    const encoding = decoded.outputs?.get(output.name);
    if (decoded.outputs !== undefined && encoding === undefined) continue;
    const asBinary = encoding !== undefined ? encoding.binary : decoded.defaultBinary;
    if (json.charCodeAt(json.length - 1) !== 91 /* [ */) json += ",";
    json += `{"name":${JSON.stringify(output.name)},"datatype":"${output.datatype}","shape":[${output.shape.join(",")}]`;
    if (asBinary) {
      const size = binaryByteSize(output.data);
      json += `,"parameters":{"binary_data_size":${size}}}`;
      if (size > 0) {
        binary.push(encodeBinaryData(output.data));
        binaryLength += size;
      }
    } else {
      json += `,"data":${encodeJsonData(output.data, output.datatype)}}`;
    }
  }
  json += "]}";
  const jsonBuffer = Buffer.from(json, "utf8");
  return { json: jsonBuffer, binary, byteLength: jsonBuffer.byteLength + binaryLength };
}
