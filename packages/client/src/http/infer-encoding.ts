/**
 * Encodes an infer request into one HTTP body, per Triton's binary tensor data extension
 * (docs/protocol/extension_binary_data.md): the JSON inference request, then each binary input's raw bytes
 * (little-endian, row-major, no padding) in the order the inputs appear in the JSON. Each binary input
 * carries `binary_data_size`; `Inference-Header-Content-Length` gives the JSON length. BOOL is one byte
 * per element; BYTES elements are a 4-byte little-endian length then the bytes. Inputs sent as JSON carry
 * a flat row-major `data` array instead. The body is assembled with one allocation and one copy per
 * tensor: TypedArray inputs are not copied before that.
 */
import { type Datatype, datatypeInfo, NARROW_INTEGER_RANGES, WIDE_INTEGER_RANGES } from "@tbench/proto";
import { InvalidArgumentError } from "../errors.js";
import type { InferInput, InferRequest, Parameters } from "../tensor-types.js";

/** An encoded request body. */
export interface EncodedInferRequest {
  readonly body: Buffer;
  /** JSON header length, when the body carries binary data (else the whole body is JSON). */
  readonly jsonLength: number | undefined;
}

const utf8Strict = new TextDecoder("utf-8", { fatal: true });

function invalid(message: string): InvalidArgumentError {
  return new InvalidArgumentError(message);
}

function elementCount(input: InferInput): number {
  const shape = input.shape;
  if (!Array.isArray(shape)) throw invalid(`input '${input.name}': shape must be an array of integers >= 0`);
  let n = 1;
  for (let i = 0; i < shape.length; i++) {
    const d = shape[i];
    if (typeof d !== "number" || !Number.isInteger(d) || d < 0) {
      throw invalid(
        `input '${input.name}': shape [${shape}] has dimension ${d}; dimensions are integers >= 0`,
      );
    }
    n *= d;
  }
  return n;
}

function dataLength(input: InferInput): number {
  const data = input.data as unknown;
  if (ArrayBuffer.isView(data)) return (data as unknown as ArrayLike<unknown>).length;
  if (Array.isArray(data)) return data.length;
  throw invalid(`input '${input.name}': data must be an array or a TypedArray, got ${typeof data}`);
}

/** The input's elements as little-endian bytes (a view when the data already is the right TypedArray). */
function binaryOf(input: InferInput, datatype: Datatype): Uint8Array {
  const data = input.data as unknown;
  if (datatype === "BYTES") return encodeBytesElements(input.name, data as readonly (string | Uint8Array)[]);
  const info = datatypeInfo(datatype)!;
  const Ctor = info.typedArray!;
  let typed: ArrayBufferView;
  if (data instanceof Ctor) {
    typed = data;
  } else if (Array.isArray(data)) {
    typed = fromArray(input.name, datatype, Ctor, data);
  } else {
    const given = (data as object).constructor?.name ?? typeof data;
    throw invalid(`input '${input.name}': ${datatype} data must be a ${Ctor.name} or an array, got ${given}`);
  }
  return new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
}

function fromArray(
  name: string,
  datatype: Datatype,
  Ctor: NonNullable<NonNullable<ReturnType<typeof datatypeInfo>>["typedArray"]>,
  data: readonly unknown[],
): ArrayBufferView {
  if (datatype === "FP16" || datatype === "BF16") {
    throw invalid(
      `input '${name}': ${datatype} data must be a Uint16Array of bit patterns (see float32ArrayToFloat16Bits)`,
    );
  }
  if (datatype === "BOOL") {
    const out = new Uint8Array(data.length);
    for (let i = 0; i < data.length; i++) {
      if (typeof data[i] !== "boolean") throw invalid(`input '${name}': BOOL element ${i} is not a boolean`);
      out[i] = data[i] ? 1 : 0;
    }
    return out;
  }
  return fromElements(name, datatype, Ctor as unknown as new (length: number) => NumericArray, data);
}

/** A TypedArray of any numeric datatype, indexed by number or bigint as its type says. */
type NumericArray = { [index: number]: number | bigint; readonly length: number } & ArrayBufferView;

function describe(value: unknown): string {
  return typeof value === "bigint"
    ? `${value}n`
    : typeof value === "string"
      ? JSON.stringify(value)
      : String(value);
}

/**
 * The elements in a new TypedArray, refusing any its type would change (wrap, truncate, or turn into 0 or
 * NaN), so that the server receives exactly the values given: bigints for INT64/UINT64, numbers otherwise.
 */
function fromElements(
  name: string,
  datatype: Datatype,
  Ctor: new (length: number) => NumericArray,
  data: readonly unknown[],
): NumericArray {
  const out = new Ctor(data.length);
  // Separate loops, each comparing typeof with a literal (which the JIT turns into a type check).
  if (datatype === "INT64" || datatype === "UINT64") {
    for (let i = 0; i < data.length; i++) {
      const v = data[i];
      if (typeof v !== "bigint") {
        throw invalid(
          `input '${name}': ${datatype} elements must be bigints; element ${i} is ${describe(v)}`,
        );
      }
      out[i] = v;
      if (out[i] !== v) throw outOfRange(name, datatype, i, v);
    }
    return out;
  }
  const integer = NARROW_INTEGER_RANGES[datatype] !== undefined;
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (typeof v !== "number") {
      throw invalid(`input '${name}': ${datatype} elements must be numbers; element ${i} is ${describe(v)}`);
    }
    out[i] = v;
    if (integer && out[i] !== v) throw outOfRange(name, datatype, i, v);
  }
  return out;
}

function outOfRange(
  name: string,
  datatype: Datatype,
  index: number,
  value: number | bigint,
): InvalidArgumentError {
  if (datatype === "INT64" || datatype === "UINT64") {
    const [min, max] = WIDE_INTEGER_RANGES[datatype];
    return invalid(`input '${name}': ${datatype} element ${index} is ${value}, outside [${min}, ${max}]`);
  }
  const [min, max] = NARROW_INTEGER_RANGES[datatype]!;
  return invalid(
    `input '${name}': ${datatype} element ${index} is ${value}, not an integer in [${min}, ${max}]`,
  );
}

function encodeBytesElements(name: string, data: readonly (string | Uint8Array)[]): Uint8Array {
  if (!Array.isArray(data))
    throw invalid(`input '${name}': BYTES data must be an array of strings or Uint8Arrays`);
  let total = 0;
  const lengths = new Array<number>(data.length);
  for (let i = 0; i < data.length; i++) {
    const el = data[i];
    const len =
      typeof el === "string" ? Buffer.byteLength(el, "utf8") : el instanceof Uint8Array ? el.byteLength : -1;
    if (len < 0) throw invalid(`input '${name}': BYTES element ${i} is neither a string nor a Uint8Array`);
    lengths[i] = len;
    total += 4 + len;
  }
  const out = Buffer.allocUnsafe(total);
  let pos = 0;
  for (let i = 0; i < data.length; i++) {
    const el = data[i]!;
    const len = lengths[i]!;
    out.writeUInt32LE(len, pos);
    pos += 4;
    if (typeof el === "string") out.write(el, pos, len, "utf8");
    else out.set(el, pos);
    pos += len;
  }
  return out;
}

/** The `data` array of a JSON input, as JSON text (64-bit integers written exactly). */
function jsonDataOf(input: InferInput, datatype: Datatype): string {
  const data = input.data as unknown as ArrayLike<unknown> & { join(sep: string): string };
  switch (datatype) {
    case "BOOL": {
      const parts = new Array<string>(data.length);
      for (let i = 0; i < data.length; i++) parts[i] = data[i] ? "true" : "false";
      return `[${parts.join(",")}]`;
    }
    case "BYTES": {
      const strings = new Array<string>(data.length);
      for (let i = 0; i < data.length; i++) {
        const el = data[i];
        if (typeof el === "string") strings[i] = el;
        else if (el instanceof Uint8Array) {
          try {
            strings[i] = utf8Strict.decode(el);
          } catch (error) {
            throw new InvalidArgumentError(
              `input '${input.name}': BYTES element ${i} is not UTF-8, so it cannot travel as JSON; send it as binary`,
              { cause: error },
            );
          }
        } else
          throw invalid(`input '${input.name}': BYTES element ${i} is neither a string nor a Uint8Array`);
      }
      return JSON.stringify(strings);
    }
    case "FP32":
    case "FP64":
      for (let i = 0; i < data.length; i++) {
        if (!Number.isFinite(data[i])) {
          throw invalid(
            `input '${input.name}': element ${i} is ${data[i]}, which JSON cannot carry; send it as binary`,
          );
        }
      }
      return `[${data.join(",")}]`;
    default: {
      // Integers: validate through the binary conversion (rejects wrong element types), then print.
      const bytes = binaryOf(input, datatype);
      const Ctor = datatypeInfo(datatype)!.typedArray!;
      const info = datatypeInfo(datatype)!;
      const typed = new Ctor(bytes.slice().buffer, 0, bytes.byteLength / info.byteSize!);
      return `[${typed.join(",")}]`;
    }
  }
}

function withParameters(base: Parameters | undefined, extra: Parameters): Parameters {
  return base === undefined ? extra : { ...base, ...extra };
}

/** Encodes a request. Throws InvalidArgumentError for a bad input, before anything is sent. */
export function encodeInferRequest(request: InferRequest): EncodedInferRequest {
  const inputs = request.inputs;
  if (!Array.isArray(inputs)) throw invalid("infer: request.inputs must be an array of tensors");
  const binaryInputs = request.binaryInputs ?? true;
  const binaryOutputs = request.binaryOutputs ?? true;
  const parts: Uint8Array[] = [];
  let binaryTotal = 0;
  const inputJson = new Array<string>(inputs.length);
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i]!;
    const datatype = input.datatype;
    if (typeof input.name !== "string") throw invalid(`infer: input ${i} has no name`);
    if (datatypeInfo(datatype) === undefined) {
      throw invalid(`input '${input.name}': unknown datatype ${JSON.stringify(datatype)}`);
    }
    const count = elementCount(input);
    const length = dataLength(input);
    if (count !== length) {
      throw invalid(
        `input '${input.name}': shape [${input.shape}] holds ${count} elements but data has ${length}`,
      );
    }
    const head = { name: input.name, shape: input.shape, datatype };
    if (binaryInputs || datatype === "FP16" || datatype === "BF16") {
      const bytes = binaryOf(input, datatype);
      parts.push(bytes);
      binaryTotal += bytes.byteLength;
      const parameters = withParameters(input.parameters, { binary_data_size: bytes.byteLength });
      inputJson[i] = JSON.stringify({ ...head, parameters });
    } else {
      const text = JSON.stringify(
        input.parameters === undefined ? head : { ...head, parameters: input.parameters },
      );
      inputJson[i] = `${text.slice(0, -1)},"data":${jsonDataOf(input, datatype)}}`;
    }
  }
  const parameters: Parameters = { ...(request.parameters ?? {}) };
  if (request.priority !== undefined) parameters["priority"] = request.priority;
  if (request.timeoutUs !== undefined) parameters["timeout"] = request.timeoutUs;
  let outputsJson = "";
  if (request.outputs !== undefined) {
    const outs = request.outputs.map((o) => {
      const extra: Parameters = { binary_data: o.binary ?? binaryOutputs };
      if (o.classification !== undefined) extra["classification"] = o.classification;
      return JSON.stringify({ name: o.name, parameters: withParameters(o.parameters, extra) });
    });
    outputsJson = `,"outputs":[${outs.join(",")}]`;
  } else if (binaryOutputs) {
    parameters["binary_data_output"] = true;
  }
  const idJson = request.id === undefined ? "" : `"id":${JSON.stringify(request.id)},`;
  const paramsJson =
    Object.keys(parameters).length === 0 ? "" : `,"parameters":${JSON.stringify(parameters)}`;
  const json = `{${idJson}"inputs":[${inputJson.join(",")}]${outputsJson}${paramsJson}}`;
  const jsonLength = Buffer.byteLength(json, "utf8");
  const body = Buffer.allocUnsafe(jsonLength + binaryTotal);
  body.write(json, 0, jsonLength, "utf8");
  let pos = jsonLength;
  for (const part of parts) {
    body.set(part, pos);
    pos += part.byteLength;
  }
  return { body, jsonLength: parts.length > 0 ? jsonLength : undefined };
}
