/**
 * BYTES tensor data without one JavaScript object per element. A BYTES tensor is held in the binary tensor
 * extension's own form: one Uint8Array in which each element is a 4-byte little-endian length followed by
 * its bytes, plus the element count. Decoding a request keeps a view of the body; checks walk the lengths;
 * batches concatenate into one transferable buffer; splits and binary responses are views. Only the
 * instance worker turns elements into strings, because onnxruntime-node's string tensors take a string[].
 */
import { Buffer, isUtf8 } from "node:buffer";
import type { BytesData, TensorData } from "./types.js";

/**
 * Default bound on the elements of one BYTES tensor of a request (--max-bytes-tensor-elements).
 * onnxruntime-node takes one JavaScript string per element, so the worker makes them for the input and
 * the output, and onnxruntime copies each: about 70 bytes per element on top of the bytes themselves.
 * Measured: 2^20 empty elements cost +110 MiB and answer within a second; 16,000,000 cost +1.6 GiB and
 * 15 s (README, Limits).
 */
export const DEFAULT_MAX_BYTES_TENSOR_ELEMENTS = 1_048_576;

/** The refusal of a BYTES input over the element limit, the same from the HTTP decoder and validation. */
export function bytesTensorTooLarge(model: string, input: string, count: number, limit: number): string {
  return (
    `input '${input}' of model '${model}' has ${count} BYTES elements, more than the ${limit} allowed ` +
    "per BYTES tensor. Use --max-bytes-tensor-elements to increase the limit."
  );
}

/** What walking a wire form found: its element count, or where its lengths stop making sense. */
export type BytesWalk =
  | { readonly ok: true; readonly count: number }
  | { readonly ok: false; readonly index: number; readonly message: string };

/** Called per element with its byte range in the wire form (the bytes after the length). */
export type BytesElementVisitor = (start: number, end: number, index: number) => void;

/** True for BYTES data, false for a TypedArray. */
export function isBytesData(data: TensorData): data is BytesData {
  return !ArrayBuffer.isView(data);
}

function readLength(wire: Uint8Array, offset: number): number {
  return (
    (wire[offset]! | (wire[offset + 1]! << 8) | (wire[offset + 2]! << 16) | (wire[offset + 3]! << 24)) >>> 0
  );
}

/**
 * Walks the elements of `wire` once, calling `visit` per element when given. Allocates nothing per element;
 * a length that runs past the end stops the walk with a message naming the element.
 */
export function walkBytesElements(wire: Uint8Array, visit?: BytesElementVisitor): BytesWalk {
  const size = wire.byteLength;
  let offset = 0;
  let index = 0;
  while (offset < size) {
    if (offset + 4 > size) {
      return {
        ok: false,
        index,
        message: `element ${index} has ${size - offset} bytes left for its 4-byte length`,
      };
    }
    const length = readLength(wire, offset);
    offset += 4;
    if (length > size - offset) {
      return {
        ok: false,
        index,
        message: `element ${index} declares ${length} bytes, ${size - offset} are left`,
      };
    }
    visit?.(offset, offset + length, index);
    offset += length;
    index++;
  }
  return { ok: true, count: index };
}

/**
 * Why element bytes `wire[start, end)` cannot become an onnxruntime-node string unchanged (invalid UTF-8
 * would be replaced, a NUL byte cuts the C string short), or undefined when they can. ASCII is checked
 * in place; only an element with a byte >= 0x80 gets a view, for node's UTF-8 validator.
 */
export function bytesElementProblem(wire: Uint8Array, start: number, end: number): string | undefined {
  let ascii = true;
  let nul = false;
  for (let i = start; i < end; i++) {
    const byte = wire[i]!;
    if (byte === 0) nul = true;
    else if (byte >= 0x80) ascii = false;
  }
  if (!ascii && !isUtf8(wire.subarray(start, end))) return "is not valid UTF-8";
  if (nul) return "contains a NUL byte";
  return undefined;
}

/** A Buffer over the same bytes (no copy), for its ranged utf8 reads and writes. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** One fresh, unpooled buffer: its ArrayBuffer is its own, so it can be transferred to or from a worker. */
function ownedBuffer(size: number): Buffer {
  return Buffer.allocUnsafeSlow(size);
}

/** BYTES data from strings, UTF-8 encoded, in one owned buffer. */
export function bytesDataFromStrings(strings: readonly string[]): BytesData {
  let size = 0;
  for (const s of strings) size += 4 + (s.length === 0 ? 0 : Buffer.byteLength(s, "utf8"));
  const wire = ownedBuffer(size);
  let offset = 0;
  for (const s of strings) {
    const length = s.length === 0 ? 0 : wire.write(s, offset + 4, "utf8");
    wire.writeUInt32LE(length, offset);
    offset += 4 + length;
  }
  return { count: strings.length, wire };
}

/** BYTES data from separate byte strings (tests, small tensors), in one owned buffer. */
export function bytesDataFromArrays(elements: readonly Uint8Array[]): BytesData {
  let size = 0;
  for (const element of elements) size += 4 + element.byteLength;
  const wire = ownedBuffer(size);
  let offset = 0;
  for (const element of elements) {
    wire.writeUInt32LE(element.byteLength, offset);
    wire.set(element, offset + 4);
    offset += 4 + element.byteLength;
  }
  return { count: elements.length, wire };
}

/**
 * The elements as strings (replacing invalid UTF-8, which validation refuses before this is reached). Only
 * the instance worker and JSON responses make these.
 */
export function bytesDataToStrings(data: BytesData): string[] {
  const buffer = asBuffer(data.wire);
  const strings: string[] = new Array(data.count);
  const walk = walkBytesElements(data.wire, (start, end, index) => {
    strings[index] = start === end ? "" : buffer.toString("utf8", start, end);
  });
  if (!walk.ok) throw new RangeError(`malformed BYTES data: ${walk.message}`);
  return strings;
}

/** The elements as views of the wire form (tests and small tensors; one object per element). */
export function bytesDataToArrays(data: BytesData): Uint8Array[] {
  const elements: Uint8Array[] = [];
  const walk = walkBytesElements(data.wire, (start, end) => elements.push(data.wire.subarray(start, end)));
  if (!walk.ok) throw new RangeError(`malformed BYTES data: ${walk.message}`);
  return elements;
}

/** The parts one after the other, in one owned buffer (a batch's input, transferred to the worker). */
export function concatBytesData(parts: readonly BytesData[]): BytesData {
  let size = 0;
  let count = 0;
  for (const part of parts) {
    size += part.wire.byteLength;
    count += part.count;
  }
  const wire = ownedBuffer(size);
  let offset = 0;
  for (const part of parts) {
    wire.set(part.wire, offset);
    offset += part.wire.byteLength;
  }
  return { count, wire };
}

/**
 * Cuts `data` into consecutive pieces of `counts[i]` elements (a batch output into its requests): one walk
 * over the lengths, each piece a view. The counts must add up to data.count.
 */
export function splitBytesData(data: BytesData, counts: readonly number[]): BytesData[] {
  const bounds: number[] = [0];
  let next = 0;
  let target = counts[0] ?? 0;
  // Element `index` starts at `start - 4`; record the byte offset where each piece begins.
  const walk = walkBytesElements(data.wire, (start, _end, index) => {
    while (index === target && next < counts.length - 1) {
      bounds.push(start - 4);
      next++;
      target += counts[next]!;
    }
  });
  if (!walk.ok) throw new RangeError(`malformed BYTES data: ${walk.message}`);
  const total = counts.reduce((a, b) => a + b, 0);
  if (walk.count !== total || data.count !== total) {
    throw new RangeError(`BYTES data has ${walk.count} elements, the pieces ask for ${total}`);
  }
  // Pieces that begin at or past the last element (empty pieces at the end) begin at the end.
  while (bounds.length < counts.length) bounds.push(data.wire.byteLength);
  bounds.push(data.wire.byteLength);
  return counts.map((count, i) => ({ count, wire: data.wire.subarray(bounds[i]!, bounds[i + 1]!) }));
}
