/**
 * Tensor data in JSON form, both ways: request `data` arrays (flat or nested, row-major) into the core's
 * TypedArrays or BytesData, and response tensors into `data` array text. Checks and messages are Triton's
 * (server `src/http_server.cc`, ReadDataFromJson / JsonBytesArrayByteSize / WriteDataToJson): an element
 * of the wrong JSON type is TritonJson's failure under "Unable to parse 'data'" (500, see triton-json.ts),
 * a count that differs from the shape is Triton's INTERNAL "shape does not match" (500), nesting past 100
 * levels is 400. INT64 and UINT64 are read from their digits (json-data-spans.ts), so every value in range
 * arrives exactly and every other one is refused as Triton refuses it (rapidjson's IsInt64 / IsUint64).
 * Where Triton stores an integer that does not fit a narrower type wrapped (INT8 300 becomes 44: its
 * ReadDataFromJsonHelper casts with a FIXME), tbench-server refuses it with a message of its own (400); so
 * too a float past FP32's or FP64's range (Triton's cast would store FP32 1e300 as inf).
 */
import {
  type Datatype,
  type DatatypeInfo,
  datatypeInfo,
  forEachDataElement,
  NARROW_INTEGER_RANGES,
  type TextSpan,
  WIDE_INTEGER_RANGES,
} from "@tbench/proto";
import { bytesDataFromStrings, bytesDataToStrings, isBytesData } from "../core/bytes-data.js";
import type { TensorData } from "../core/types.js";
import { badRequest, HttpError } from "./http-error.js";
import {
  NON_ARRAY,
  NON_BOOLEAN,
  NON_NUMBER,
  NON_SIGNED,
  NON_STRING,
  NON_UNSIGNED,
  TRITON_JSON_STATUS,
  tritonJsonError,
} from "./triton-json.js";

/** Deepest nesting of `data` arrays accepted: Triton's HTTP_MAX_JSON_NESTING_DEPTH (server src/common.h). */
const MAX_DEPTH = 100;
const NESTING = `JSON nesting depth exceeds maximum allowed limit (${MAX_DEPTH})`;
const DATA = "Unable to parse 'data'";

/** Where an input comes from, for messages. */
export interface TensorContext {
  readonly model: string;
  readonly input: string;
  /** The request's id, for Triton's `[request id: <id>] ` prefix (LogRequest) on the core's messages. */
  readonly requestId: string | undefined;
}

/** Where the request's JSON text holds this input's `data` (needed for INT64 and UINT64). */
export interface JsonDataSource {
  readonly text: string;
  readonly span: TextSpan;
}

function shapeMismatch(tooMany: boolean): HttpError {
  // Triton's two INTERNAL messages: one while walking past the count, one after falling short of it.
  return tooMany
    ? tritonJsonError(DATA, "Shape does not match true shape of 'data' field")
    : new HttpError(TRITON_JSON_STATUS, "Failed to parse 'data' field: shape does not match true shape");
}

function flatten(data: readonly unknown[], out: unknown[], depth: number, bytes: boolean): void {
  for (const item of data) {
    // Triton refuses any value at depth 100 or more, the `data` array itself being depth 0; its BYTES
    // sizing pass (JsonBytesArrayByteSize) says so without the "Unable to parse 'data'" prefix.
    if (depth >= MAX_DEPTH) throw badRequest(bytes ? NESTING : `${DATA}: ${NESTING}`);
    if (Array.isArray(item)) flatten(item, out, depth + 1, bytes);
    else out.push(item);
  }
}

/** The elements of `data` in row-major order; flat `data` (the usual form) is used as it is, not copied. */
function flatElements(data: readonly unknown[], bytes: boolean): readonly unknown[] {
  if (!data.some(Array.isArray)) return data;
  const flat: unknown[] = [];
  flatten(data, flat, 1, bytes);
  return flat;
}

function maxInputSizeError(input: string, byteSize: number | bigint, maxInputSize: number): HttpError {
  return badRequest(
    `JSON input '${input}' has a byte_size (${byteSize} bytes) that exceeds the maximum allowed value of ` +
      `${maxInputSize} bytes. Use --http-max-input-size to increase the limit.`,
  );
}

/** Refuses a JSON input over --http-max-input-size as Triton does, from its count (BYTES: from its strings). */
export function checkJsonInputSize(
  input: string,
  datatype: Datatype,
  elementCount: number,
  maxInputSize: number,
): void {
  const byteSize = (datatypeInfo(datatype)?.byteSize ?? 0) * elementCount;
  if (byteSize > maxInputSize) throw maxInputSizeError(input, byteSize, maxInputSize);
}

function decodeBytes(data: readonly unknown[], ctx: TensorContext, maxInputSize: number): TensorData {
  const flat = flatElements(data, true);
  // Triton sizes the tensor first (each string's bytes plus its 4-byte length), refusing non-strings.
  let byteSize = 0;
  for (let i = 0; i < flat.length; i++) {
    const value = flat[i];
    if (typeof value !== "string") throw tritonJsonError("Unable to parse JSON bytes array", NON_STRING);
    byteSize += Buffer.byteLength(value, "utf8") + 4;
  }
  if (byteSize > maxInputSize) throw maxInputSizeError(ctx.input, byteSize, maxInputSize);
  // The element count against the shape is the core's check, as in Triton (request-validation.ts).
  return bytesDataFromStrings(flat as string[]);
}

/**
 * Reads the 64-bit integer elements of `source` (the `data` array's text, flattened in document order)
 * into `out`, refusing what Triton refuses: anything but an integer literal (rapidjson keeps fractions and
 * exponents as doubles, and strings are not numbers) and values past the type. A literal of at most 15
 * digits is exact as JSON.parse's double already, so only longer ones are read from their text.
 */
function decode64(
  flat: readonly unknown[],
  out: BigInt64Array | BigUint64Array,
  unsigned: boolean,
  source: JsonDataSource,
): void {
  const { text, span } = source;
  const [min, max] = unsigned ? WIDE_INTEGER_RANGES.UINT64 : WIDE_INTEGER_RANGES.INT64;
  let i = 0;
  forEachDataElement(text, span, (p, end) => {
    if (i < out.length) {
      const digitsStart = text.charCodeAt(p) === 0x2d ? p + 1 : p; // '-'
      const digits = end - digitsStart;
      let literal = digits > 0 && (digits === 1 || text.charCodeAt(digitsStart) !== 0x30);
      for (let k = digitsStart; literal && k < end; k++) {
        const d = text.charCodeAt(k);
        literal = d >= 0x30 && d <= 0x39;
      }
      if (!literal) throw tritonJsonError(DATA, unsigned ? NON_UNSIGNED : NON_SIGNED);
      const value = digits <= 15 ? BigInt(flat[i] as number) : BigInt(text.slice(p, end));
      if (value < min || value > max) throw tritonJsonError(DATA, unsigned ? NON_UNSIGNED : NON_SIGNED);
      out[i] = value;
    }
    i++;
  });
  // The text and JSON.parse's value are the same document: their counts agree.
  if (i !== flat.length) throw new Error(`JSON data text holds ${i} elements, its value ${flat.length}`);
}

function narrowIntegerError(
  ctx: TensorContext,
  datatype: Datatype,
  index: number,
  value: number,
  range: readonly [number, number],
): HttpError {
  const unsigned = range[0] === 0;
  // Not an integer, past 64 bits, or negative for an unsigned type: Triton refuses it too, in TritonJson's words.
  if (
    !Number.isInteger(value) ||
    (unsigned ? value < 0 || value >= 2 ** 64 : value < -(2 ** 63) || value >= 2 ** 63)
  ) {
    return tritonJsonError(DATA, unsigned ? NON_UNSIGNED : NON_SIGNED);
  }
  return badRequest(
    `${DATA}: element ${index} of input '${ctx.input}' for model '${ctx.model}' is ${value}, outside the range ` +
      `of ${datatype} [${range[0]}, ${range[1]}]`,
  );
}

/** Largest finite magnitude of each JSON float type. */
const FLOAT_MAX = { FP32: 3.4028234663852886e38, FP64: Number.MAX_VALUE } as const;

function floatRangeError(
  ctx: TensorContext,
  datatype: "FP32" | "FP64",
  index: number,
  value: number,
): HttpError {
  const max = FLOAT_MAX[datatype];
  const what = Number.isFinite(value) ? `is ${value}` : "is a number too large for a double";
  return badRequest(
    `${DATA}: element ${index} of input '${ctx.input}' for model '${ctx.model}' ${what}, outside the range ` +
      `of ${datatype} [${-max}, ${max}]`,
  );
}

/**
 * Converts a JSON `data` array into tensor data of `datatype` holding `elementCount` elements (the caller
 * handles a count of 0, which Triton does not read, and a `data` that is not an array). INT64 and UINT64
 * need `source`, the array's text.
 */
export function decodeJsonData(
  data: readonly unknown[],
  datatype: Datatype,
  elementCount: number,
  ctx: TensorContext,
  maxInputSize: number,
  source: JsonDataSource | undefined,
): TensorData {
  if (datatype === "BYTES") return decodeBytes(data, ctx, maxInputSize);
  checkJsonInputSize(ctx.input, datatype, elementCount, maxInputSize);
  if (datatype === "FP16" || datatype === "BF16") {
    throw badRequest(
      `receiving ${datatype} data via JSON is not supported. Please use the binary data format for input ${ctx.input}`,
    );
  }
  const flat = flatElements(data, false);
  const info = datatypeInfo(datatype) as DatatypeInfo;
  const out = new info.typedArray!(elementCount);
  const count = Math.min(flat.length, elementCount);
  if (out instanceof BigInt64Array || out instanceof BigUint64Array) {
    if (source === undefined) throw new Error(`decodeJsonData: ${datatype} needs the JSON text of its data`);
    decode64(flat, out, datatype === "UINT64", source);
  } else if (datatype === "BOOL") {
    for (let i = 0; i < count; i++) {
      const value = flat[i];
      if (typeof value !== "boolean") throw tritonJsonError(DATA, NON_BOOLEAN);
      (out as Uint8Array)[i] = value ? 1 : 0;
    }
  } else if (datatype === "FP32" || datatype === "FP64") {
    const floats = out as Float64Array;
    for (let i = 0; i < count; i++) {
      const value = flat[i];
      if (typeof value !== "number") throw tritonJsonError(DATA, NON_NUMBER);
      floats[i] = value;
      // JSON has no Infinity or NaN: a stored non-finite value overflowed the type (FP32 1e300, or FP64 1e400,
      // which JSON.parse reads as Infinity). Triton would store FP32 inf silently; refused here.
      if (floats[i]! - floats[i]! !== 0) throw floatRangeError(ctx, datatype, i, value);
    }
  } else {
    const range = NARROW_INTEGER_RANGES[datatype]!;
    const typed = out as Int32Array;
    for (let i = 0; i < count; i++) {
      const value = flat[i];
      if (typeof value !== "number") throw tritonJsonError(DATA, range[0] === 0 ? NON_UNSIGNED : NON_SIGNED);
      typed[i] = value;
      // The store changed it: a fraction, or out of the type's range (one compare on the hot path).
      if (typed[i] !== value) throw narrowIntegerError(ctx, datatype, i, value, range);
    }
  }
  if (flat.length !== elementCount) throw shapeMismatch(flat.length > elementCount);
  return out;
}

/** Triton's refusal of a JSON `data` member that is not an array. */
export function dataNotArray(): HttpError {
  return tritonJsonError(DATA, NON_ARRAY);
}

/** JSON text of a response tensor's `data` array (flat, row-major, as Triton writes it). */
export function encodeJsonData(data: TensorData, datatype: Datatype): string {
  if (datatype === "FP16" || datatype === "BF16") {
    // Triton's WriteDataToJson message ends here, without the output's name.
    throw badRequest(
      `sending ${datatype} data via JSON is not supported. Please use the binary data format for output`,
    );
  }
  if (isBytesData(data)) {
    // JSON has to spell every element out; the element count is bounded by --max-bytes-tensor-elements.
    const parts = bytesDataToStrings(data);
    for (let i = 0; i < parts.length; i++) parts[i] = JSON.stringify(parts[i]);
    return `[${parts.join(",")}]`;
  }
  const typed = data;
  if (datatype === "BOOL") {
    let text = "[";
    for (let i = 0; i < typed.length; i++)
      text += i === 0 ? (typed[i] ? "true" : "false") : typed[i] ? ",true" : ",false";
    return text + "]";
  }
  if (datatype === "FP32" || datatype === "FP64") {
    // JSON has no NaN or Infinity; null is what JSON.stringify writes for them.
    const floats = typed as Float32Array;
    let finite = true;
    for (let i = 0; i < floats.length; i++) {
      if (!Number.isFinite(floats[i])) {
        finite = false;
        break;
      }
    }
    if (!finite) return JSON.stringify(Array.from(floats));
  }
  // BigInt64Array and BigUint64Array join their elements' exact decimal digits.
  return "[" + Array.prototype.join.call(typed, ",") + "]";
}
