/**
 * The states an instance's thread keeps for a sequence model, driven as the thread drives them (begin
 * before the run, keep after it): rows concatenated into the state input and cut back into copies per
 * slot, START and padding rows reading the initial value, END, released slots and close dropping states,
 * and what the store holds bounded by slots x state size however many sequences pass through.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bytesDataFromStrings } from "../core/bytes-data.js";
import { createSequenceStateStore, type StateOutput } from "./sequence-state-store.js";
import type { SequenceRow, SequenceRun, SequenceStateSetup } from "./worker-protocol.js";

const row = (slot: number, start = false, end = false): SequenceRow => ({ slot, start, end });

function setupOf(
  dims: number[],
  extra: Partial<SequenceStateSetup["states"][number]> = {},
): SequenceStateSetup {
  return {
    slots: 2,
    batching: true,
    states: [{ inputName: "S", outputName: "S_OUT", datatype: "FP32", dims, initialDims: dims, ...extra }],
  };
}

/** Begins `run`, gives back `next(input)` as the state output, and returns the input it was fed. */
function step(
  store: ReturnType<typeof createSequenceStateStore>,
  run: SequenceRun,
  next: (input: Float32Array, dims: readonly number[]) => StateOutput,
): { input: number[]; dims: readonly number[] } {
  const { feeds, outputNames } = store.begin(run);
  assert.deepEqual(outputNames, ["S_OUT"]);
  const feed = feeds[0]!;
  const input = feed.data as Float32Array;
  const copy = [...input];
  store.keep(run, (name) => (name === "S_OUT" ? next(input, feed.dims) : undefined));
  return { input: copy, dims: feed.dims };
}

const plusOne = (input: Float32Array, dims: readonly number[]): StateOutput => ({
  dims,
  data: input.map((v) => v + 1),
});

describe("the state store of an instance's thread", () => {
  it("concatenates the rows' states into one input and cuts the output back into copies per slot", () => {
    const store = createSequenceStateStore();
    const first = step(store, { rows: [row(0, true), row(1, true)], setup: setupOf([2]) }, (_, dims) => ({
      dims,
      data: new Float32Array([1, 2, 3, 4]),
    }));
    assert.deepEqual(first, { input: [0, 0, 0, 0], dims: [2, 2] });
    let output: Float32Array | undefined;
    const second = step(store, { rows: [row(0), row(1)] }, (input, dims) => {
      output = input.map((v) => v * 10);
      return { dims, data: output };
    });
    assert.deepEqual(second.input, [1, 2, 3, 4]);
    output![0] = 99;
    const third = step(store, { rows: [row(1), row(0)] }, plusOne);
    assert.deepEqual(third.input, [30, 40, 10, 20], "each slot's own copy, in the batch's row order");
    assert.deepEqual(store.held(), { slots: 2, bytes: 2 * 2 * 4 });
  });

  it("START and padding rows read the initial value (from a file); START drops what the slot held", () => {
    const store = createSequenceStateStore();
    const setup = setupOf([2], { initial: new Float32Array([100, 200]) });
    step(store, { rows: [row(0, true)], setup }, plusOne);
    assert.deepEqual(step(store, { rows: [row(0)] }, plusOne).input, [101, 201]);
    const restarted = step(store, { rows: [null, row(1, true)] }, plusOne);
    assert.deepEqual(restarted.input, [100, 200, 100, 200], "padding row, then slot 1's START");
    assert.deepEqual(step(store, { rows: [row(0, true), row(1)] }, plusOne).input, [100, 200, 101, 201]);
  });

  it("END drops the slot's state with its batch; a released slot's goes with the next batch", () => {
    const store = createSequenceStateStore();
    step(store, { rows: [row(0, true), row(1, true)], setup: setupOf([4]) }, plusOne);
    assert.equal(store.held().slots, 2);
    step(store, { rows: [row(0, false, true), row(1)] }, plusOne);
    assert.deepEqual(store.held(), { slots: 1, bytes: 16 });
    step(store, { rows: [null, row(1)], released: [1] }, plusOne);
    assert.deepEqual(
      store.held(),
      { slots: 1, bytes: 16 },
      "released first, then the row (whose slot holds nothing) read the initial value and kept its output",
    );
    step(store, { rows: [row(0, true, true)], released: [1] }, plusOne);
    assert.deepEqual(store.held(), { slots: 0, bytes: 0 });
    step(store, { rows: [row(1, true)] }, plusOne);
    store.clear();
    assert.deepEqual(store.held(), { slots: 0, bytes: 0 }, "close drops everything");
  });

  it("holds at most slots x state size, however many sequences pass through", () => {
    const store = createSequenceStateStore();
    const elements = 1024;
    step(store, { rows: [row(0, true)], setup: setupOf([elements]) }, plusOne);
    for (let sequence = 0; sequence < 200; sequence++) {
      const slot = sequence % 2;
      step(store, { rows: [row(slot, true)] }, plusOne);
      step(store, { rows: [row(slot)] }, plusOne);
      assert.ok(store.held().bytes <= 2 * elements * 4);
    }
    assert.equal(store.held().bytes, 2 * elements * 4);
  });

  it("a one-row batch feeds the slot's own buffer, no copy", () => {
    const store = createSequenceStateStore();
    let kept: Float32Array | undefined;
    step(store, { rows: [row(1, true)], setup: setupOf([3]) }, (input, dims) => {
      kept = input.map((v) => v + 5);
      return { dims, data: kept };
    });
    const { feeds } = store.begin({ rows: [row(1)] });
    assert.equal(feeds[0]!.data, kept);
  });

  it("variable dims: each slot keeps the shape its output had; rows that disagree are refused", () => {
    const store = createSequenceStateStore();
    const setup: SequenceStateSetup = {
      slots: 2,
      batching: true,
      states: [{ inputName: "S", outputName: "S_OUT", datatype: "FP32", dims: [-1], initialDims: [1] }],
    };
    const grow = (input: Float32Array, dims: readonly number[]): StateOutput => ({
      dims: [dims[0]!, dims[1]! + 1],
      data: new Float32Array(dims[0]! * (dims[1]! + 1)).fill(input[0]! + 1),
    });
    store.begin({ rows: [row(0, true)], setup });
    assert.deepEqual(
      store.keep({ rows: [row(0, true)] }, (name) =>
        name === "S_OUT" ? { dims: [1, 2], data: new Float32Array([7, 7]) } : undefined,
      ),
      [[2]],
      "the state output's dims go back to the main thread",
    );
    assert.deepEqual(step(store, { rows: [row(0)] }, grow), { input: [7, 7], dims: [1, 2] });
    step(store, { rows: [null, row(1, true)] }, grow);
    assert.throws(() => store.begin({ rows: [row(0), row(1)] }), /disagree on the shape of state 'S'/);
    assert.deepEqual(
      step(store, { rows: [row(0), null] }, grow).dims,
      [2, 3],
      "padding takes the batch's shape",
    );
  });

  it("BYTES states are kept as strings, the initial value from the file's elements", () => {
    const store = createSequenceStateStore();
    const setup: SequenceStateSetup = {
      slots: 1,
      batching: false,
      states: [
        {
          inputName: "T",
          outputName: "T_OUT",
          datatype: "BYTES",
          dims: [2],
          initialDims: [2],
          initial: bytesDataFromStrings(["a", "b"]),
        },
      ],
    };
    const run = { rows: [row(0, true)], setup };
    const first = store.begin(run);
    assert.deepEqual(first.feeds[0], { name: "T", ortType: "string", dims: [2], data: ["a", "b"] });
    store.keep(run, () => ({ dims: [2], data: ["a!", "b!"] }));
    assert.deepEqual(store.begin({ rows: [row(0)] }).feeds[0]!.data, ["a!", "b!"]);
  });

  it("refuses a batch before the setup, a slot out of range and a state output of the wrong size", () => {
    const store = createSequenceStateStore();
    assert.throws(() => store.begin({ rows: [row(0, true)] }), /before the states' setup/);
    assert.throws(
      () => store.begin({ rows: [row(2, true)], setup: setupOf([2]) }),
      /sequence slot 2 is out of range: the instance has 2/,
    );
    const run = { rows: [row(0, true)] };
    store.begin(run);
    assert.throws(
      () => store.keep(run, () => ({ dims: [1, 3], data: new Float32Array(3) })),
      /state output 'S_OUT' has shape \[1,3\]/,
    );
    assert.throws(() => store.keep(run, () => undefined), /no state output 'S_OUT'/);
  });
});
