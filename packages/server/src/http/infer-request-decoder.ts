/**
 * Decodes an infer request body (KServe v2 JSON, optionally followed by binary tensor data) into the core's
 * InferenceRequest, plus how each output should be encoded. Structure errors use Triton's wording
 * ("Unable to parse 'inputs'", "unexpected additional input data for model ..."). Validation is written by
 * hand rather than with a schema library because this is the hot path and the messages must read like
 * Triton's; everything past the structure (names, datatypes, shapes against the model) is the core's.
 */
import { type Datatype, datatypeInfo, isDatatype } from "@tbench/proto";
import { bytesTensorTooLarge } from "../core/bytes-data.js";
import type { InferenceRequest, Parameters, RequestedOutput, Tensor, TensorData } from "../core/types.js";
import { decodeBinaryData } from "./binary-tensor.js";
import { badRequest } from "./http-error.js";
import { decodeJsonData } from "./json-tensor.js";

/** How one requested output goes back to the client. */
export interface OutputEncoding {
  readonly binary: boolean;
  /** Top-k classification asked for; 0 for none. */
  readonly classification: number;
}

/** A decoded infer request and its response encoding plan. */
export interface DecodedInferRequest {
  readonly request: InferenceRequest;
  /** Encoding of outputs the request did not name (the `binary_data_output` request parameter). */
  readonly defaultBinary: boolean;
  /** Encoding per named output; undefined when the request names none. */
  readonly outputs: ReadonlyMap<string, OutputEncoding> | undefined;
}

/** Options of decodeInferRequest: where the request went and the limits that apply. */
export interface DecodeInferOptions {
  readonly model: string;
  readonly version: string | undefined;
  /** Bytes of the body that are JSON (Inference-Header-Content-Length, or the whole body). */
  readonly headerLength: number;
  /** Largest tensor a JSON `data` array may describe, in bytes (--http-max-input-size). */
  readonly maxInputSize: number;
  /** Most elements one BYTES input may have (--max-bytes-tensor-elements), checked from its shape. */
  readonly maxBytesTensorElements: number;
  readonly signal: AbortSignal | undefined;
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isUint(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function parseJsonHeader(body: Uint8Array, headerLength: number): JsonObject {
  const text = Buffer.from(body.buffer, body.byteOffset, headerLength).toString("utf8");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = text.length === 0 ? "The document is empty." : (error as Error).message;
    throw badRequest(`failed to parse the request JSON buffer: ${reason}`);
  }
  if (!isObject(value)) throw badRequest("failed to parse the request JSON buffer: expected a JSON object");
  return value;
}

function parseRequestParameters(raw: unknown): {
  parameters: Record<string, string | number | boolean> | undefined;
  priority: number | undefined;
  timeoutUs: number | undefined;
  binaryOutput: boolean;
} {
  let priority: number | undefined;
  let timeoutUs: number | undefined;
  let binaryOutput = false;
  if (raw === undefined) return { parameters: undefined, priority, timeoutUs, binaryOutput };
  if (!isObject(raw)) throw badRequest("failed to get request params.: 'parameters' must be a JSON object");
  let parameters: Record<string, string | number | boolean> | undefined;
  for (const key of Object.keys(raw)) {
    const value = raw[key];
    if (key === "priority") {
      if (!isUint(value)) throw badRequest("Unable to parse 'priority': expected an unsigned integer");
      priority = value;
    } else if (key === "timeout") {
      if (!isUint(value)) throw badRequest("Unable to parse 'timeout': expected an unsigned integer");
      timeoutUs = value;
    } else if (key === "binary_data_output") {
      if (typeof value !== "boolean")
        throw badRequest("Unable to parse 'binary_data_output': expected a boolean");
      binaryOutput = value;
    } else if (key.startsWith("triton_")) {
      throw badRequest(
        "parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified.",
      );
    } else {
      if (typeof value !== "string" && typeof value !== "boolean" && !Number.isSafeInteger(value)) {
        throw badRequest(
          `parameter '${key}' has invalid type. It should be either 'int', 'bool', or 'string'.`,
        );
      }
      parameters ??= {};
      parameters[key] = value as string | number | boolean;
    }
  }
  return { parameters, priority, timeoutUs, binaryOutput };
}

function parseShape(raw: unknown, input: string): number[] {
  if (!Array.isArray(raw))
    throw badRequest(`Unable to parse 'shape': input '${input}' needs an array of dimensions`);
  for (const d of raw) {
    if (!isUint(d)) {
      throw badRequest(
        `Unable to parse 'shape': input '${input}' has dimension ${JSON.stringify(d)}; dimensions are non-negative integers`,
      );
    }
  }
  return raw as number[];
}

function elementCountOf(shape: readonly number[], input: string): number {
  let count = 1;
  for (const d of shape) count *= d;
  if (!Number.isSafeInteger(count)) {
    throw badRequest(`invalid shape for input '${input}': shape [${shape.join(",")}] has too many elements`);
  }
  return count;
}

interface Cursor {
  offset: number;
}

function decodeInput(raw: unknown, body: Uint8Array, cursor: Cursor, options: DecodeInferOptions): Tensor {
  const { model } = options;
  if (!isObject(raw)) throw badRequest("Unable to parse 'inputs': each input must be a JSON object");
  const name = raw["name"];
  if (typeof name !== "string") throw badRequest("Unable to parse 'name': each input needs a string 'name'");
  const datatypeRaw = raw["datatype"];
  if (typeof datatypeRaw !== "string") {
    throw badRequest(`Unable to parse 'datatype': input '${name}' needs a string 'datatype'`);
  }
  if (!isDatatype(datatypeRaw)) {
    throw badRequest(`invalid datatype '${datatypeRaw}' for input '${name}' of model '${model}'`);
  }
  const datatype: Datatype = datatypeRaw;
  const shape = parseShape(raw["shape"], name);
  const parameters = raw["parameters"];
  let binarySize: number | undefined;
  if (parameters !== undefined) {
    if (!isObject(parameters))
      throw badRequest(`Unable to parse 'parameters' of input '${name}': expected an object`);
    if (parameters["shared_memory_region"] !== undefined) {
      throw badRequest(`input '${name}': shared memory regions are not supported by this server`);
    }
    const size = parameters["binary_data_size"];
    if (size !== undefined) {
      if (!isUint(size)) throw badRequest(`Unable to parse 'binary_data_size' of input '${name}'`);
      binarySize = size;
    }
  }
  const hasData = raw["data"] !== undefined;
  if (hasData === (binarySize !== undefined)) {
    throw badRequest(
      "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', " +
        `'shared_memory_region' in 'parameters'. But ${hasData ? "set 'data' 'binary_data_size'" : "no field is set"} (input '${name}')`,
    );
  }
  const elementCount = elementCountOf(shape, name);
  if (datatype === "BYTES" && elementCount > options.maxBytesTensorElements) {
    // Before any per-element work: the worker makes one string per element (core/bytes-data.ts).
    throw badRequest(bytesTensorTooLarge(model, name, elementCount, options.maxBytesTensorElements));
  }
  const ctx = { model, input: name };
  let data: TensorData;
  if (binarySize !== undefined) {
    const available = body.byteLength - cursor.offset;
    if (binarySize > available) {
      throw badRequest(
        `unexpected size for input '${name}', expecting ${binarySize - available} additional bytes for model '${model}'`,
      );
    }
    data = decodeBinaryData(
      body.subarray(cursor.offset, cursor.offset + binarySize),
      datatype,
      elementCount,
      ctx,
    );
    cursor.offset += binarySize;
  } else {
    const byteSize = (datatypeInfo(datatype)?.byteSize ?? 1) * elementCount;
    if (byteSize > options.maxInputSize) {
      throw badRequest(
        `JSON input '${name}' has a byte_size (${byteSize} bytes) that exceeds the maximum allowed value of ` +
          `${options.maxInputSize} bytes. Use --http-max-input-size to increase the limit.`,
      );
    }
    data = decodeJsonData(raw["data"], datatype, shape, elementCount, ctx);
  }
  return { name, datatype, shape, data };
}

function decodeOutputs(raw: unknown): {
  requested: RequestedOutput[] | undefined;
  encodings: Map<string, OutputEncoding> | undefined;
} {
  if (raw === undefined) return { requested: undefined, encodings: undefined };
  if (!Array.isArray(raw)) throw badRequest("Unable to parse 'outputs': expected an array");
  const requested: RequestedOutput[] = [];
  const encodings = new Map<string, OutputEncoding>();
  for (const item of raw) {
    if (!isObject(item)) throw badRequest("Unable to parse 'outputs': each output must be a JSON object");
    const name = item["name"];
    if (typeof name !== "string")
      throw badRequest("Unable to parse 'name': each output needs a string 'name'");
    let binary = false;
    let classification = 0;
    const parameters = item["parameters"];
    if (parameters !== undefined) {
      if (!isObject(parameters))
        throw badRequest(`Unable to parse 'parameters' of output '${name}': expected an object`);
      if (parameters["shared_memory_region"] !== undefined) {
        throw badRequest(`output '${name}': shared memory regions are not supported by this server`);
      }
      const b = parameters["binary_data"];
      if (b !== undefined) {
        if (typeof b !== "boolean")
          throw badRequest(`Unable to parse 'binary_data' of output '${name}': expected a boolean`);
        binary = b;
      }
      const c = parameters["classification"];
      if (c !== undefined) {
        if (!isUint(c))
          throw badRequest(
            `Unable to set 'classification' of output '${name}': expected an unsigned integer`,
          );
        classification = c;
      }
    }
    // The core computes classifications (it holds the label files); the front end only encodes the BYTES result.
    requested.push(classification > 0 ? { name, classification } : { name });
    encodings.set(name, { binary, classification });
  }
  return { requested, encodings };
}

/** Decodes `body` (already decompressed) into a core request and the response encoding plan. */
export function decodeInferRequest(body: Uint8Array, options: DecodeInferOptions): DecodedInferRequest {
  const header = parseJsonHeader(body, options.headerLength);
  const idRaw = header["id"];
  if (idRaw !== undefined && typeof idRaw !== "string")
    throw badRequest("Unable to parse 'id': expected a string");
  const { parameters, priority, timeoutUs, binaryOutput } = parseRequestParameters(header["parameters"]);
  const inputsRaw = header["inputs"];
  if (!Array.isArray(inputsRaw)) throw badRequest("Unable to parse 'inputs': expected an array of inputs");
  const cursor: Cursor = { offset: options.headerLength };
  const inputs: Tensor[] = new Array(inputsRaw.length);
  for (let i = 0; i < inputsRaw.length; i++) inputs[i] = decodeInput(inputsRaw[i], body, cursor, options);
  if (cursor.offset !== body.byteLength) {
    throw badRequest(`unexpected additional input data for model '${options.model}'`);
  }
  const { requested, encodings } = decodeOutputs(header["outputs"]);
  const request: InferenceRequest = {
    model: options.model,
    inputs,
    ...(options.version !== undefined ? { version: options.version } : {}),
    ...(idRaw !== undefined ? { id: idRaw } : {}),
    ...(requested !== undefined ? { outputs: requested } : {}),
    ...(priority !== undefined ? { priority } : {}),
    ...(timeoutUs !== undefined ? { timeoutUs } : {}),
    ...(parameters !== undefined ? { parameters: parameters as Parameters } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  };
  return { request, defaultBinary: binaryOutput, outputs: encodings };
}
