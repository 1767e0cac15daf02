import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  bfloat16BitsToFloat32,
  float16BitsToFloat32,
  float16BitsToFloat32Array,
  float32ArrayToBfloat16Bits,
  float32ArrayToFloat16Bits,
  float32ToBfloat16Bits,
  float32ToFloat16Bits,
} from "./float16.js";

describe("FP16", () => {
  const exact: [number, number][] = [
    [0, 0x0000],
    [-0, 0x8000],
    [1, 0x3c00],
    [-2, 0xc000],
    [0.5, 0x3800],
    [65504, 0x7bff], // largest finite
    [2 ** -14, 0x0400], // smallest normal
    [2 ** -24, 0x0001], // smallest subnormal
    [Number.POSITIVE_INFINITY, 0x7c00],
    [Number.NEGATIVE_INFINITY, 0xfc00],
  ];
  for (const [value, bits] of exact) {
    test(`${Object.is(value, -0) ? "-0" : value} <-> 0x${bits.toString(16)}`, () => {
      assert.equal(float32ToFloat16Bits(value), bits);
      assert.ok(Object.is(float16BitsToFloat32(bits), value));
    });
  }
  test("rounds to nearest, ties to even", () => {
    assert.equal(float32ToFloat16Bits(0.1), 0x2e66);
    assert.equal(float32ToFloat16Bits(1 + 2 ** -11), 0x3c00); // tie -> even (down)
    assert.equal(float32ToFloat16Bits(1 + 3 * 2 ** -11), 0x3c02); // tie -> even (up)
    assert.equal(float32ToFloat16Bits(65520), 0x7c00); // rounds up past the largest finite: Infinity
    assert.equal(float32ToFloat16Bits(2 ** -25), 0x0000); // tie between 0 and the smallest subnormal -> 0
    assert.equal(float32ToFloat16Bits(1.5 * 2 ** -24), 0x0002); // tie -> even
  });
  test("NaN stays NaN", () => {
    assert.equal(float32ToFloat16Bits(Number.NaN) & 0x7c00, 0x7c00);
    assert.notEqual(float32ToFloat16Bits(Number.NaN) & 0x3ff, 0);
    assert.ok(Number.isNaN(float16BitsToFloat32(0x7e00)));
  });
  test("arrays round-trip values FP16 can hold", () => {
    const values = [0, 1, -1.5, 0.25, 1024, -65504];
    assert.deepEqual([...float16BitsToFloat32Array(float32ArrayToFloat16Bits(values))], values);
  });
});

describe("BF16", () => {
  test("exact values", () => {
    assert.equal(float32ToBfloat16Bits(1), 0x3f80);
    assert.equal(float32ToBfloat16Bits(-2), 0xc000);
    assert.equal(float32ToBfloat16Bits(3.140625), 0x4049);
    assert.equal(bfloat16BitsToFloat32(0x4049), 3.140625);
    assert.equal(float32ToBfloat16Bits(Number.POSITIVE_INFINITY), 0x7f80);
  });
  test("rounds to nearest even, keeps NaN", () => {
    assert.equal(float32ToBfloat16Bits(Math.PI), 0x4049);
    assert.equal(float32ToBfloat16Bits(1 + 2 ** -8), 0x3f80); // tie -> even (down)
    assert.equal(float32ToBfloat16Bits(1 + 3 * 2 ** -8), 0x3f82); // tie -> even (up)
    assert.ok(Number.isNaN(bfloat16BitsToFloat32(float32ToBfloat16Bits(Number.NaN))));
    assert.deepEqual([...float32ArrayToBfloat16Bits([1, -2])], [0x3f80, 0xc000]);
  });
});
