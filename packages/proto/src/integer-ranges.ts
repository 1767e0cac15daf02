/**
 * What each integer datatype can hold. A TypedArray stores an out-of-range value wrapped (Int8Array [300]
 * holds 44, BigInt64Array [2n ** 63n] holds -2n ** 63n) and a fraction truncated; the client (what it sends
 * and what it reads from JSON) and the server (JSON requests) refuse such values instead.
 */
import type { Datatype } from "./datatypes.js";

/** Inclusive ranges of the integer types narrower than 64 bits. */
export const NARROW_INTEGER_RANGES: Partial<Record<Datatype, readonly [number, number]>> = {
  INT8: [-128, 127],
  INT16: [-32768, 32767],
  INT32: [-2147483648, 2147483647],
  UINT8: [0, 255],
  UINT16: [0, 65535],
  UINT32: [0, 4294967295],
};

/** Inclusive ranges of INT64 and UINT64. */
export const WIDE_INTEGER_RANGES = {
  INT64: [-(2n ** 63n), 2n ** 63n - 1n],
  UINT64: [0n, 2n ** 64n - 1n],
} as const satisfies Partial<Record<Datatype, readonly [bigint, bigint]>>;
