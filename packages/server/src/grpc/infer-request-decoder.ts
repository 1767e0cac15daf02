/**
 * Decodes a ModelInferRequest (already parsed by the generated protobufjs code) into the core's
 * InferenceRequest, with Triton's gRPC rules and messages (server src/grpc/infer_handler.cc): each input's
 * data comes from its typed `contents` or, in order, from `raw_input_contents`, never both; the typed field
 * must match the datatype; request parameters `priority`, `timeout` and `triton_*` keys are Triton's.
 * Everything past the structure (names, datatypes, shapes against the model) is the core's, as on HTTP.
 */
import {
  type Datatype,
  type DatatypeInfo,
  datatypeInfo,
  type inference,
  isDatatype,
  NARROW_INTEGER_RANGES,
} from "@tbench/proto";
import { bytesDataFromArrays, bytesTensorTooLarge, isBytesData } from "../core/bytes-data.js";
import type { CancelSignal } from "../core/cancel-signal.js";
import { sequenceFlags } from "../core/sequence-flags.js";
import type { InferenceRequest, Parameters, RequestedOutput, Tensor, TensorData } from "../core/types.js";
import { invalidArg, versionFromString } from "./grpc-status.js";

type Long = { toNumber(): number; toString(): string };
type IntLike = number | Long;
type Request = inference.ModelInferRequest;
type InputTensor = inference.ModelInferRequest.InferInputTensor.$Properties;
type Contents = inference.InferTensorContents.$Properties;
type InferParameter = inference.InferParameter.$Properties & { parameter_choice?: string };

/** Options of decodeGrpcInferRequest. */
export interface GrpcDecodeOptions {
  /** Most elements one BYTES input may have (--max-bytes-tensor-elements), checked from its shape. */
  readonly maxBytesTensorElements: number;
  readonly signal?: CancelSignal;
}

/** The request parameters Triton lets a client set with the `triton_` prefix (infer_handler.h). */
const TRITON_RESERVED_REQUEST_PARAMS = ["triton_enable_empty_final_response"];

function toNumber(value: IntLike): number {
  return typeof value === "number" ? value : value.toNumber();
}

function choiceOf(param: InferParameter): string | undefined {
  return param.parameter_choice;
}

interface RequestParameters {
  parameters: Record<string, string | number | boolean> | undefined;
  priority: number | undefined;
  timeoutUs: number | undefined;
  /** `sequence_id` exactly (an int64_param is the uint64 with the same bits, as Triton casts it). */
  sequenceId: bigint | string | undefined;
  sequenceStart: boolean | undefined;
  sequenceEnd: boolean | undefined;
}

function decodeParameters(
  raw: Readonly<Record<string, InferParameter>> | null | undefined,
): RequestParameters {
  const result: RequestParameters = {
    parameters: undefined,
    priority: undefined,
    timeoutUs: undefined,
    sequenceId: undefined,
    sequenceStart: undefined,
    sequenceEnd: undefined,
  };
  if (raw === null || raw === undefined) return result;
  for (const key of Object.keys(raw)) {
    const param = raw[key]!;
    const choice = choiceOf(param);
    if (key === "priority") {
      if (choice === "int64_param") {
        const value = toNumber(param.int64_param!);
        if (value < 0) throw invalidArg("invalid value for 'priority', expected value >= 0.");
        result.priority = value;
      } else if (choice === "uint64_param") {
        result.priority = toNumber(param.uint64_param!);
      } else {
        throw invalidArg(
          "invalid value type for 'priority' parameter, expected int64_param or uint64_param.",
        );
      }
    } else if (key === "timeout") {
      if (choice !== "int64_param")
        throw invalidArg("invalid value type for 'timeout' parameter, expected int64_param.");
      result.timeoutUs = Math.max(0, toNumber(param.int64_param!));
    } else if (key === "sequence_id") {
      if (choice === "int64_param") {
        const value = param.int64_param!;
        result.sequenceId = BigInt.asUintN(64, BigInt(typeof value === "number" ? value : value.toString()));
      } else if (choice === "string_param") {
        result.sequenceId = param.string_param ?? "";
      } else {
        throw invalidArg(
          "invalid value type for 'sequence_id' parameter, expected int64_param or string_param.",
        );
      }
    } else if (key === "sequence_start" || key === "sequence_end") {
      if (choice !== "bool_param") {
        throw invalidArg(`invalid value type for '${key}' parameter, expected bool_param.`);
      }
      if (key === "sequence_start") result.sequenceStart = param.bool_param === true;
      else result.sequenceEnd = param.bool_param === true;
    } else if (key.startsWith("triton_")) {
      if (!TRITON_RESERVED_REQUEST_PARAMS.includes(key)) {
        throw invalidArg(
          "parameter keys starting with 'triton_' are reserved for Triton usage. Only the following keys " +
            `starting with 'triton_' are allowed: ${TRITON_RESERVED_REQUEST_PARAMS.join(" ")}`,
        );
      }
      if (choice !== "bool_param")
        throw invalidArg(`invalid value type for '${key}' parameter, expected bool_param.`);
    } else {
      let value: string | number | boolean;
      if (choice === "int64_param") value = toNumber(param.int64_param!);
      else if (choice === "bool_param") value = param.bool_param === true;
      else if (choice === "string_param") value = param.string_param ?? "";
      else if (choice === "double_param") value = param.double_param ?? 0;
      else {
        throw invalidArg(
          `invalid value type for '${key}' parameter, expected int64_param, bool_param, or string_param.`,
        );
      }
      result.parameters ??= {};
      result.parameters[key] = value;
    }
  }
  return result;
}

function hasSharedMemory(parameters: Readonly<Record<string, InferParameter>> | null | undefined): boolean {
  return parameters?.["shared_memory_region"] !== undefined;
}

/** The typed `contents` fields, which datatype each carries (Triton's InferGRPCToInput). */
const CONTENT_FIELDS = [
  ["bool_contents", ["BOOL"]],
  ["int_contents", ["INT8", "INT16", "INT32"]],
  ["int64_contents", ["INT64"]],
  ["uint_contents", ["UINT8", "UINT16", "UINT32"]],
  ["uint64_contents", ["UINT64"]],
  ["fp32_contents", ["FP32"]],
  ["fp64_contents", ["FP64"]],
  ["bytes_contents", ["BYTES"]],
] as const;

function typedData(
  contents: Contents,
  datatype: Datatype,
  input: string,
  model: string,
): TensorData | undefined {
  let data: TensorData | undefined;
  for (const [field, datatypes] of CONTENT_FIELDS) {
    const values = contents[field] as readonly unknown[] | null | undefined;
    if (values === null || values === undefined || values.length === 0) continue;
    if (data !== undefined) {
      throw invalidArg(
        `unexpected explicit tensor data for input tensor '${input}' for model '${model}', ` +
          "binary data was already supplied.",
      );
    }
    // Triton names the field's own type when several share it: INT32 for int_contents, UINT32 for uint.
    const fieldType: Datatype = (datatypes as readonly Datatype[]).includes(datatype)
      ? datatype
      : datatypes.at(-1)!;
    if (fieldType !== datatype) {
      throw invalidArg(
        `unexpected explicit tensor data for input tensor '${input}' for model '${model}' of type ` +
          `'${fieldType}', expected datatype '${datatype}'`,
      );
    }
    if (datatype === "BYTES") {
      // Its count is the contents' own: the core checks it against the shape in Triton's words.
      data = bytesDataFromArrays(values as Uint8Array[]);
    } else if (datatype === "INT64" || datatype === "UINT64") {
      const big = (values as IntLike[]).map((v) => BigInt(typeof v === "number" ? v : v.toString()));
      // A uint64 field decodes to Longs marked unsigned, so toString() is already the unsigned value.
      data = datatype === "INT64" ? BigInt64Array.from(big) : BigUint64Array.from(big);
    } else if (datatype === "BOOL") {
      data = Uint8Array.from(values as boolean[], (v) => (v ? 1 : 0));
    } else {
      const info = datatypeInfo(datatype) as DatatypeInfo;
      const typed = (info.typedArray as unknown as { from(v: ArrayLike<number>): TensorData }).from(
        values as number[],
      ) as Exclude<TensorData, { wire: Uint8Array }>;
      checkNarrowIntegers(typed, values as number[], datatype, input, model);
      data = typed;
    }
  }
  return data;
}

/**
 * INT8/INT16/UINT8/UINT16 travel in 32-bit fields. Triton keeps each value's low bytes (INT8 300 becomes
 * 44); a value is refused here instead, as the HTTP side refuses it, so that no element changes silently.
 */
function checkNarrowIntegers(
  typed: ArrayLike<number | bigint>,
  values: readonly number[],
  datatype: Datatype,
  input: string,
  model: string,
): void {
  const range = NARROW_INTEGER_RANGES[datatype];
  if (range === undefined) return;
  for (let i = 0; i < values.length; i++) {
    // The TypedArray stored it changed: out of the type's range (one compare per element).
    if (typed[i] !== values[i]) {
      throw invalidArg(
        `unexpected explicit tensor data for input tensor '${input}' for model '${model}': element ${i} is ` +
          `${values[i]}, outside the range of ${datatype} [${range[0]}, ${range[1]}]`,
      );
    }
  }
}

/** Raw little-endian bytes as the datatype's TypedArray: a view when aligned, else one copy. */
function rawData(
  bytes: Uint8Array,
  datatype: Datatype,
  elementCount: number,
  input: string,
  model: string,
): TensorData {
  // BYTES are taken as the shape says; the core walks them with Triton's messages (ValidateBytesInputs).
  if (datatype === "BYTES") return { count: elementCount, wire: bytes };
  const info = datatypeInfo(datatype) as DatatypeInfo;
  const elementSize = info.byteSize!;
  const expected = elementCount * elementSize;
  if (bytes.byteLength !== expected) {
    throw invalidArg(
      `input byte size mismatch for input '${input}' for model '${model}'. Expected ${expected}, got ${bytes.byteLength}`,
    );
  }
  const TypedArray = info.typedArray!;
  if (bytes.byteOffset % elementSize === 0)
    return new TypedArray(bytes.buffer as ArrayBuffer, bytes.byteOffset, elementCount);
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new TypedArray(copy.buffer, 0, elementCount);
}

/** The data must hold exactly the elements the shape says (typed contents are not checked elsewhere). */
function checkElementCount(
  data: TensorData,
  datatype: Datatype,
  elementCount: number,
  input: string,
  model: string,
): void {
  // BYTES counts are the core's to check (request-validation.ts), in Triton's order and words.
  if (isBytesData(data)) return;
  const elementSize = (datatypeInfo(datatype) as DatatypeInfo).byteSize!;
  if (data.length !== elementCount) {
    throw invalidArg(
      `input byte size mismatch for input '${input}' for model '${model}'. Expected ${elementCount * elementSize}, got ${data.byteLength}`,
    );
  }
}

function emptyData(datatype: Datatype): TensorData {
  if (datatype === "BYTES") return { count: 0, wire: new Uint8Array(0) };
  return new (datatypeInfo(datatype) as DatatypeInfo).typedArray!(0);
}

function elementCountOf(shape: readonly number[]): number {
  let count = 1;
  for (const d of shape) count *= d;
  return count;
}

function decodeInput(
  io: InputTensor,
  request: Request,
  rawIndex: { next: number },
  options: GrpcDecodeOptions,
): Tensor {
  const model = request.model_name;
  const name = io.name ?? "";
  const datatypeRaw = io.datatype ?? "";
  if (!isDatatype(datatypeRaw))
    throw invalidArg(`invalid datatype '${datatypeRaw}' for input '${name}' of model '${model}'`);
  const datatype: Datatype = datatypeRaw;
  const shape = (io.shape ?? []).map(toNumber);
  for (const d of shape) {
    if (!Number.isSafeInteger(d) || d < 0) {
      throw invalidArg(`invalid shape for input '${name}' of model '${model}': [${shape.join(",")}]`);
    }
  }
  const elementCount = elementCountOf(shape);
  if (!Number.isSafeInteger(elementCount)) {
    throw invalidArg(`invalid shape for input '${name}': shape [${shape.join(",")}] has too many elements`);
  }
  if (datatype === "BYTES" && elementCount > options.maxBytesTensorElements) {
    throw invalidArg(bytesTensorTooLarge(model, name, elementCount, options.maxBytesTensorElements));
  }
  if (hasSharedMemory(io.parameters)) {
    throw invalidArg(`input '${name}': shared memory regions are not supported by this server`);
  }
  const raw = request.raw_input_contents;
  let data: TensorData | undefined;
  if (io.contents !== null && io.contents !== undefined) {
    if (raw.length > 0) {
      throw invalidArg(
        `contents field must not be specified when using raw_input_contents for '${name}' for model '${model}'`,
      );
    }
    // Present but empty: no data, which the size check below reports as Triton's core does (got 0).
    data = typedData(io.contents, datatype, name, model) ?? emptyData(datatype);
  } else if (raw.length > rawIndex.next) {
    data = rawData(raw[rawIndex.next++]!, datatype, elementCount, name, model);
  }
  if (data === undefined) {
    throw invalidArg(`unable to find data for input tensor '${name}' for model '${model}' in request.`);
  }
  checkElementCount(data, datatype, elementCount, name, model);
  return { name, datatype, shape, data };
}

function decodeOutputs(request: Request): RequestedOutput[] | undefined {
  if (request.outputs.length === 0) return undefined;
  return request.outputs.map((output) => {
    const name = output.name ?? "";
    const parameters = output.parameters as Readonly<Record<string, InferParameter>> | null | undefined;
    if (hasSharedMemory(parameters)) {
      throw invalidArg(`output '${name}': shared memory regions are not supported by this server`);
    }
    const classification = parameters?.["classification"];
    if (classification === undefined) return { name };
    if (choiceOf(classification) !== "int64_param") {
      throw invalidArg("invalid value type for 'classification' parameter, expected int64_param");
    }
    const count = toNumber(classification.int64_param!);
    if (count <= 0) throw invalidArg("invalid value for 'classification' parameter, expected >= 1");
    return { name, classification: count };
  });
}

/** True when the request asks for an empty final response on a stream (triton_enable_empty_final_response). */
export function wantsEmptyFinalResponse(request: Request): boolean {
  const param = (request.parameters as Record<string, InferParameter>)["triton_enable_empty_final_response"];
  return param !== undefined && choiceOf(param) === "bool_param" && param.bool_param === true;
}

/** Decodes `request` into a core request; throws INVALID_ARG ServerErrors with Triton's messages. */
export function decodeGrpcInferRequest(request: Request, options: GrpcDecodeOptions): InferenceRequest {
  const version = versionFromString(request.model_version);
  const { parameters, priority, timeoutUs, sequenceId, sequenceStart, sequenceEnd } = decodeParameters(
    request.parameters as Readonly<Record<string, InferParameter>>,
  );
  const sequence = sequenceFlags(sequenceId, sequenceStart, sequenceEnd);
  const rawIndex = { next: 0 };
  const inputs = request.inputs.map((io) => decodeInput(io, request, rawIndex, options));
  const outputs = decodeOutputs(request);
  return {
    model: request.model_name,
    inputs,
    ...(version !== undefined ? { version } : {}),
    ...(request.id !== "" ? { id: request.id } : {}),
    ...(outputs !== undefined ? { outputs } : {}),
    ...(priority !== undefined ? { priority } : {}),
    ...(timeoutUs !== undefined ? { timeoutUs } : {}),
    ...(parameters !== undefined ? { parameters: parameters as Parameters } : {}),
    ...(sequence !== undefined ? { sequence } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  };
}
