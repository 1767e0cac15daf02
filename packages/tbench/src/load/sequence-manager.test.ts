import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createSeededRandom } from "./schedule.js";
import {
  createSequenceManager,
  DEFAULT_SEQUENCE_OPTIONS,
  drawSequenceLength,
  type SequenceManagerOptions,
  type SequenceStep,
} from "./sequence-manager.js";

/** A random source that returns the given values in turn (then 0.5). */
function values(...list: number[]): () => number {
  return () => list.shift() ?? 0.5;
}

const base: SequenceManagerOptions = {
  length: 3,
  lengthSpecified: false,
  lengthVariationPercent: 0,
  idStart: 1,
  idRange: DEFAULT_SEQUENCE_OPTIONS.idRange,
  streamSteps: undefined,
  random: values(),
};

/** The steps of `slot` until its sequence ends (at most 100). */
function wholeSequence(next: () => SequenceStep): SequenceStep[] {
  const steps = [next()];
  while (!steps[steps.length - 1]!.end && steps.length < 100) steps.push(next());
  return steps;
}

describe("drawSequenceLength: perf_analyzer's formula", () => {
  it("base + int((2u - 1) * variation% * base), truncated toward 0; <= 0 becomes 1", () => {
    assert.equal(drawSequenceLength(20, 20, 0), 16);
    assert.equal(drawSequenceLength(20, 20, 0.5), 20);
    assert.equal(drawSequenceLength(20, 20, 1), 24);
    assert.equal(drawSequenceLength(20, 20, 0.99), 23, "3.92 truncates to 3");
    assert.equal(drawSequenceLength(20, 20, 0.01), 17, "-3.92 truncates to -3");
    assert.equal(drawSequenceLength(20, 0, 0.9), 20, "no variation");
    assert.equal(drawSequenceLength(1, 200, 0), 1, "1 - 2 <= 0 becomes 1");
    assert.equal(drawSequenceLength(5, 100, 0), 1, "5 - 5 = 0 becomes 1");
  });

  it("the defaults (20 +- 20%) stay within 16..24 with a seeded random, and vary", () => {
    const random = createSeededRandom(7);
    const seen = new Set<number>();
    for (let i = 0; i < 10_000; i++) {
      const length = drawSequenceLength(20, 20, random());
      assert.ok(length >= 16 && length <= 24, `length ${length}`);
      seen.add(length);
    }
    // 16 and 24 need u exactly 0 or 1; every length in between comes up.
    for (const length of [17, 18, 19, 20, 21, 22, 23]) assert.ok(seen.has(length), `length ${length} drawn`);
  });
});

describe("createSequenceManager", () => {
  it("START on the first request, END on the last, then a new sequence with the next id", () => {
    const manager = createSequenceManager(base);
    manager.ensure(1);
    const first = wholeSequence(() => manager.next(0));
    assert.deepEqual(
      first.map((s) => [s.id, s.start, s.end]),
      [
        [1, true, false],
        [1, false, false],
        [1, false, true],
      ],
    );
    assert.equal(manager.isOpen(0), false);
    const second = manager.next(0);
    assert.deepEqual([second.id, second.start, second.end], [2, true, false]);
    assert.equal(manager.isOpen(0), true);
  });

  it("a length-1 sequence has START and END on its one request", () => {
    const manager = createSequenceManager({ ...base, length: 1 });
    manager.ensure(1);
    const steps = [manager.next(0), manager.next(0)];
    assert.deepEqual(
      steps.map((s) => [s.id, s.start, s.end]),
      [
        [1, true, true],
        [2, true, true],
      ],
    );
  });

  it("lengths are drawn per sequence within +- the variation", () => {
    const manager = createSequenceManager({
      ...base,
      length: 20,
      lengthVariationPercent: 20,
      random: createSeededRandom(3),
    });
    manager.ensure(1);
    const lengths = Array.from({ length: 200 }, () => wholeSequence(() => manager.next(0)).length);
    assert.ok(
      lengths.every((n) => n >= 16 && n <= 24),
      `lengths ${lengths.join(",")}`,
    );
    assert.ok(new Set(lengths).size >= 5, "lengths vary");
  });

  it("ids are (counter % range) + start, wrapping around the range", () => {
    const manager = createSequenceManager({ ...base, length: 1, idStart: 10, idRange: 3 });
    manager.ensure(1);
    assert.deepEqual(
      Array.from({ length: 7 }, () => manager.next(0).id),
      [10, 11, 12, 10, 11, 12, 10],
    );
  });

  it("an id another slot still holds is skipped: the slot keeps its previous id", () => {
    // Slot 0 runs a 5-step sequence (stream 0), slot 1 one-step ones (stream 1); ids 1..2.
    const manager = createSequenceManager({
      ...base,
      idRange: 2,
      streamSteps: [5, 1],
      random: values(0, 0.9, 0.9, 0.9),
    });
    manager.ensure(2);
    assert.equal(manager.next(0).id, 1);
    assert.deepEqual(manager.next(1), { id: 2, start: true, end: true, dataIndex: 5 });
    // The counter comes round to 1, which slot 0 holds: slot 1 reuses its own 2.
    assert.deepEqual(manager.next(1), { id: 2, start: true, end: true, dataIndex: 5 });
    assert.equal(manager.idOf(0), 1);
  });

  it("a slot with no id yet takes the next id nobody holds (never id 0)", () => {
    const manager = createSequenceManager({
      ...base,
      idRange: 3,
      streamSteps: [5, 1],
      random: values(0, 0.9, 0.9),
    });
    manager.ensure(3);
    assert.equal(manager.next(0).id, 1); // a long sequence
    assert.equal(manager.next(1).id, 2);
    assert.equal(manager.next(1).id, 3);
    // The counter is at 1 again, held by slot 0; slot 2 never had an id, so it moves on to 2.
    assert.equal(manager.next(2).id, 2);
  });

  it("finish sends END to an unfinished sequence, nothing to a finished one (CompleteOngoingSequence)", () => {
    const manager = createSequenceManager({ ...base, length: 5 });
    manager.ensure(2);
    manager.next(0);
    manager.next(0);
    assert.deepEqual(manager.finish(0), { id: 1, start: false, end: true, dataIndex: 0 });
    assert.equal(manager.isOpen(0), false);
    assert.equal(manager.finish(0), undefined);
    assert.equal(manager.finish(1), undefined, "a slot that never started");
    const next = manager.next(0);
    assert.deepEqual([next.id, next.start], [2, true], "the slot's next request starts a new sequence");
  });

  it("JSON streams: a random stream per sequence, its step count as the length, its steps in order", () => {
    // Streams of 4, 3 and 2 steps: requests 0-3, 4-6 and 7-8 of the run's list.
    const manager = createSequenceManager({
      ...base,
      streamSteps: [4, 3, 2],
      random: values(0.5, 0.9, 0.1),
    });
    manager.ensure(1);
    const sequences = [0, 1, 2].map(() => wholeSequence(() => manager.next(0)));
    assert.deepEqual(
      sequences.map((steps) => steps.map((s) => s.dataIndex)),
      [
        [4, 5, 6],
        [7, 8],
        [0, 1, 2, 3],
      ],
    );
    assert.deepEqual(
      sequences.map((steps) => steps.map((s) => s.id)),
      [
        [1, 1, 1],
        [2, 2],
        [3, 3, 3, 3],
      ],
    );
  });

  it("JSON streams with --sequence-length: the drawn length, wrapping over the stream's steps", () => {
    const manager = createSequenceManager({
      ...base,
      length: 5,
      lengthSpecified: true,
      streamSteps: [2, 3],
      random: values(0.9, 0.5),
    });
    manager.ensure(1);
    const steps = wholeSequence(() => manager.next(0));
    assert.deepEqual(
      steps.map((s) => s.dataIndex),
      [2, 3, 4, 2, 3],
    );
    const finished = createSequenceManager({
      ...base,
      length: 5,
      lengthSpecified: true,
      streamSteps: [2, 3],
      random: values(0.9, 0.5),
    });
    finished.ensure(1);
    finished.next(0);
    assert.equal(finished.finish(0)?.dataIndex, 2 + ((5 - 1) % 3), "END takes the last step's data");
  });
});
