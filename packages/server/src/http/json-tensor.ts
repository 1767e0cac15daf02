/**
 * Tensor data in JSON form, both ways: request `data` arrays (flat or nested, row-major) into the core's
 * TypedArrays or BytesData, and response tensors into `data` array text. Element checks follow the
 * datatype: numbers for numeric types (integers for integer types), booleans for BOOL, strings for BYTES.
 */
import { type Datatype, type DatatypeInfo, datatypeInfo } from "@tbench/proto";
import { bytesDataFromStrings, bytesDataToStrings, isBytesData } from "../core/bytes-data.js";
import type { TensorData } from "../core/types.js";
import { badRequest } from "./http-error.js";

/** Deepest nesting of `data` arrays accepted (Triton's HTTP_MAX_JSON_NESTING_DEPTH is of the same order). */
const MAX_DEPTH = 100;

/** Where an input comes from, for messages. */
export interface TensorContext {
  readonly model: string;
  readonly input: string;
}

function flatten(data: unknown, out: unknown[], depth: number, ctx: TensorContext): void {
  if (depth > MAX_DEPTH) {
    throw badRequest(
      `unable to parse 'data' for input '${ctx.input}' of model '${ctx.model}': nesting deeper than ${MAX_DEPTH} levels`,
    );
  }
  if (!Array.isArray(data)) {
    out.push(data);
    return;
  }
  for (const item of data) flatten(item, out, depth + 1, ctx);
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `string ${JSON.stringify(value).slice(0, 40)}`;
  return `${typeof value} ${String(value).slice(0, 40)}`;
}

function elementError(ctx: TensorContext, datatype: Datatype, index: number, value: unknown, want: string) {
  return badRequest(
    `unable to parse 'data' for input '${ctx.input}' of model '${ctx.model}': element ${index} should be ` +
      `${want} for datatype ${datatype}, got ${describeValue(value)}`,
  );
}

/** Converts a JSON `data` value into tensor data of `datatype` holding exactly `elementCount` elements. */
export function decodeJsonData(
  data: unknown,
  datatype: Datatype,
  shape: readonly number[],
  elementCount: number,
  ctx: TensorContext,
): TensorData {
  if (datatype === "FP16" || datatype === "BF16") {
    throw badRequest(
      `receiving ${datatype} data via JSON is not supported. Please use the binary data format for input ${ctx.input}`,
    );
  }
  if (!Array.isArray(data)) {
    throw badRequest(
      `unable to parse 'data' for input '${ctx.input}' of model '${ctx.model}': expected an array, got ${describeValue(data)}`,
    );
  }
  // Flat `data` (the usual form) is used as it is: a copy would cost 8 bytes or more per element.
  let flat: unknown[] = data;
  if (data.some(Array.isArray)) {
    flat = [];
    flatten(data, flat, 0, ctx);
  }
  if (flat.length !== elementCount) {
    throw badRequest(
      `unable to parse 'data' for input '${ctx.input}' of model '${ctx.model}': shape [${shape.join(",")}] ` +
        `expects ${elementCount} elements, got ${flat.length}`,
    );
  }
  if (datatype === "BYTES") {
    for (let i = 0; i < flat.length; i++) {
      const value = flat[i];
      if (typeof value !== "string") throw elementError(ctx, datatype, i, value, "a string");
    }
    return bytesDataFromStrings(flat as string[]);
  }
  const info = datatypeInfo(datatype) as DatatypeInfo;
  const TypedArray = info.typedArray!;
  const out = new TypedArray(flat.length);
  if (datatype === "BOOL") {
    for (let i = 0; i < flat.length; i++) {
      const value = flat[i];
      if (typeof value !== "boolean") throw elementError(ctx, datatype, i, value, "a boolean");
      out[i] = value ? 1 : 0;
    }
    return out;
  }
  const integer = datatype !== "FP32" && datatype !== "FP64";
  const big = out instanceof BigInt64Array || out instanceof BigUint64Array;
  const unsigned = datatype.startsWith("UINT");
  for (let i = 0; i < flat.length; i++) {
    const value = flat[i];
    if (typeof value !== "number") throw elementError(ctx, datatype, i, value, "a number");
    if (integer && !Number.isInteger(value)) throw elementError(ctx, datatype, i, value, "an integer");
    if (unsigned && value < 0) throw elementError(ctx, datatype, i, value, "a non-negative integer");
    if (big) (out as BigInt64Array)[i] = BigInt(value);
    else (out as Float64Array)[i] = value;
  }
  return out;
}

/** JSON text of a response tensor's `data` array (flat, row-major, as Triton writes it). */
export function encodeJsonData(data: TensorData, datatype: Datatype, output: string): string {
  if (datatype === "FP16" || datatype === "BF16") {
    throw badRequest(
      `sending ${datatype} data via JSON is not supported. Please use the binary data format for output ${output}`,
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
  return "[" + Array.prototype.join.call(typed, ",") + "]";
}
