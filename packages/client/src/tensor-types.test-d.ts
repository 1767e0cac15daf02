// Type tests, checked by `tsc -p tsconfig.test.json` (never run): an input's data must be the TypedArray
// (or plain array) of its datatype. Each `@ts-expect-error` line fails the type check if it compiles.
import type { InferInput, InferRequest, SequenceRequest } from "./index.js";

export const ok: InferInput[] = [
  { name: "a", datatype: "FP32", shape: [2], data: new Float32Array(2) },
  { name: "a", datatype: "FP32", shape: [2], data: [1, 2] },
  { name: "b", datatype: "INT64", shape: [1], data: new BigInt64Array(1) },
  { name: "b", datatype: "INT64", shape: [1], data: [1n] },
  { name: "c", datatype: "BOOL", shape: [2], data: [true, false] },
  { name: "c", datatype: "BOOL", shape: [2], data: new Uint8Array([1, 0]) },
  { name: "d", datatype: "BYTES", shape: [1], data: ["text"] },
  { name: "d", datatype: "BYTES", shape: [1], data: [new Uint8Array(3)] },
  { name: "e", datatype: "FP16", shape: [1], data: new Uint16Array(1) },
  { name: "f", datatype: "BF16", shape: [1], data: new Uint16Array(1) },
  { name: "g", datatype: "UINT8", shape: [1], data: new Uint8Array(1) },
  { name: "h", datatype: "INT32", shape: [1], data: new Int32Array(1) },
  { name: "i", datatype: "FP64", shape: [1], data: new Float64Array(1) },
  { name: "j", datatype: "UINT64", shape: [1], data: new BigUint64Array(1) },
];

export const wrong: InferInput[] = [
  // @ts-expect-error FP32 data cannot be a Float64Array
  { name: "a", datatype: "FP32", shape: [2], data: new Float64Array(2) },
  // @ts-expect-error FP32 data cannot be an Int32Array
  { name: "a", datatype: "FP32", shape: [2], data: new Int32Array(2) },
  // @ts-expect-error INT64 data cannot be a Float32Array
  { name: "b", datatype: "INT64", shape: [1], data: new Float32Array(1) },
  // @ts-expect-error INT64 data cannot be plain numbers (they lose precision above 2^53)
  { name: "b", datatype: "INT64", shape: [1], data: [1] },
  // @ts-expect-error INT32 data cannot be a BigInt64Array
  { name: "h", datatype: "INT32", shape: [1], data: new BigInt64Array(1) },
  // @ts-expect-error FP16 data is a Uint16Array of bit patterns, not a Float32Array
  { name: "e", datatype: "FP16", shape: [1], data: new Float32Array(1) },
  // @ts-expect-error FP16 data cannot be plain numbers
  { name: "e", datatype: "FP16", shape: [1], data: [1.5] },
  // @ts-expect-error BOOL data cannot be numbers
  { name: "c", datatype: "BOOL", shape: [1], data: [1] },
  // @ts-expect-error BYTES data cannot be numbers
  { name: "d", datatype: "BYTES", shape: [1], data: [1] },
  // @ts-expect-error UINT8 data cannot be an Int8Array
  { name: "g", datatype: "UINT8", shape: [1], data: new Int8Array(1) },
  // @ts-expect-error unknown datatype
  { name: "x", datatype: "FLOAT", shape: [1], data: [1] },
];

export const request: InferRequest = {
  inputs: ok,
  outputs: [{ name: "OUT", binary: false, classification: 3 }],
  // @ts-expect-error priority is a number
  priority: "high",
};

export const sequenced: InferRequest[] = [
  { inputs: ok, sequenceId: 2n ** 64n - 1n, sequenceStart: true, sequenceEnd: false },
  { inputs: ok, sequenceId: "session-7" },
  // @ts-expect-error a sequence id is a number, a bigint or a string
  { inputs: ok, sequenceId: true },
  // @ts-expect-error the flags are booleans
  { inputs: ok, sequenceId: 1, sequenceEnd: 1 },
];

export const sequenceStep: SequenceRequest = {
  inputs: ok,
  // @ts-expect-error a sequence's requests leave the sequence fields to the sequence
  sequenceStart: true,
};
