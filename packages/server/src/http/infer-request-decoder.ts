/**
 * Decodes an infer request body (KServe v2 JSON, optionally followed by binary tensor data) into the core's
 * InferenceRequest, plus how each output should be encoded. The fields are read in the order Triton's HTTP
 * server reads them (server `src/http_server.cc`: EVBufferToInput -> ParseJsonTritonRequestID,
 * ParseJsonTritonParams, ParseJsonTritonIO) and refused with its words and status: TritonJson's failures
 * as 500 (see triton-json.ts), its own checks as 400. Validation is written by hand rather than with a
 * schema library because this is the hot path; everything past the structure (names, datatypes, shapes
 * against the model) is the core's.
 */
import {
  type Datatype,
  datatypeInfo,
  findDataSpans,
  findMemberSpan,
  isDatatype,
  type TextSpan,
} from "@tbench/proto";
import { bytesTensorTooLarge } from "../core/bytes-data.js";
import type { CancelSignal } from "../core/cancel-signal.js";
import { sequenceFlags } from "../core/sequence-flags.js";
import type { InferenceRequest, Parameters, RequestedOutput, Tensor, TensorData } from "../core/types.js";
import { decodeBinaryData } from "./binary-tensor.js";
import { badRequest, HttpError } from "./http-error.js";
import { dataNotArray, decodeJsonData, type JsonDataSource, type TensorContext } from "./json-tensor.js";
import {
  expectArray,
  expectString,
  findMember,
  isObject,
  isUnsignedInteger,
  type JsonObject,
  NON_ARRAY,
  NON_BOOLEAN,
  NON_OBJECT_MEMBERS,
  NON_STRING,
  NON_UNSIGNED,
  TRITON_JSON_STATUS,
  tritonJsonError,
} from "./triton-json.js";

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
  readonly signal: CancelSignal | undefined;
}

const INT64_MAX = 2n ** 63n - 1n;

function parseJsonHeader(body: Uint8Array, headerLength: number): { header: JsonObject; text: string } {
  const text = Buffer.from(body.buffer, body.byteOffset, headerLength).toString("utf8");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // Triton words it "failed to parse the request JSON buffer: <rapidjson's reason> at <offset>" (INTERNAL);
    // V8's reason differs in wording, except for the empty document.
    const reason = text.trim() === "" ? `The document is empty. at ${text.length}` : (error as Error).message;
    throw new HttpError(TRITON_JSON_STATUS, `failed to parse the request JSON buffer: ${reason}`);
  }
  // A document that is not an object has none of the members Triton looks for ('inputs' is then missing).
  return { header: isObject(value) ? value : {}, text };
}

function unsignedMember(params: JsonObject, key: string): number {
  const value = params[key];
  if (!isUnsignedInteger(value)) throw tritonJsonError(`Unable to parse '${key}'`, NON_UNSIGNED);
  return value;
}

function booleanMember(params: JsonObject, key: string, what = `Unable to parse '${key}'`): boolean {
  const value = params[key];
  if (typeof value !== "boolean") throw tritonJsonError(what, NON_BOOLEAN);
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
  if (!isObject(raw)) throw tritonJsonError("failed to get request params.", NON_OBJECT_MEMBERS);
  let parameters: Record<string, string | number | boolean> | undefined;
  for (const key of Object.keys(raw)) {
    const value = raw[key];
    if (key === "priority") {
      priority = unsignedMember(raw, key);
    } else if (key === "timeout") {
      timeoutUs = unsignedMember(raw, key);
    } else if (key === "binary_data_output") {
      binaryOutput = booleanMember(raw, key);
    } else if (key.startsWith("triton_")) {
      throw badRequest(
        "parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified.",
      );
    } else {
      if (key === "sequence_start" || key === "sequence_end") booleanMember(raw, key);
      // 2^64 itself may be the double of an exact 2^64 - 1: sequenceOf reads the digits.
      else if (
        key === "sequence_id" &&
        !isUnsignedInteger(value) &&
        value !== 2 ** 64 &&
        typeof value !== "string"
      ) {
        throw tritonJsonError("Unable to parse 'sequence_id'", NON_STRING);
      }
      // Triton keeps strings, booleans and any number (int or double); nothing else.
      if (typeof value !== "string" && typeof value !== "boolean" && typeof value !== "number") {
        throw badRequest(
          `parameter '${key}' has invalid type. It should be either 'int', 'bool', or 'string'.`,
        );
      }
      parameters ??= {};
      parameters[key] = value;
    }
  }
  return { parameters, priority, timeoutUs, binaryOutput };
}

function parseShape(value: unknown): number[] {
  const shape = expectArray(value, "shape", "Unable to parse 'shape'");
  for (const d of shape) {
    if (!isUnsignedInteger(d)) throw tritonJsonError("Unable to parse 'shape'", NON_UNSIGNED);
  }
  return shape as number[];
}

/**
 * Triton's GetElementCount (server src/common.cc) over the shape as int64: the count, 0 at the first zero
 * dimension, -2 at a dimension past INT64_MAX (negative once stored), -3 when the product overflows.
 */
function tritonElementCount(shape: readonly number[]): bigint {
  let count = 0n;
  let first = true;
  for (const d of shape) {
    const dim = BigInt.asIntN(64, BigInt(d));
    if (dim < 0n) return -2n;
    if (dim === 0n) return 0n;
    if (first) {
      count = dim;
      first = false;
    } else {
      if (count > INT64_MAX / dim) return -3n;
      count *= dim;
    }
  }
  return count;
}

function shapeText(shape: readonly number[]): string {
  return `[${shape.map((d) => BigInt.asIntN(64, BigInt(d)).toString()).join(",")}]`;
}

/**
 * The element count of a shape, when it is a safe integer (0 when a dimension is 0). Past that, a JSON
 * input gets Triton's refusal (invalid dimension, count overflow, byte size overflow, or the byte size
 * over --http-max-input-size, which any such count is); a binary one gets ours.
 */
function elementCountOf(shape: readonly number[], input: string, datatype: string, json: boolean): number {
  let count = 1;
  for (const d of shape) count *= d;
  if (Number.isSafeInteger(count)) return count;
  if (shape.includes(0)) return 0;
  if (!json) {
    throw badRequest(`invalid shape for input '${input}': shape [${shape.join(",")}] has too many elements`);
  }
  const big = tritonElementCount(shape);
  if (big === -2n) {
    throw badRequest(
      `invalid shape for input '${input}': shape ${shapeText(shape)} contains one or more invalid dimensions`,
    );
  }
  if (big === -3n) {
    throw badRequest(
      `invalid shape for input '${input}': shape ${shapeText(shape)} causes total element count to exceed maximum size of ${INT64_MAX}`,
    );
  }
  const size = isDatatype(datatype) ? BigInt(datatypeInfo(datatype)?.byteSize ?? 0) : 0n;
  if (size > 1n && big > INT64_MAX / size) {
    throw badRequest(
      `byte size overflow for input '${input}': element count (${big}) * data type size (${size}) exceeds maximum allowed size (${INT64_MAX})`,
    );
  }
  return Number(big);
}

/** Triton's one-of check of an input's `data`, `binary_data_size` and `shared_memory_region`. */
function checkContentKind(hasData: boolean, binary: boolean, sharedMemory: boolean): void {
  const set = Number(hasData) + Number(binary) + Number(sharedMemory);
  if (set !== 1) {
    let given = set === 0 ? " no field is set" : " set";
    if (hasData) given += " 'data'";
    if (binary) given += " 'binary_data_size'";
    if (sharedMemory) given += " 'shared_memory_region'";
    throw badRequest(
      "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', " +
        `'shared_memory_region' in 'parameters'. But${given}`,
    );
  }
}

/**
 * Triton's answer to any shared-memory tensor here: its region checks, then NOT_FOUND for the region, as
 * Triton answers a region nobody registered (tbench-server has no shared-memory API, so none ever is).
 */
function refuseSharedMemory(params: unknown): never {
  const region = findMember(params, "shared_memory_region");
  if (typeof region !== "string") throw tritonJsonError("Unable to parse 'shared_memory_region'", NON_STRING);
  for (const key of ["shared_memory_offset", "shared_memory_byte_size"]) {
    if (findMember(params, key) !== undefined) unsignedMember(params as JsonObject, key);
  }
  throw new HttpError(404, `Unable to find shared memory region: '${region}'`);
}

interface Cursor {
  offset: number;
}

/** What decodeInput needs beyond the input itself. */
interface InputContext {
  readonly body: Uint8Array;
  readonly cursor: Cursor;
  readonly options: DecodeInferOptions;
  readonly requestId: string | undefined;
  /** The request's JSON text, and where each input's `data` sits in it once looked for. */
  readonly text: string;
  spans: (TextSpan | undefined)[] | undefined;
}

/** The source text of input `index`'s `data` (INT64/UINT64 are read from it). */
function dataSourceOf(context: InputContext, index: number): JsonDataSource | undefined {
  // Only a request with 64-bit JSON data pays for a walk over its text, once.
  context.spans ??= findDataSpans(context.text, "inputs");
  const span = context.spans[index];
  return span === undefined ? undefined : { text: context.text, span };
}

const NO_MEMBERS: JsonObject = {};

function decodeInput(raw: unknown, index: number, context: InputContext): Tensor {
  const { body, cursor, options } = context;
  const { model } = options;
  // Members are loaded by literal name here (the hot path), each once.
  const input = isObject(raw) ? raw : NO_MEMBERS;
  const values = input["data"];
  const params = input["parameters"];
  const paramsObject = isObject(params) ? params : NO_MEMBERS;
  const binarySizeRaw = paramsObject["binary_data_size"];
  checkContentKind(
    values !== undefined,
    binarySizeRaw !== undefined,
    paramsObject["shared_memory_region"] !== undefined,
  );
  const name = expectString(input["name"], "name", "Unable to parse 'name'");
  const datatypeRaw = expectString(input["datatype"], "datatype", "Unable to parse 'datatype'");
  const shape = parseShape(input["shape"]);
  let binarySize: number | undefined;
  if (binarySizeRaw !== undefined) {
    if (!isUnsignedInteger(binarySizeRaw))
      throw tritonJsonError("Unable to parse 'binary_data_size'", NON_UNSIGNED);
    binarySize = binarySizeRaw;
  } else if (values === undefined) {
    refuseSharedMemory(params);
  }
  const elementCount = elementCountOf(shape, name, datatypeRaw, binarySize === undefined);
  const valid = isDatatype(datatypeRaw);
  if (datatypeRaw === "BYTES" && elementCount > options.maxBytesTensorElements) {
    // Before any per-element work: the worker makes one string per element (core/bytes-data.ts).
    throw badRequest(bytesTensorTooLarge(model, name, elementCount, options.maxBytesTensorElements));
  }
  const ctx: TensorContext = { model, input: name, requestId: context.requestId };
  let data: TensorData;
  if (binarySize !== undefined) {
    const available = body.byteLength - cursor.offset;
    if (binarySize > available) {
      throw badRequest(
        `unexpected size for input '${name}', expecting ${binarySize - available} additional bytes for model '${model}'`,
      );
    }
    if (!valid) throw invalidDatatype(datatypeRaw, name, model);
    data = decodeBinaryData(
      body.subarray(cursor.offset, cursor.offset + binarySize),
      datatypeRaw as Datatype,
      elementCount,
      ctx,
    );
    cursor.offset += binarySize;
  } else if (elementCount === 0) {
    // Triton does not read `data` when the shape holds no element.
    if (!valid) throw invalidDatatype(datatypeRaw, name, model);
    data = emptyData(datatypeRaw);
  } else {
    if (!Array.isArray(values)) throw dataNotArray();
    // Triton's ReadDataFromJson words it so (its byte size, 0, passes the size limit first).
    if (!valid) throw badRequest(`invalid datatype for input ${name}`);
    const datatype: Datatype = datatypeRaw;
    const wide = datatype === "INT64" || datatype === "UINT64";
    const source = wide ? dataSourceOf(context, index) : undefined;
    data = decodeJsonData(values, datatype, elementCount, ctx, options.maxInputSize, source);
  }
  return { name, datatype: datatypeRaw as Datatype, shape, data };
}

/**
 * An unknown datatype on a binary input or an empty one: Triton's core reports it against the model's
 * datatype ("data-type is 'INVALID', but model ... expects ..."), which this layer does not know.
 */
function invalidDatatype(datatype: string, input: string, model: string): HttpError {
  return badRequest(`invalid datatype '${datatype}' for input '${input}' of model '${model}'`);
}

function emptyData(datatype: Datatype): TensorData {
  if (datatype === "BYTES") return { count: 0, wire: new Uint8Array(0) };
  return new (datatypeInfo(datatype)!.typedArray!)(0);
}

function decodeOutputs(raw: unknown): {
  requested: RequestedOutput[] | undefined;
  encodings: Map<string, OutputEncoding> | undefined;
} {
  if (raw === undefined) return { requested: undefined, encodings: undefined };
  if (!Array.isArray(raw)) throw tritonJsonError("Unable to parse 'outputs'", NON_ARRAY);
  const requested: RequestedOutput[] = [];
  const encodings = new Map<string, OutputEncoding>();
  for (const item of raw) {
    const output = isObject(item) ? item : NO_MEMBERS;
    const params = output["parameters"];
    const paramsObject = isObject(params) ? params : NO_MEMBERS;
    const classificationRaw = paramsObject["classification"];
    const binaryRaw = paramsObject["binary_data"];
    const sharedMemory = paramsObject["shared_memory_region"] !== undefined;
    if (sharedMemory) {
      // Triton's ValidateOutputParameter, before the name.
      if (classificationRaw !== undefined) {
        throw badRequest("Output can't set both 'shared_memory_region' and 'classification'");
      }
      if (binaryRaw !== undefined) {
        if (booleanMember(paramsObject, "binary_data", "Unable to set 'binary_data'")) {
          throw badRequest("Output can't set both 'shared_memory_region' and 'binary_data'");
        }
      }
    }
    const name = expectString(output["name"], "name", "Unable to parse 'name'");
    let classification = 0;
    if (classificationRaw !== undefined) {
      if (!isUnsignedInteger(classificationRaw)) {
        throw tritonJsonError("Unable to set 'classification'", NON_UNSIGNED);
      }
      classification = classificationRaw;
    }
    if (sharedMemory) refuseSharedMemory(params);
    let binary = false;
    if (binaryRaw !== undefined) binary = booleanMember(paramsObject, "binary_data");
    // The core computes classifications (it holds the label files); the front end only encodes the BYTES result.
    requested.push(classification > 0 ? { name, classification } : { name });
    encodings.set(name, { binary, classification });
  }
  return { requested, encodings };
}

/**
 * The sequence fields among the request parameters (their types were checked as they were read). An id
 * past 2^53 is read from its digits in `text`: JSON.parse's double would make two ids one sequence.
 */
function sequenceOf(
  parameters: Readonly<Record<string, string | number | boolean>> | undefined,
  text: string,
) {
  if (parameters === undefined) return undefined;
  const raw = parameters["sequence_id"];
  let id: bigint | string | undefined = typeof raw === "string" ? raw : undefined;
  if (typeof raw === "number") {
    const span = Number.isSafeInteger(raw) ? undefined : findMemberSpan(text, ["parameters", "sequence_id"]);
    const digits = span === undefined ? "" : text.slice(span.start, span.end);
    if (span !== undefined && !(/^[0-9]+$/.test(digits) && BigInt(digits) < 2n ** 64n)) {
      throw tritonJsonError("Unable to parse 'sequence_id'", NON_STRING);
    }
    id = span === undefined ? BigInt(raw) : BigInt(digits);
  }
  const start = parameters["sequence_start"];
  const end = parameters["sequence_end"];
  return sequenceFlags(
    id,
    typeof start === "boolean" ? start : undefined,
    typeof end === "boolean" ? end : undefined,
  );
}

/** Decodes `body` (already decompressed) into a core request and the response encoding plan. */
export function decodeInferRequest(body: Uint8Array, options: DecodeInferOptions): DecodedInferRequest {
  const { header, text } = parseJsonHeader(body, options.headerLength);
  const idRaw = header["id"];
  if (idRaw !== undefined && typeof idRaw !== "string")
    throw tritonJsonError("Unable to parse 'id'", NON_STRING);
  const id = idRaw as string | undefined;
  const { parameters, priority, timeoutUs, binaryOutput } = parseRequestParameters(header["parameters"]);
  const inputsRaw = expectArray(header["inputs"], "inputs", "Unable to parse 'inputs'");
  const context: InputContext = {
    body,
    cursor: { offset: options.headerLength },
    options,
    requestId: id,
    text,
    spans: undefined,
  };
  const inputs: Tensor[] = new Array(inputsRaw.length);
  for (let i = 0; i < inputsRaw.length; i++) inputs[i] = decodeInput(inputsRaw[i], i, context);
  if (context.cursor.offset !== body.byteLength) {
    throw badRequest(`unexpected additional input data for model '${options.model}'`);
  }
  const { requested, encodings } = decodeOutputs(header["outputs"]);
  const sequence = sequenceOf(parameters, text);
  const request: InferenceRequest = {
    model: options.model,
    inputs,
    ...(options.version !== undefined ? { version: options.version } : {}),
    ...(id !== undefined ? { id } : {}),
    ...(requested !== undefined ? { outputs: requested } : {}),
    ...(priority !== undefined ? { priority } : {}),
    ...(timeoutUs !== undefined ? { timeoutUs } : {}),
    ...(parameters !== undefined ? { parameters: parameters as Parameters } : {}),
    ...(sequence !== undefined ? { sequence } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  };
  return { request, defaultBinary: binaryOutput, outputs: encodings };
}
