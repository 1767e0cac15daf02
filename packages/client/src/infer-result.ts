/**
 * The result of an infer call. Binary outputs are views of the response buffer: `as()`/`typedArray()`
 * return a TypedArray over the same memory, copying only when the output's offset is not a multiple of
 * its element size (TypedArrays require alignment). Views are made on first use and cached.
 */
import {
  bfloat16BitsToFloat32,
  type Datatype,
  datatypeInfo,
  type FixedSizeDatatype,
  float16BitsToFloat32,
  NARROW_INTEGER_RANGES,
  type TypedArrayByDatatype,
  unhandledDatatype,
  WIDE_INTEGER_RANGES,
} from "@tbench/proto";
import { InvalidArgumentError, MalformedResponseError } from "./errors.js";
import type { ParameterValue } from "./tensor-types.js";

/** A TypedArray of some fixed-size datatype. */
export type OutputTypedArray = TypedArrayByDatatype[FixedSizeDatatype];

/** Elements as plain JavaScript values (see {@link OutputTensor.toArray}). */
export type OutputValues = number[] | bigint[] | boolean[] | string[];

/** One output tensor of an infer result. */
export interface OutputTensor {
  readonly name: string;
  readonly datatype: Datatype;
  readonly shape: readonly number[];
  /** Output-level parameters the server sent (e.g. `binary_data_size`). */
  readonly parameters: Readonly<Record<string, ParameterValue>> | undefined;
  /** Element count (the product of the shape). */
  readonly size: number;
  /** The output's bytes in the response (little-endian, row-major), for binary outputs; else undefined. */
  readonly raw: Uint8Array | undefined;
  /** The elements as the datatype's TypedArray (a view where alignment allows). Throws for BYTES. */
  typedArray(): OutputTypedArray;
  /** Like typedArray(), checked: throws InvalidArgumentError when the output is not of `datatype`. */
  as<D extends FixedSizeDatatype>(datatype: D): TypedArrayByDatatype[D];
  /** BYTES elements decoded as UTF-8 strings. Throws for other datatypes. */
  strings(): string[];
  /** BYTES elements as byte arrays (views of the response). Throws for other datatypes. */
  bytes(): Uint8Array[];
  /** The elements as plain values: numbers (FP16/BF16 converted), bigints (64-bit integers), booleans or strings. */
  toArray(): OutputValues;
}

/** The result of `infer()`. */
export interface InferResult {
  readonly modelName: string;
  readonly modelVersion: string;
  /** The request id the server echoed, if any. */
  readonly id: string | undefined;
  /** Response-level parameters, if any. */
  readonly parameters: Readonly<Record<string, ParameterValue>> | undefined;
  readonly outputs: readonly OutputTensor[];
  /** The output with this name, or undefined. */
  output(name: string): OutputTensor | undefined;
}

/** What a transport hands over to build an output: its raw binary bytes, or its JSON `data`. */
export interface OutputTensorInit {
  name: string;
  datatype: Datatype;
  shape: readonly number[];
  parameters: Readonly<Record<string, ParameterValue>> | undefined;
  raw: Uint8Array | undefined;
  json: readonly unknown[] | undefined;
}

const utf8 = new TextDecoder();

function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

class Output implements OutputTensor {
  readonly name: string;
  readonly datatype: Datatype;
  readonly shape: readonly number[];
  readonly parameters: Readonly<Record<string, ParameterValue>> | undefined;
  readonly size: number;
  readonly raw: Uint8Array | undefined;
  readonly #json: readonly unknown[] | undefined;
  #typed: OutputTypedArray | undefined;
  #bytes: Uint8Array[] | undefined;

  constructor(init: OutputTensorInit) {
    this.name = init.name;
    this.datatype = init.datatype;
    this.shape = init.shape;
    this.parameters = init.parameters;
    this.size = elementCount(init.shape);
    this.raw = init.raw;
    this.#json = init.json;
  }

  typedArray(): OutputTypedArray {
    if (this.#typed !== undefined) return this.#typed;
    const info = datatypeInfo(this.datatype);
    if (info?.typedArray === undefined || info.byteSize === undefined) {
      throw new InvalidArgumentError(`output '${this.name}' is ${this.datatype}: use strings() or bytes()`);
    }
    const Ctor = info.typedArray;
    const raw = this.raw;
    if (raw !== undefined) {
      if (raw.byteLength !== this.size * info.byteSize) {
        throw new MalformedResponseError(
          `output '${this.name}': ${raw.byteLength} bytes of binary data for shape [${this.shape}] of ${this.datatype} (expected ${this.size * info.byteSize})`,
        );
      }
      this.#typed =
        raw.byteOffset % info.byteSize === 0
          ? (new Ctor(raw.buffer as ArrayBuffer, raw.byteOffset, this.size) as OutputTypedArray)
          : (new Ctor(new Uint8Array(raw).buffer, 0, this.size) as OutputTypedArray); // misaligned: one copy
      return this.#typed;
    }
    this.#typed = fromJson(this.name, this.datatype, Ctor, this.#json ?? [], this.size);
    return this.#typed;
  }

  as<D extends FixedSizeDatatype>(datatype: D): TypedArrayByDatatype[D] {
    if (this.datatype !== datatype) {
      throw new InvalidArgumentError(`output '${this.name}' is ${this.datatype}, not ${datatype}`);
    }
    return this.typedArray() as TypedArrayByDatatype[D];
  }

  bytes(): Uint8Array[] {
    if (this.#bytes !== undefined) return this.#bytes;
    if (this.datatype !== "BYTES") {
      throw new InvalidArgumentError(`output '${this.name}' is ${this.datatype}, not BYTES`);
    }
    const raw = this.raw;
    if (raw === undefined) {
      const encoder = new TextEncoder();
      this.#bytes = (this.#json ?? []).map((v) => encoder.encode(String(v)));
    } else {
      this.#bytes = splitBytes(this.name, raw);
    }
    if (this.#bytes.length !== this.size) {
      throw new MalformedResponseError(
        `output '${this.name}': ${this.#bytes.length} BYTES elements for shape [${this.shape}] (expected ${this.size})`,
      );
    }
    return this.#bytes;
  }

  strings(): string[] {
    if (this.raw === undefined && this.datatype === "BYTES" && this.#json !== undefined) {
      this.bytes(); // checks the count
      return this.#json.map((v) => String(v));
    }
    return this.bytes().map((b) => utf8.decode(b));
  }

  toArray(): OutputValues {
    switch (this.datatype) {
      case "BYTES":
        return this.strings();
      case "BOOL":
        return Array.from(this.typedArray() as Uint8Array, (v) => v !== 0);
      case "INT64":
      case "UINT64":
        return Array.from(this.typedArray() as BigInt64Array);
      case "FP16":
        return Array.from(this.typedArray() as Uint16Array, float16BitsToFloat32);
      case "BF16":
        return Array.from(this.typedArray() as Uint16Array, bfloat16BitsToFloat32);
      case "UINT8":
      case "UINT16":
      case "UINT32":
      case "INT8":
      case "INT16":
      case "INT32":
      case "FP32":
      case "FP64":
        return Array.from(this.typedArray() as Float64Array);
      default:
        return unhandledDatatype(this.datatype);
    }
  }
}

/** Splits a binary BYTES tensor: each element is a 4-byte little-endian length, then that many bytes. */
function splitBytes(name: string, raw: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  let pos = 0;
  while (pos < raw.byteLength) {
    if (pos + 4 > raw.byteLength) {
      throw new MalformedResponseError(`output '${name}': BYTES element length cut off at byte ${pos}`);
    }
    const len = view.getUint32(pos, true);
    pos += 4;
    if (pos + len > raw.byteLength) {
      throw new MalformedResponseError(
        `output '${name}': BYTES element of ${len} bytes runs past the end of the tensor (${raw.byteLength} bytes)`,
      );
    }
    out.push(raw.subarray(pos, pos + len));
    pos += len;
  }
  return out;
}

function fromJson(
  name: string,
  datatype: Datatype,
  Ctor: NonNullable<ReturnType<typeof datatypeInfo>>["typedArray"] & {},
  json: readonly unknown[],
  size: number,
): OutputTypedArray {
  const flat = json.flat(Number.POSITIVE_INFINITY) as unknown[];
  if (flat.length !== size) {
    throw new MalformedResponseError(`output '${name}': ${flat.length} JSON elements, shape says ${size}`);
  }
  const out = new Ctor(size) as OutputTypedArray;
  const big = datatype === "INT64" || datatype === "UINT64";
  const integer = NARROW_INTEGER_RANGES[datatype] !== undefined;
  for (let i = 0; i < size; i++) {
    const v = flat[i];
    if (big) {
      // bigints from the response's digits (infer-decoding.ts); a number only where it is exact.
      const value = typeof v === "bigint" ? v : Number.isSafeInteger(v) ? BigInt(v as number) : undefined;
      const [min, max] = WIDE_INTEGER_RANGES[datatype];
      if (value === undefined || value < min || value > max) throw badElement(name, datatype, i, v);
      (out as BigInt64Array)[i] = value;
    } else if (datatype === "BOOL") {
      if (typeof v !== "boolean") throw badElement(name, datatype, i, v);
      (out as Uint8Array)[i] = v ? 1 : 0;
    } else {
      if (typeof v !== "number") throw badElement(name, datatype, i, v);
      (out as Float64Array)[i] = v;
      // An integer type holds the value unchanged, or it is refused (the store wrapped or truncated it).
      if (integer && (out as Float64Array)[i] !== v) throw badElement(name, datatype, i, v);
    }
  }
  return out;
}

function badElement(name: string, datatype: Datatype, index: number, value: unknown): MalformedResponseError {
  const shown = typeof value === "bigint" ? String(value) : JSON.stringify(value);
  return new MalformedResponseError(
    `output '${name}': element ${index} is ${shown}, not a ${datatype} value`,
  );
}

/** Builds an output tensor (used by the transports). */
export function createOutputTensor(init: OutputTensorInit): OutputTensor {
  return new Output(init);
}

class Result implements InferResult {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly id: string | undefined;
  readonly parameters: Readonly<Record<string, ParameterValue>> | undefined;
  readonly outputs: readonly OutputTensor[];

  constructor(
    modelName: string,
    modelVersion: string,
    id: string | undefined,
    parameters: Readonly<Record<string, ParameterValue>> | undefined,
    outputs: readonly OutputTensor[],
  ) {
    this.modelName = modelName;
    this.modelVersion = modelVersion;
    this.id = id;
    this.parameters = parameters;
    this.outputs = outputs;
  }

  output(name: string): OutputTensor | undefined {
    for (const o of this.outputs) if (o.name === name) return o;
    return undefined;
  }
}

/** Builds an infer result (used by the transports). */
export function createInferResult(
  modelName: string,
  modelVersion: string,
  id: string | undefined,
  parameters: Readonly<Record<string, ParameterValue>> | undefined,
  outputs: readonly OutputTensor[],
): InferResult {
  return new Result(modelName, modelVersion, id, parameters, outputs);
}
