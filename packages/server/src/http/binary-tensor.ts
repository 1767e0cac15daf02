/**
 * Tensor data in the binary tensor extension's form: raw little-endian row-major elements, BOOL one byte,
 * BYTES as a 4-byte little-endian length then the bytes. Decoding views the received body where the
 * element alignment allows and copies only when it does not; BYTES stay in that form (core/bytes-data.ts),
 * unchecked here: like Triton's HTTP server, this layer leaves their lengths and count to the core.
 */
import { type Datatype, type DatatypeInfo, datatypeInfo } from "@tbench/proto";
import { isBytesData } from "../core/bytes-data.js";
import { logRequest } from "../core/log-request.js";
import type { TensorData } from "../core/types.js";
import { badRequest, type HttpError } from "./http-error.js";
import type { TensorContext } from "./json-tensor.js";

function sizeMismatch(ctx: TensorContext, expected: number, given: number): HttpError {
  // The core's message (InferenceRequest::Normalize), LogRequest() prefix included.
  return badRequest(
    `${logRequest(ctx.requestId === undefined ? {} : { id: ctx.requestId })}input byte size mismatch for input '${ctx.input}' for model '${ctx.model}'. Expected ${expected}, got ${given}`,
  );
}

/** Tensor data of `datatype` from its binary form; the size must match `elementCount`. */
export function decodeBinaryData(
  bytes: Uint8Array,
  datatype: Datatype,
  elementCount: number,
  ctx: TensorContext,
): TensorData {
  // BYTES are taken as the shape says; the core walks them (request-validation.ts), as Triton's does.
  if (datatype === "BYTES") return { count: elementCount, wire: bytes };
  const info = datatypeInfo(datatype) as DatatypeInfo;
  const elementSize = info.byteSize!;
  const expected = elementCount * elementSize;
  if (bytes.byteLength !== expected) throw sizeMismatch(ctx, expected, bytes.byteLength);
  const TypedArray = info.typedArray!;
  if (bytes.byteOffset % elementSize === 0) {
    return new TypedArray(bytes.buffer as ArrayBuffer, bytes.byteOffset, elementCount);
  }
  // Misaligned in the body: one copy into a fresh, aligned buffer.
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new TypedArray(copy.buffer, 0, elementCount);
}

/** The byte size of tensor data in binary form. */
export function binaryByteSize(data: TensorData): number {
  return isBytesData(data) ? data.wire.byteLength : data.byteLength;
}

/** Tensor data in binary form: a view, BYTES already being in its wire form. */
export function encodeBinaryData(data: TensorData): Uint8Array {
  if (isBytesData(data)) return data.wire;
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}
