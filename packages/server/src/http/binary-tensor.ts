/**
 * Tensor data in the binary tensor extension's form: raw little-endian row-major elements, BOOL one byte,
 * BYTES as a 4-byte little-endian length then the bytes. Decoding views the received body where the
 * element alignment allows and copies only when it does not.
 */
import { type Datatype, type DatatypeInfo, datatypeInfo } from "@tbench/proto";
import type { TensorData } from "../core/types.js";
import { badRequest, type HttpError } from "./http-error.js";
import type { TensorContext } from "./json-tensor.js";

function sizeMismatch(ctx: TensorContext, expected: number, given: number): HttpError {
  return badRequest(
    `input byte size mismatch for input '${ctx.input}' for model '${ctx.model}'. Expected ${expected}, got ${given}`,
  );
}

/** Splits BYTES elements out of `bytes`; the element count must equal `elementCount`. */
function decodeBytesElements(bytes: Uint8Array, elementCount: number, ctx: TensorContext): Uint8Array[] {
  const elements: Uint8Array[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 0;
  while (offset < bytes.byteLength) {
    if (offset + 4 > bytes.byteLength) {
      throw badRequest(
        `unable to parse BYTES input '${ctx.input}' of model '${ctx.model}': element ${elements.length} ` +
          `has ${bytes.byteLength - offset} bytes left for its 4-byte length`,
      );
    }
    const length = view.getUint32(offset, true);
    offset += 4;
    if (offset + length > bytes.byteLength) {
      throw badRequest(
        `unable to parse BYTES input '${ctx.input}' of model '${ctx.model}': element ${elements.length} ` +
          `declares ${length} bytes, ${bytes.byteLength - offset} are left`,
      );
    }
    elements.push(bytes.subarray(offset, offset + length));
    offset += length;
  }
  if (elements.length !== elementCount) {
    throw badRequest(
      `unexpected number of string elements for input '${ctx.input}' for model '${ctx.model}': ` +
        `expected ${elementCount} (from shape), got ${elements.length}`,
    );
  }
  return elements;
}

/** Tensor data of `datatype` from its binary form; the size must match `elementCount`. */
export function decodeBinaryData(
  bytes: Uint8Array,
  datatype: Datatype,
  elementCount: number,
  ctx: TensorContext,
): TensorData {
  if (datatype === "BYTES") return decodeBytesElements(bytes, elementCount, ctx);
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
  if (!Array.isArray(data)) return (data as Uint8Array).byteLength;
  let size = 0;
  for (const element of data) size += 4 + element.byteLength;
  return size;
}

/** Tensor data in binary form (a view where the data is already contiguous). */
export function encodeBinaryData(data: TensorData): Uint8Array {
  if (!Array.isArray(data)) {
    const typed = data as Uint8Array;
    return new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
  }
  const out = Buffer.allocUnsafe(binaryByteSize(data));
  let offset = 0;
  for (const element of data) {
    out.writeUInt32LE(element.byteLength, offset);
    out.set(element, offset + 4);
    offset += 4 + element.byteLength;
  }
  return out;
}
