/**
 * ModelInferRequest encoding and ModelInferResponse decoding for the gRPC transport, with @tbench/proto's
 * generated code. Every input travels in `raw_input_contents` (the same little-endian bytes as HTTP's
 * binary extension, tensor-encoding.ts), as Triton's own clients send them; outputs come back in
 * `raw_output_contents`, which protobufjs hands over as views of the received buffer, so output tensors
 * are views too (InferResult copies only a misaligned one). Typed `contents` in an answer are read as
 * well. A request can be encoded without its id once and sent many times with a fresh id each: protobuf
 * fields may come in any order, so the id field is written in front of the encoded rest.
 */
import {
  type Datatype,
  type inference as gen,
  inference,
  isDatatype,
  unhandledDatatype,
} from "@tbench/proto";
import { InvalidArgumentError, MalformedResponseError } from "../errors.js";
import {
  createInferResult,
  createOutputTensor,
  type InferResult,
  type OutputTensor,
} from "../infer-result.js";
import { type SequenceParameters, sequenceParametersOf } from "../sequence-parameters.js";
import { inputBytes } from "../tensor-encoding.js";
import type { InferRequest, Parameters, ParameterValue } from "../tensor-types.js";

type InferParameter = gen.InferParameter.$Properties;
type Long = { toNumber(): number; toString(): string };
/** protobufjs's Long, as the generated types name it (the client does not depend on the `long` package). */
type ProtobufLong = Extract<NonNullable<InferParameter["int64_param"]>, object>;

/** A v2 parameter value as an InferParameter (integers int64, other numbers double, as Triton's clients). */
export function inferParameter(value: ParameterValue, where: string): InferParameter {
  if (typeof value === "boolean") return { bool_param: value };
  if (typeof value === "string") return { string_param: value };
  if (typeof value === "number" && !Number.isNaN(value)) {
    return Number.isSafeInteger(value) ? { int64_param: value } : { double_param: value };
  }
  throw new InvalidArgumentError(
    `${where}: parameter values are strings, numbers or booleans; got ${String(value)}`,
  );
}

/**
 * A uint64 as an `int64_param` value: a number up to 2^53-1, else the int64 with the same 64 bits (above
 * 2^63-1 negative; Triton casts the int64 back to uint64) as a Long-shaped `{ low, high }`, which is all
 * protobufjs's writer reads of a Long.
 */
function int64Of(value: bigint): number | ProtobufLong {
  if (value <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(value);
  const low = Number(BigInt.asIntN(32, value));
  const high = Number(BigInt.asIntN(32, value >> 32n));
  return { low, high, unsigned: false } as unknown as ProtobufLong;
}

/** Adds the sequence parameters: `sequence_id` as `int64_param` or `string_param`, the flags as `bool_param`. */
function addSequenceParameters(
  parameters: Record<string, InferParameter>,
  sequence: SequenceParameters,
): void {
  // Triton's gRPC endpoint takes sequence_id only as int64_param or string_param (as its own clients send it).
  if (typeof sequence.id === "bigint") parameters["sequence_id"] = { int64_param: int64Of(sequence.id) };
  else if (sequence.id !== undefined) parameters["sequence_id"] = { string_param: sequence.id };
  if (sequence.start !== undefined) parameters["sequence_start"] = { bool_param: sequence.start };
  if (sequence.end !== undefined) parameters["sequence_end"] = { bool_param: sequence.end };
}

function parametersOf(parameters: Parameters | undefined, where: string): Record<string, InferParameter> {
  const out: Record<string, InferParameter> = {};
  if (parameters === undefined) return out;
  for (const key of Object.keys(parameters)) out[key] = inferParameter(parameters[key]!, `${where} '${key}'`);
  return out;
}

/** The ModelInferRequest's properties for `request` (all inputs raw), without the id when `withId` is false. */
function requestProperties(
  model: string,
  request: InferRequest,
  withId: boolean,
): gen.ModelInferRequest.$Properties {
  const inputs = request.inputs;
  if (!Array.isArray(inputs))
    throw new InvalidArgumentError("infer: request.inputs must be an array of tensors");
  if (typeof model !== "string" || model === "") {
    throw new InvalidArgumentError("infer: model must be a non-empty string");
  }
  const raw = new Array<Uint8Array>(inputs.length);
  const tensors = new Array<gen.ModelInferRequest.InferInputTensor.$Properties>(inputs.length);
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i]!;
    raw[i] = inputBytes(input, i);
    const tensor: gen.ModelInferRequest.InferInputTensor.$Properties = {
      name: input.name,
      datatype: input.datatype,
      shape: input.shape as number[],
    };
    if (input.parameters !== undefined)
      tensor.parameters = parametersOf(input.parameters, `input '${input.name}'`);
    tensors[i] = tensor;
  }
  const parameters = parametersOf(request.parameters, "request parameter");
  // Triton's clients send priority as uint64 and the queue timeout as int64 (the server takes no other type).
  if (request.priority !== undefined) parameters["priority"] = { uint64_param: request.priority };
  if (request.timeoutUs !== undefined) parameters["timeout"] = { int64_param: request.timeoutUs };
  const sequence = sequenceParametersOf(request);
  if (sequence !== undefined) addSequenceParameters(parameters, sequence);
  const properties: gen.ModelInferRequest.$Properties = {
    model_name: model,
    model_version: request.modelVersion ?? "",
    parameters,
    inputs: tensors,
    raw_input_contents: raw,
  };
  if (withId && request.id !== undefined) properties.id = request.id;
  if (request.outputs !== undefined) {
    properties.outputs = request.outputs.map((o) => {
      const params = parametersOf(o.parameters, `output '${o.name}'`);
      if (o.classification !== undefined) params["classification"] = { int64_param: o.classification };
      return { name: o.name, parameters: params };
    });
  }
  return properties;
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Encodes a whole ModelInferRequest (id included). Throws InvalidArgumentError before anything is sent. */
export function encodeGrpcInferRequest(model: string, request: InferRequest): Buffer {
  return toBuffer(inference.ModelInferRequest.encode(requestProperties(model, request, true)).finish());
}

/** Encodes a ModelInferRequest without its id, for {@link withId}. */
export function encodeGrpcInferRequestWithoutId(model: string, request: InferRequest): Buffer {
  return toBuffer(inference.ModelInferRequest.encode(requestProperties(model, request, false)).finish());
}

const ID_TAG = (3 << 3) | 2; // ModelInferRequest.id: field 3, length-delimited

/** `body` (encoded without an id) with the id field `id` in front: one allocation, one copy of the body. */
export function withId(body: Buffer, id: string): Buffer {
  const idLength = Buffer.byteLength(id, "utf8");
  let varintLength = 1;
  for (let n = idLength; n >= 0x80; n >>>= 7) varintLength++;
  const out = Buffer.allocUnsafe(1 + varintLength + idLength + body.length);
  let pos = 0;
  out[pos++] = ID_TAG;
  let n = idLength;
  while (n >= 0x80) {
    out[pos++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[pos++] = n;
  pos += out.write(id, pos, idLength, "utf8");
  body.copy(out, pos);
  return out;
}

function malformed(message: string): MalformedResponseError {
  return new MalformedResponseError(`infer response: ${message}`);
}

function numberOf(value: number | Long): number {
  return typeof value === "number" ? value : value.toNumber();
}

/** An InferParameter's value (64-bit integers as numbers, as the HTTP transport's JSON gives them). */
function parameterValue(param: InferParameter & { parameter_choice?: string }): ParameterValue | undefined {
  switch (param.parameter_choice) {
    case "bool_param":
      return param.bool_param ?? false;
    case "string_param":
      return param.string_param ?? "";
    case "double_param":
      return param.double_param ?? 0;
    case "int64_param":
      return numberOf(param.int64_param ?? 0);
    case "uint64_param":
      return numberOf(param.uint64_param ?? 0);
    default:
      return undefined;
  }
}

function decodeParameters(
  raw: Readonly<Record<string, InferParameter>> | null | undefined,
): Readonly<Record<string, ParameterValue>> | undefined {
  if (raw === null || raw === undefined) return undefined;
  const keys = Object.keys(raw);
  if (keys.length === 0) return undefined;
  const out: Record<string, ParameterValue> = {};
  for (const key of keys) {
    const value = parameterValue(raw[key]!);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

type Contents = gen.InferTensorContents.$Properties;

/** An output sent in typed `contents`: elements as the JSON path would hand them over, or BYTES as raw. */
function fromContents(datatype: Datatype, c: Contents): { json?: unknown[]; raw?: Uint8Array } {
  const big = (v: number | Long) => BigInt(v.toString());
  switch (datatype) {
    case "BOOL":
      return { json: c.bool_contents ?? [] };
    case "INT8":
    case "INT16":
    case "INT32":
      return { json: c.int_contents ?? [] };
    case "UINT8":
    case "UINT16":
    case "UINT32":
      return { json: c.uint_contents ?? [] };
    case "INT64":
      return { json: (c.int64_contents ?? []).map(big) };
    case "UINT64":
      return { json: (c.uint64_contents ?? []).map(big) };
    case "FP32":
      return { json: c.fp32_contents ?? [] };
    case "FP64":
      return { json: c.fp64_contents ?? [] };
    case "BYTES": {
      const elements = c.bytes_contents ?? [];
      const parts: Buffer[] = [];
      for (const e of elements) {
        const length = Buffer.allocUnsafe(4);
        length.writeUInt32LE(e.byteLength, 0);
        parts.push(length, toBuffer(e));
      }
      return { raw: Buffer.concat(parts) };
    }
    case "FP16":
    case "BF16":
      throw malformed(`${datatype} output in typed contents (it has no contents field)`);
    default:
      return unhandledDatatype(datatype);
  }
}

/** Builds the InferResult of a decoded ModelInferResponse. */
export function inferResultOf(response: gen.ModelInferResponse.$Properties): InferResult {
  const outputs = response.outputs ?? [];
  const rawContents = response.raw_output_contents ?? [];
  if (rawContents.length !== 0 && rawContents.length !== outputs.length) {
    throw malformed(`${outputs.length} outputs but ${rawContents.length} raw_output_contents`);
  }
  const tensors = new Array<OutputTensor>(outputs.length);
  for (let i = 0; i < outputs.length; i++) {
    const o = outputs[i]!;
    const name = o.name ?? "";
    const datatype = o.datatype === "STRING" ? "BYTES" : o.datatype;
    if (!isDatatype(datatype))
      throw malformed(`output '${name}' has unknown datatype ${JSON.stringify(o.datatype)}`);
    const dims = o.shape ?? [];
    const shape = new Array<number>(dims.length);
    for (let d = 0; d < dims.length; d++) {
      const n = numberOf(dims[d]!);
      if (!Number.isSafeInteger(n) || n < 0) throw malformed(`output '${name}' has dimension ${n}`);
      shape[d] = n;
    }
    let raw: Uint8Array | undefined = rawContents[i];
    let json: unknown[] | undefined;
    if (raw === undefined) {
      const typed = fromContents(datatype, o.contents ?? {});
      raw = typed.raw;
      json = typed.json;
    }
    tensors[i] = createOutputTensor({
      name,
      datatype,
      shape,
      parameters: decodeParameters(o.parameters),
      raw,
      json,
    });
  }
  return createInferResult(
    response.model_name ?? "",
    response.model_version ?? "",
    response.id === "" || response.id === undefined || response.id === null ? undefined : response.id,
    decodeParameters(response.parameters),
    tensors,
  );
}

/** Decodes a ModelInferResponse message into an InferResult; MalformedResponseError when it does not parse. */
export function decodeGrpcInferResponse(bytes: Buffer): InferResult {
  let message: gen.ModelInferResponse;
  try {
    message = inference.ModelInferResponse.decode(bytes);
  } catch (error) {
    throw new MalformedResponseError("infer response: the ModelInferResponse does not parse", {
      cause: error,
    });
  }
  return inferResultOf(message);
}
