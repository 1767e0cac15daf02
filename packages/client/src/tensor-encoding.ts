/**
 * An input tensor's elements as the wire carries them in binary form, shared by both transports (HTTP's
 * binary tensor extension and gRPC's `raw_input_contents` use the same bytes): little-endian, row-major,
 * BOOL one byte per element, BYTES elements a 4-byte little-endian length then the bytes. Elements a
 * TypedArray would change (wrap, truncate, NaN) are refused with InvalidArgumentError before anything is
 * sent; a TypedArray of the right type is viewed, not copied.
 */
import { type Datatype, datatypeInfo, NARROW_INTEGER_RANGES, WIDE_INTEGER_RANGES } from "@tbench/proto";
import { allocBytes, utf8Length, writeUtf8 } from "./bytes.js";
import { InvalidArgumentError } from "./errors.js";
import type { InferInput } from "./tensor-types.js";

/** An InvalidArgumentError with `message`. */
export function invalid(message: string): InvalidArgumentError {
  return new InvalidArgumentError(message);
}

/** The element count the input's shape holds; InvalidArgumentError for a bad shape. */
export function elementCount(input: InferInput): number {
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

/** How many elements the input's data has; InvalidArgumentError when it is no array. */
export function dataLength(input: InferInput): number {
  const data = input.data as unknown;
  if (ArrayBuffer.isView(data)) return (data as unknown as ArrayLike<unknown>).length;
  if (Array.isArray(data)) return data.length;
  throw invalid(`input '${input.name}': data must be an array or a TypedArray, got ${typeof data}`);
}

/** The input's elements as little-endian bytes (a view when the data already is the right TypedArray). */
export function binaryOf(input: InferInput, datatype: Datatype): Uint8Array {
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
    const len = typeof el === "string" ? utf8Length(el) : el instanceof Uint8Array ? el.byteLength : -1;
    if (len < 0) throw invalid(`input '${name}': BYTES element ${i} is neither a string nor a Uint8Array`);
    lengths[i] = len;
    total += 4 + len;
  }
  const out = allocBytes(total);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  let pos = 0;
  for (let i = 0; i < data.length; i++) {
    const el = data[i]!;
    const len = lengths[i]!;
    view.setUint32(pos, len, true);
    pos += 4;
    if (typeof el === "string") writeUtf8(out, el, pos);
    else out.set(el, pos);
    pos += len;
  }
  return out;
}

/**
 * Checks one input (name, datatype, shape against data) and returns its binary bytes: what a transport
 * that sends every input in binary form needs. `index` is the input's position, for messages.
 */
export function inputBytes(input: InferInput, index: number): Uint8Array {
  const datatype = input.datatype;
  if (typeof input.name !== "string") throw invalid(`infer: input ${index} has no name`);
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
  return binaryOf(input, datatype);
}
