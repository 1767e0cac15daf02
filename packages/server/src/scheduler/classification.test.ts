import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { float32ArrayToFloat16Bits } from "@tbench/proto";
import { bytesDataToStrings } from "../core/bytes-data.js";
import type { BytesData, Tensor } from "../core/types.js";
import { classify } from "./classification.js";

const texts = (tensor: Tensor) => bytesDataToStrings(tensor.data as BytesData);

describe("classification extension", () => {
  it("floats print with six decimals, highest first, ties by index", () => {
    const scores: Tensor = {
      name: "OUT",
      datatype: "FP32",
      shape: [1, 4],
      data: new Float32Array([0.5, 2, 0.5, 1]),
    };
    const result = classify(scores, 3, true, undefined);
    assert.deepEqual(result.shape, [1, 3]);
    assert.deepEqual(texts(result), ["2.000000:1", "1.000000:3", "0.500000:0"]);
  });

  it("integers print as integers, as Triton's std::to_string does; INT64 stays exact beyond 2^53", () => {
    const ints: Tensor = { name: "OUT", datatype: "INT32", shape: [3], data: new Int32Array([15, -2, 7]) };
    assert.deepEqual(texts(classify(ints, 2, false, undefined)), ["15:0", "7:2"]);
    const big: Tensor = {
      name: "OUT",
      datatype: "INT64",
      shape: [2],
      data: new BigInt64Array([2n ** 60n + 1n, 3n]),
    };
    assert.deepEqual(texts(classify(big, 1, false, undefined)), ["1152921504606846977:0"]);
  });

  it("FP16 elements are ranked and printed by value, not by bit pattern", () => {
    // -1 has a larger bit pattern than 0.25 (sign bit), so ranking bits would put it first.
    const bits = float32ArrayToFloat16Bits([-1, 0.25, 0.5]);
    const half: Tensor = { name: "OUT", datatype: "FP16", shape: [3], data: bits };
    assert.deepEqual(texts(classify(half, 3, false, undefined)), ["0.500000:2", "0.250000:1", "-1.000000:0"]);
  });

  it("labels follow the index; each batch row is ranked on its own", () => {
    const scores: Tensor = {
      name: "OUT",
      datatype: "FP32",
      shape: [2, 2],
      data: new Float32Array([1, 2, 4, 3]),
    };
    assert.deepEqual(texts(classify(scores, 1, true, ["cat", "dog"])), ["2.000000:1:dog", "4.000000:0:cat"]);
  });
});
