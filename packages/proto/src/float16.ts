/**
 * FP16 (IEEE 754 binary16) and BF16 (bfloat16) conversions, shared by the client and the server. FP16 and
 * BF16 tensors travel as raw 16-bit patterns in a Uint16Array (JavaScript has no 16-bit float type in Node 20); these helpers convert those
 * bits to and from numbers, rounding to nearest, ties to even, as hardware does.
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The FP16 bit pattern nearest to `value` (round to nearest even; overflow gives ±Infinity; NaN stays NaN). */
export function float32ToFloat16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 : 0); // Inf or (quiet) NaN
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // too large: Infinity
  if (e <= 0) {
    if (e < -10) return sign; // too small even for a subnormal: signed zero
    mant |= 0x800000; // restore the implicit leading one
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    const rest = mant & ((1 << shift) - 1);
    let bits = mant >>> shift;
    if (rest > half || (rest === half && (bits & 1) === 1)) bits += 1;
    return sign | bits;
  }
  let bits = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (bits & 1) === 1)) bits += 1; // may carry into the exponent: fine
  return sign | bits;
}

/** The number an FP16 bit pattern stands for (exact: every FP16 value is a float32 value). */
export function float16BitsToFloat32(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** The BF16 bit pattern nearest to `value` (the top 16 bits of its float32, rounded to nearest even). */
export function float32ToBfloat16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  if ((x & 0x7f800000) === 0x7f800000 && (x & 0x7fffff) !== 0) return ((x >>> 16) | 0x40) & 0xffff; // NaN
  const rounded = x + 0x7fff + ((x >>> 16) & 1);
  return (rounded >>> 16) & 0xffff;
}

/** The number a BF16 bit pattern stands for (exact). */
export function bfloat16BitsToFloat32(bits: number): number {
  u32[0] = (bits & 0xffff) << 16;
  return f32[0]!;
}

/** Converts numbers to an FP16 tensor's data (one bit pattern per element). */
export function float32ArrayToFloat16Bits(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = float32ToFloat16Bits(values[i]!);
  return out;
}

/** Converts an FP16 tensor's data (bit patterns) to numbers. */
export function float16BitsToFloat32Array(bits: ArrayLike<number>): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = float16BitsToFloat32(bits[i]!);
  return out;
}

/** Converts numbers to a BF16 tensor's data (one bit pattern per element). */
export function float32ArrayToBfloat16Bits(values: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = float32ToBfloat16Bits(values[i]!);
  return out;
}

/** Converts a BF16 tensor's data (bit patterns) to numbers. */
export function bfloat16BitsToFloat32Array(bits: ArrayLike<number>): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = bfloat16BitsToFloat32(bits[i]!);
  return out;
}
