import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bytesDataToStrings } from "../core/bytes-data.js";
import type { BytesData } from "../core/types.js";
import { controlTensors } from "./sequence-tensors.js";

const live = (id: bigint | string, start = false, end = false) => ({ ready: true, start, end, id });
const padding = { ready: false, start: false, end: false, id: 0n };

describe("control tensors: one value per row, a padding row not ready", () => {
  it("START, END and READY take the configured false/true values of their form", () => {
    const [start, end, ready] = controlTensors(
      [
        { kind: "START", name: "S", datatype: "INT32", values: [0, 1] },
        { kind: "END", name: "E", datatype: "FP32", values: [-1, 2.5] },
        { kind: "READY", name: "R", datatype: "BOOL", values: [false, true] },
      ],
      [live(1n, true), padding, live(2n, false, true)],
      true,
    );
    assert.deepEqual(start!.dims, [3, 1]);
    assert.deepEqual([...(start!.data as Int32Array)], [1, 0, 0]);
    assert.deepEqual([...(end!.data as Float32Array)], [-1, -1, 2.5]);
    assert.deepEqual([...(ready!.data as Uint8Array)], [1, 0, 1]);
  });

  it("CORRID: 64-bit types exact, 32-bit types the id's low 32 bits, STRING the string id; padding 0 or empty", () => {
    const rows = [live(2n ** 64n - 1n), padding, live(5n)];
    const [u64, i64, u32, i32] = controlTensors(
      [
        { kind: "CORRID", name: "A", datatype: "UINT64" },
        { kind: "CORRID", name: "B", datatype: "INT64" },
        { kind: "CORRID", name: "C", datatype: "UINT32" },
        { kind: "CORRID", name: "D", datatype: "INT32" },
      ],
      rows,
      true,
    );
    assert.deepEqual([...(u64!.data as BigUint64Array)], [2n ** 64n - 1n, 0n, 5n]);
    assert.deepEqual([...(i64!.data as BigInt64Array)], [-1n, 0n, 5n]);
    assert.deepEqual([...(u32!.data as Uint32Array)], [4294967295, 0, 5]);
    assert.deepEqual([...(i32!.data as Int32Array)], [-1, 0, 5]);
    const [text] = controlTensors(
      [{ kind: "CORRID", name: "T", datatype: "BYTES" }],
      [live("seq-α"), padding],
      false,
    );
    assert.deepEqual(text!.dims, [1]);
    assert.deepEqual(bytesDataToStrings(text!.data as BytesData), ["seq-α", ""]);
  });
});
