/**
 * The slot codec on its own: what goes in comes out (every numeric datatype, every kind of shape), what
 * it cannot carry or cannot fit it refuses without writing (the caller takes the object path), and a
 * region that does not hold what it claims is refused with a message that says what is wrong.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { allDatatypes, type OrtTensorType } from "@tbench/proto";
import { bytesDataFromStrings } from "../core/bytes-data.js";
import {
  decodeResult,
  decodeRun,
  encodeResult,
  encodeRun,
  type SlotRun,
  slotIo,
} from "./batch-slot-codec.js";
import { SLOT_BYTES, slotRegion } from "./batch-slots.js";
import type { ThreadTensor } from "./worker-protocol.js";

const NUMERIC = allDatatypes().filter((info) => info.ortType && info.ortType !== "string" && info.typedArray);

/** A session declaring one input and one output per numeric datatype, named after it. */
const io = slotIo({
  inputs: NUMERIC.map((info) => ({ name: `IN_${info.datatype}`, ortType: info.ortType, dims: [-1] })),
  outputs: NUMERIC.map((info) => ({ name: `OUT_${info.datatype}`, ortType: info.ortType, dims: [-1] })),
});

/** `elements` values of `info`'s type, from distinct bytes (so any misplaced byte shows). */
function tensorOf(info: (typeof NUMERIC)[number], name: string, dims: number[]): ThreadTensor {
  const elements = dims.reduce((a, b) => a * b, 1);
  const bytes = new Uint8Array(elements * info.byteSize!);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 37 + info.onnxType) & 0xff;
  const Ctor = info.typedArray as unknown as new (b: ArrayBuffer) => ArrayBufferView;
  return { name, ortType: info.ortType!, dims, data: new Ctor(bytes.buffer) };
}

const bytesOf = (data: unknown) => {
  const view = data as ArrayBufferView;
  return [...new Uint8Array(view.buffer, view.byteOffset, view.byteLength)];
};

/** A fresh region the size of a slot (a SharedArrayBuffer, as the instance's are). */
const freshSlot = () => slotRegion(new SharedArrayBuffer(SLOT_BYTES), 0);

function assertSameTensors(actual: readonly ThreadTensor[], expected: readonly ThreadTensor[]) {
  assert.equal(actual.length, expected.length);
  expected.forEach((want, i) => {
    const got = actual[i]!;
    assert.equal(got.name, want.name);
    assert.equal(got.ortType, want.ortType);
    assert.deepEqual(got.dims, want.dims);
    assert.equal(got.data.constructor, want.data.constructor, `${want.name}: TypedArray class`);
    assert.deepEqual(bytesOf(got.data), bytesOf(want.data), `${want.name}: bytes`);
    // Owned by the reader: never a view of the shared slot, which the next batch overwrites.
    assert.ok((got.data as ArrayBufferView).buffer instanceof ArrayBuffer, `${want.name}: not a shared view`);
  });
}

const SHAPES: number[][] = [[2, 3], [], [0], [3, 0, 2], [1, 1, 1, 5]];

describe("batch slot codec: round trips", () => {
  test("a run of every numeric datatype and shape comes back as it went, with its outputs and queue time", () => {
    for (const dims of SHAPES) {
      const inputs = NUMERIC.map((info) => tensorOf(info, `IN_${info.datatype}`, dims));
      const outputNames = [...io.outputNames].reverse();
      const run: SlotRun = { id: 4_294_967_301, inputs, outputNames, queuedAtMs: 1_733_420_000_123.25 };
      const region = freshSlot();
      assert.equal(encodeRun(region, run, io), true, `dims [${dims}]`);
      const decoded = decodeRun(region, io);
      assert.equal(decoded.id, run.id);
      assert.equal(decoded.queuedAtMs, run.queuedAtMs);
      assert.deepEqual(decoded.outputNames, outputNames);
      assert.deepEqual(
        decoded.outputIndices,
        outputNames.map((name) => io.outputIndex.get(name)),
      );
      assertSameTensors(decoded.inputs, inputs);
    }
  });

  test("a run without a queue time reads back without one", () => {
    const region = freshSlot();
    const inputs = [tensorOf(NUMERIC[0]!, `IN_${NUMERIC[0]!.datatype}`, [4])];
    assert.equal(encodeRun(region, { id: 1, inputs, outputNames: [] }, io), true);
    const decoded = decodeRun(region, io);
    assert.equal("queuedAtMs" in decoded, false);
    assert.deepEqual(decoded.outputNames, []);
  });

  test("a result of every numeric datatype and shape comes back with its durations", () => {
    for (const dims of SHAPES) {
      const outputs = NUMERIC.map((info) => tensorOf(info, `OUT_${info.datatype}`, dims));
      const indices = outputs.map((o) => io.outputIndex.get(o.name)!);
      const region = freshSlot();
      const times = { inputNs: 1200, inferNs: 27_000, outputNs: 900, waitNs: 0 };
      const asOnnx = outputs.map((o) => ({ type: o.ortType, dims: o.dims, data: o.data }));
      assert.equal(encodeResult(region, 77, asOnnx, indices, times), true, `dims [${dims}]`);
      const { id, result } = decodeResult(region, io);
      assert.equal(id, 77);
      assert.deepEqual(
        {
          inputNs: result.inputNs,
          inferNs: result.inferNs,
          outputNs: result.outputNs,
          waitNs: result.waitNs,
        },
        times,
      );
      assertSameTensors(result.outputs, outputs);
    }
  });

  test("a sequence batch's rows (slot, START, END, padding) and released slots come back as they went", () => {
    const region = freshSlot();
    const inputs = [tensorOf(NUMERIC[0]!, `IN_${NUMERIC[0]!.datatype}`, [3])];
    const sequence = {
      rows: [
        { slot: 0, start: true, end: false },
        null,
        { slot: 0x1fffffff, start: true, end: true },
        { slot: 7, start: false, end: true },
      ],
      released: [3, 5, 6],
    };
    assert.equal(encodeRun(region, { id: 2, inputs, outputNames: [], sequence }, io), true);
    const decoded = decodeRun(region, io);
    assert.deepEqual(decoded.sequence, sequence);
    assertSameTensors(decoded.inputs, inputs);
    const plain = freshSlot();
    assert.equal(encodeRun(plain, { id: 3, inputs, outputNames: [] }, io), true);
    assert.equal("sequence" in decodeRun(plain, io), false, "not a sequence batch");
  });

  test("a result without a wait reads back without waitNs", () => {
    const region = freshSlot();
    assert.equal(encodeResult(region, 3, [], [], { inputNs: 1, inferNs: 2, outputNs: 3 }), true);
    const { result } = decodeResult(region, io);
    assert.equal("waitNs" in result, false);
    assert.deepEqual(result.outputs, []);
  });
});

describe("batch slot codec: what takes the object path", () => {
  const uint8 = NUMERIC.find((info) => info.datatype === "UINT8")!;
  const IN = "IN_UINT8";
  const OUT = "OUT_UINT8";
  // Run head 32, one output index padded to 8, a rank-1 tensor head 16: the data may take the rest.
  const RUN_ROOM = SLOT_BYTES - 32 - 8 - 16;
  // Result head 56, a rank-1 tensor head 16.
  const RESULT_ROOM = SLOT_BYTES - 56 - 16;

  const runOf = (bytes: number): SlotRun => ({
    id: 9,
    inputs: [tensorOf(uint8, IN, [bytes])],
    outputNames: [OUT],
  });

  /** Asserts encode refuses and leaves the region as it was (all 0xee). */
  function assertRefused(encode: (region: Uint8Array) => boolean, what: string) {
    const region = freshSlot();
    region.fill(0xee);
    assert.equal(encode(region), false, what);
    assert.ok(
      region.every((b) => b === 0xee),
      `${what}: nothing written`,
    );
  }

  test("a run exactly the slot's size fits; one byte more does not", () => {
    const region = freshSlot();
    assert.equal(encodeRun(region, runOf(RUN_ROOM), io), true);
    assert.equal((decodeRun(region, io).inputs[0]!.data as Uint8Array).byteLength, RUN_ROOM);
    assertRefused((r) => encodeRun(r, runOf(RUN_ROOM + 1), io), "one byte over");
  });

  test("a result exactly the slot's size fits; one byte more does not", () => {
    const result = (bytes: number) => [{ type: "uint8", dims: [bytes], data: new Uint8Array(bytes) }];
    const times = { inputNs: 0, inferNs: 0, outputNs: 0 };
    const index = [io.outputIndex.get(OUT)!];
    const region = freshSlot();
    assert.equal(encodeResult(region, 1, result(RESULT_ROOM), index, times), true);
    assert.equal((decodeResult(region, io).result.outputs[0]!.data as Uint8Array).byteLength, RESULT_ROOM);
    assertRefused((r) => encodeResult(r, 1, result(RESULT_ROOM + 1), index, times), "one byte over");
  });

  test("the input that the object path would transfer (64 KiB) never fits", () => {
    assertRefused((r) => encodeRun(r, runOf(64 * 1024), io), "64 KiB input");
  });

  test("a sequence batch with its states' setup, or a slot past what a row can name, is refused", () => {
    const rows = [{ slot: 0, start: true, end: false }];
    const setup = { slots: 1, batching: true, states: [] };
    assertRefused((region) => encodeRun(region, { ...runOf(8), sequence: { rows, setup } }, io), "setup");
    const far = [{ slot: 0x20000000, start: false, end: false }];
    assertRefused((region) => encodeRun(region, { ...runOf(8), sequence: { rows: far } }, io), "slot");
    assertRefused(
      (region) => encodeRun(region, { ...runOf(8), sequence: { rows, released: [-1] } }, io),
      "released",
    );
  });

  test("BYTES, other TypedArray classes, unknown names and inconsistent shapes are refused", () => {
    const strings = bytesDataFromStrings(["a", "bc"]);
    const cases: [string, ThreadTensor][] = [
      ["BYTES", { name: IN, ortType: "string", dims: [2], data: strings }],
      ["Int8Array for uint8", { name: IN, ortType: "uint8", dims: [4], data: new Int8Array(4) }],
      ["a DataView", { name: IN, ortType: "uint8", dims: [4], data: new DataView(new ArrayBuffer(4)) }],
      ["an undeclared input", { name: "NOPE", ortType: "uint8", dims: [4], data: new Uint8Array(4) }],
      [
        "dims that disagree with the data",
        { name: IN, ortType: "uint8", dims: [5], data: new Uint8Array(4) },
      ],
      ["a negative dim", { name: IN, ortType: "uint8", dims: [-1], data: new Uint8Array(0) }],
      ["a fractional dim", { name: IN, ortType: "uint8", dims: [1.5], data: new Uint8Array(0) }],
      [
        "an unknown type",
        { name: IN, ortType: "bfloat16" as OrtTensorType, dims: [1], data: new Uint16Array(1) },
      ],
    ];
    for (const [what, input] of cases) {
      assertRefused((r) => encodeRun(r, { id: 1, inputs: [input], outputNames: [OUT] }, io), what);
    }
    assertRefused(
      (r) => encodeRun(r, { id: 1, inputs: [], outputNames: ["NOT_AN_OUTPUT"] }, io),
      "an undeclared output",
    );
    const times = { inputNs: 0, inferNs: 0, outputNs: 0 };
    assertRefused(
      (r) => encodeResult(r, 1, [{ type: "string", dims: [2], data: ["a", "bc"] }], [0], times),
      "a string output",
    );
  });
});

describe("batch slot codec: regions that do not hold what they claim", () => {
  const int32 = NUMERIC.find((info) => info.datatype === "INT32")!;
  const encoded = () => {
    const region = freshSlot();
    const run: SlotRun = { id: 5, inputs: [tensorOf(int32, "IN_INT32", [2, 4])], outputNames: ["OUT_INT32"] };
    assert.equal(encodeRun(region, run, io), true);
    return region;
  };
  const view = (region: Uint8Array) => new DataView(region.buffer, region.byteOffset, region.byteLength);
  const lengthOf = (region: Uint8Array) => view(region).getUint32(4, true);

  /** The encoded run with one field of its layout (see batch-slot-codec.ts) overwritten. */
  const edited = (edit: (fields: DataView, region: Uint8Array) => void) => (region: Uint8Array) => {
    edit(view(region), region);
    return region;
  };
  // The encoded run: head 0-31, the output index at 32, the tensor head at 40 (index 40, type 42,
  // rank 43, data bytes 44, dims 48 and 56), the data 64-95.
  const cases: [string, (region: Uint8Array) => Uint8Array, RegExp][] = [
    ["a region shorter than a head", (r) => r.subarray(0, 20), /20 bytes, less than a run head/],
    ["a result where a run belongs", edited((v) => v.setUint32(0, 0x31534552, true)), /tag 0x31534552/],
    ["a length past the region", (r) => r.subarray(0, lengthOf(r) - 8), /run of 96 bytes in a region of 88/],
    [
      "data cut short",
      edited((v, r) => v.setUint32(4, lengthOf(r) - 8, true)),
      /tensor 0 data runs past the end \(88 bytes\)/,
    ],
    ["an input index out of range", edited((v) => v.setUint16(40, 999, true)), /tensor 0 names index 999/],
    ["an unknown data type", edited((v) => v.setUint8(42, 200)), /tensor 0 has unknown data type 200/],
    [
      "dims that disagree with the data",
      edited((v) => v.setFloat64(48, 3, true)),
      /tensor 0 has 32 data bytes for dims \[3, 4\] of int32/,
    ],
    ["a negative dim", edited((v) => v.setFloat64(48, -2, true)), /tensor 0 has dim -2/],
    ["an output index out of range", edited((v) => v.setUint16(32, 999, true)), /output 0 names index 999/],
    [
      "a rank whose dims run past the end",
      edited((v) => v.setUint8(43, 255)),
      /tensor 0 dims run past the end/,
    ],
  ];
  for (const [what, spoil, message] of cases) {
    test(`${what}: refused, saying so`, () => {
      assert.throws(
        () => decodeRun(spoil(encoded()), io),
        (error: Error) => {
          assert.match(error.message, /^malformed batch slot: /);
          assert.match(error.message, message);
          return true;
        },
      );
    });
  }

  test("a result region read as a run, and a run region read as a result, are refused", () => {
    assert.throws(
      () => decodeResult(encoded(), io),
      /malformed batch slot: tag 0x314e5552 where a result belongs/,
    );
    const region = freshSlot();
    assert.equal(encodeResult(region, 1, [], [], { inputNs: 0, inferNs: 0, outputNs: 0 }), true);
    assert.throws(() => decodeRun(region, io), /malformed batch slot: tag 0x31534552 where a run belongs/);
  });

  test("an empty region is refused", () => {
    assert.throws(
      () => decodeResult(new Uint8Array(0), io),
      /malformed batch slot: 0 bytes, less than a result head/,
    );
  });
});
