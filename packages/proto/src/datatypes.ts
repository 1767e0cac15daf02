/**
 * The datatype table: one row per KServe v2 tensor datatype, with its Triton model-config enum name, the
 * TypedArray that holds it, its onnxruntime-node tensor type, its ONNX TensorProto element type and its
 * size in bytes. Every package converts between these names through this table only.
 */
import type { DataType } from "./gen/model-config-types.js";

/** KServe v2 datatype names, as they appear in requests, responses and model metadata. */
export const DATATYPES = [
  "BOOL",
  "UINT8",
  "UINT16",
  "UINT32",
  "UINT64",
  "INT8",
  "INT16",
  "INT32",
  "INT64",
  "FP16",
  "FP32",
  "FP64",
  "BYTES",
  "BF16",
] as const;

/** A KServe v2 datatype name. */
export type Datatype = (typeof DATATYPES)[number];

/** Datatypes whose elements have a fixed size (every one but BYTES). */
export type FixedSizeDatatype = Exclude<Datatype, "BYTES">;

/** The TypedArray that holds each fixed-size datatype's elements (FP16 and BF16 hold raw bits). */
export interface TypedArrayByDatatype {
  BOOL: Uint8Array;
  UINT8: Uint8Array;
  UINT16: Uint16Array;
  UINT32: Uint32Array;
  UINT64: BigUint64Array;
  INT8: Int8Array;
  INT16: Int16Array;
  INT32: Int32Array;
  INT64: BigInt64Array;
  FP16: Uint16Array;
  FP32: Float32Array;
  FP64: Float64Array;
  BF16: Uint16Array;
}

/**
 * For the `default` of a switch over a Datatype that lists every datatype: the compiler rejects the call
 * when a datatype has no case, so a new datatype is flagged wherever it must be handled.
 */
export function unhandledDatatype(datatype: never): never {
  throw new Error(`datatype ${String(datatype)} is not handled here`);
}

/** Any TypedArray that some datatype uses. */
export type TensorTypedArray = TypedArrayByDatatype[FixedSizeDatatype];

/** A constructor of one of the TypedArrays above. */
export type TypedArrayConstructor =
  | Uint8ArrayConstructor
  | Uint16ArrayConstructor
  | Uint32ArrayConstructor
  | BigUint64ArrayConstructor
  | Int8ArrayConstructor
  | Int16ArrayConstructor
  | Int32ArrayConstructor
  | BigInt64ArrayConstructor
  | Float32ArrayConstructor
  | Float64ArrayConstructor;

/** onnxruntime-node tensor type names (`Tensor.type`). */
export type OrtTensorType =
  | "bool"
  | "uint8"
  | "uint16"
  | "uint32"
  | "uint64"
  | "int8"
  | "int16"
  | "int32"
  | "int64"
  | "float16"
  | "float32"
  | "float64"
  | "string";

/** Triton model-config `DataType` enum names (`TYPE_FP32` ...), as generated from model_config.proto. */
export type ConfigDataType = DataType;

/** One row of the datatype table. */
export interface DatatypeInfo {
  /** KServe v2 name, e.g. `FP32`. */
  readonly datatype: Datatype;
  /** model_config.proto `DataType` enum name, e.g. `TYPE_FP32` (BYTES is `TYPE_STRING`). */
  readonly configType: ConfigDataType;
  /** model_config.proto `DataType` enum number. */
  readonly configTypeNumber: number;
  /** Bytes per element; `undefined` for BYTES, whose elements vary in length. */
  readonly byteSize: number | undefined;
  /** TypedArray constructor for the elements; `undefined` for BYTES. */
  readonly typedArray: TypedArrayConstructor | undefined;
  /** onnxruntime-node tensor type; `undefined` where onnxruntime-node has none (BF16). */
  readonly ortType: OrtTensorType | undefined;
  /** ONNX `TensorProto.DataType` number. */
  readonly onnxType: number;
}

/** A row's fields but its datatype, which is its key in ROWS. */
type Row = Omit<DatatypeInfo, "datatype">;

function row(
  configType: ConfigDataType,
  configTypeNumber: number,
  byteSize: number | undefined,
  typedArray: TypedArrayConstructor | undefined,
  ortType: OrtTensorType | undefined,
  onnxType: number,
): Row {
  return { configType, configTypeNumber, byteSize, typedArray, ortType, onnxType };
}

/** The table, keyed by datatype so that a datatype without its row does not compile. */
const ROWS: { readonly [D in Datatype]: Row } = {
  BOOL: row("TYPE_BOOL", 1, 1, Uint8Array, "bool", 9),
  UINT8: row("TYPE_UINT8", 2, 1, Uint8Array, "uint8", 2),
  UINT16: row("TYPE_UINT16", 3, 2, Uint16Array, "uint16", 4),
  UINT32: row("TYPE_UINT32", 4, 4, Uint32Array, "uint32", 12),
  UINT64: row("TYPE_UINT64", 5, 8, BigUint64Array, "uint64", 13),
  INT8: row("TYPE_INT8", 6, 1, Int8Array, "int8", 3),
  INT16: row("TYPE_INT16", 7, 2, Int16Array, "int16", 5),
  INT32: row("TYPE_INT32", 8, 4, Int32Array, "int32", 6),
  INT64: row("TYPE_INT64", 9, 8, BigInt64Array, "int64", 7),
  FP16: row("TYPE_FP16", 10, 2, Uint16Array, "float16", 10),
  FP32: row("TYPE_FP32", 11, 4, Float32Array, "float32", 1),
  FP64: row("TYPE_FP64", 12, 8, Float64Array, "float64", 11),
  BYTES: row("TYPE_STRING", 13, undefined, undefined, "string", 8),
  BF16: row("TYPE_BF16", 14, 2, Uint16Array, undefined, 16),
};

const TABLE: readonly DatatypeInfo[] = DATATYPES.map((datatype) =>
  Object.freeze({ datatype, ...ROWS[datatype] }),
);

const byDatatype = new Map(TABLE.map((info) => [info.datatype, info]));
const byConfigType = new Map(TABLE.map((info) => [info.configType, info]));
const byOrtType = new Map(TABLE.filter((info) => info.ortType !== undefined).map((i) => [i.ortType, i]));
const byOnnxType = new Map(TABLE.map((info) => [info.onnxType, info]));

/** Every row of the table, in DATATYPES order. */
export function allDatatypes(): readonly DatatypeInfo[] {
  return TABLE;
}

/** True when `name` is a KServe v2 datatype name (case-sensitive, as the protocol is). */
export function isDatatype(name: unknown): name is Datatype {
  return typeof name === "string" && byDatatype.has(name as Datatype);
}

/** The row for a v2 datatype name, or `undefined` for an unknown name. */
export function datatypeInfo(datatype: string): DatatypeInfo | undefined {
  return byDatatype.get(datatype as Datatype);
}

/** The row for a model-config enum name (`TYPE_FP32`), or `undefined`. */
export function datatypeFromConfigType(configType: string): DatatypeInfo | undefined {
  return byConfigType.get(configType as ConfigDataType);
}

/** The row for an onnxruntime-node tensor type (`float32`), or `undefined`. */
export function datatypeFromOrtType(ortType: string): DatatypeInfo | undefined {
  return byOrtType.get(ortType as OrtTensorType);
}

/** The row for an ONNX `TensorProto.DataType` number, or `undefined` (also for types v2 cannot carry). */
export function datatypeFromOnnxType(onnxType: number): DatatypeInfo | undefined {
  return byOnnxType.get(onnxType);
}
