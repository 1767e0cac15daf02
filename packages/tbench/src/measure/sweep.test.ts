import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { LoadLevel } from "../load/load-driver.js";
import type { LevelResult, LevelStatus } from "./level-profiler.js";
import {
  firstLevel,
  highestLevel,
  isOpenEnded,
  type LevelList,
  runSweep,
  type SweepLevels,
  type SweepRange,
} from "./sweep.js";

/**
 * Runs a sweep whose levels end with the status `judge` gives them (no load, no clock) and returns the
 * levels it visited, in order.
 */
async function visited(
  levels: SweepLevels,
  judge: (value: number) => LevelStatus,
  options: { binarySearch?: boolean; stopOnError?: boolean; abortAfter?: number } = {},
): Promise<number[]> {
  const controller = new AbortController();
  const values: number[] = [];
  const results = await runSweep({
    levels,
    binarySearch: options.binarySearch ?? false,
    stopOnError: options.stopOnError ?? false,
    signal: controller.signal,
    async profile(level: LoadLevel): Promise<LevelResult> {
      assert.equal(level.mode, levels.mode);
      values.push(level.value);
      if (values.length === options.abortAfter) controller.abort();
      const status = judge(level.value);
      return { level, status, stable: status === "ok", measurement: undefined, windows: [], messages: [] };
    },
  });
  assert.deepEqual(
    results.map((r) => r.level.value),
    values,
  );
  return values;
}

const concurrency = (start: number, end: number, step: number): SweepRange => ({
  mode: "concurrency",
  start,
  end,
  step,
});
const passUpTo =
  (limit: number) =>
  (value: number): LevelStatus =>
    value <= limit ? "ok" : "latency_threshold";

describe("binary search (perf_analyzer's: start, end, then halves with integer division)", () => {
  it("concurrency 1..16 step 1, passing up to 6: 1, 16, 8, 4, 6, 7", async () => {
    assert.deepEqual(
      await visited(concurrency(1, 16, 1), passUpTo(6), { binarySearch: true }),
      [1, 16, 8, 4, 6, 7],
    );
  });

  it("the middle rounds down, as (end + start) / 2 on integers does", async () => {
    // 1..4: the middle of 1 and 4 is 2, not 3.
    assert.deepEqual(await visited(concurrency(1, 4, 1), passUpTo(1), { binarySearch: true }), [1, 4, 2]);
    assert.deepEqual(await visited(concurrency(1, 4, 1), passUpTo(2), { binarySearch: true }), [1, 4, 2, 3]);
  });

  it("stops when the bracket is no wider than the step", async () => {
    // 1..32 step 4, passing up to 13: 16 fails, 8 passes, 12 passes; 16 - 12 <= 4.
    assert.deepEqual(
      await visited(concurrency(1, 32, 4), passUpTo(13), { binarySearch: true }),
      [1, 32, 16, 8, 12],
    );
  });

  it("gives up at once when start fails, and stops when end passes", async () => {
    assert.deepEqual(await visited(concurrency(2, 16, 1), passUpTo(1), { binarySearch: true }), [2]);
    assert.deepEqual(await visited(concurrency(2, 16, 1), passUpTo(99), { binarySearch: true }), [2, 16]);
  });

  it("an unstable level counts as failing (perf_analyzer's meets_threshold is false)", async () => {
    const judge = (value: number): LevelStatus => (value <= 4 ? "ok" : value === 8 ? "unstable" : "ok");
    // 16 must fail for the search to run: 16 over the threshold, 8 unstable -> below 8.
    const withEnd = (value: number): LevelStatus => (value === 16 ? "latency_threshold" : judge(value));
    assert.deepEqual(
      await visited(concurrency(1, 16, 1), withEnd, { binarySearch: true }),
      [1, 16, 8, 4, 6, 7],
    );
  });

  it("error-rate and no-data levels fail too", async () => {
    const judge = (value: number): LevelStatus =>
      value >= 8 ? "latency_threshold" : value >= 4 ? "error_rate" : "ok";
    assert.deepEqual(
      await visited(concurrency(1, 16, 1), judge, { binarySearch: true }),
      [1, 16, 8, 4, 2, 3],
    );
    const noData = (value: number): LevelStatus => (value === 1 ? "ok" : "no_data");
    assert.deepEqual(await visited(concurrency(1, 3, 1), noData, { binarySearch: true }), [1, 3, 2]);
  });

  it("request rates halve exactly", async () => {
    const range: SweepRange = { mode: "request_rate", start: 100, end: 1000, step: 100 };
    const judge = (value: number): LevelStatus => (value <= 500 ? "ok" : "latency_threshold");
    // 550 fails, 325, 437.5 and 493.75 pass; 550 - 493.75 <= 100.
    assert.deepEqual(
      await visited(range, judge, { binarySearch: true }),
      [100, 1000, 550, 325, 437.5, 493.75],
    );
  });

  it("ends when the middle rounds onto a bound (rates keep 6 decimals), however small the step", async () => {
    const range: SweepRange = { mode: "request_rate", start: 1, end: 1.000004, step: 1e-9 };
    const judge = (value: number): LevelStatus => (value <= 1.000001 ? "ok" : "latency_threshold");
    assert.deepEqual(await visited(range, judge, { binarySearch: true }), [1, 1.000004, 1.000002, 1.000001]);
    // Concurrency halves by integer division: with a step under 1 the middle falls onto the lower bound.
    assert.deepEqual(await visited(concurrency(1, 4, 0.5), passUpTo(1), { binarySearch: true }), [1, 4, 2]);
  });

  it("an interrupt stops the search after the level being measured", async () => {
    assert.deepEqual(
      await visited(concurrency(1, 16, 1), passUpTo(6), { binarySearch: true, abortAfter: 3 }),
      [1, 16, 8],
    );
  });
});

describe("linear sweep", () => {
  it("visits start..end by step", async () => {
    assert.deepEqual(await visited(concurrency(1, 9, 4), passUpTo(99)), [1, 5, 9]);
  });

  it("stops at the first level over the latency threshold, end 0 included", async () => {
    assert.deepEqual(await visited(concurrency(1, 0, 2), passUpTo(6)), [1, 3, 5, 7]);
  });

  it("goes on past unstable and error-rate levels unless --stop-on-error", async () => {
    const judge = (value: number): LevelStatus =>
      value === 2 ? "unstable" : value === 3 ? "error_rate" : "ok";
    assert.deepEqual(await visited(concurrency(1, 4, 1), judge), [1, 2, 3, 4]);
    assert.deepEqual(await visited(concurrency(1, 4, 1), judge, { stopOnError: true }), [1, 2, 3]);
    // A level that got no answer at all counts as an error level.
    const silent = (value: number): LevelStatus => (value === 2 ? "no_data" : "ok");
    assert.deepEqual(await visited(concurrency(1, 4, 1), silent), [1, 2, 3, 4]);
    assert.deepEqual(await visited(concurrency(1, 4, 1), silent, { stopOnError: true }), [1, 2]);
  });

  it("an interrupted level ends the sweep, and so does an interrupt between levels", async () => {
    const judge = (value: number): LevelStatus => (value === 2 ? "interrupted" : "ok");
    assert.deepEqual(await visited(concurrency(1, 4, 1), judge), [1, 2]);
    assert.deepEqual(await visited(concurrency(1, 4, 1), passUpTo(99), { abortAfter: 2 }), [1, 2]);
  });

  it("rate steps of 0.1 land on 0.3, not 0.30000000000000004", async () => {
    const range: SweepRange = { mode: "request_rate", start: 0.1, end: 0.4, step: 0.1 };
    assert.deepEqual(await visited(range, () => "ok"), [0.1, 0.2, 0.3, 0.4]);
  });
});

describe("a list of levels (the library's levels, tbench tune's --concurrency, --request-intervals)", () => {
  const list = (...values: number[]): LevelList => ({ mode: "concurrency", values });

  it("visits the levels in the order given, whatever --binary-search says", async () => {
    assert.deepEqual(await visited(list(4, 1, 16, 2), passUpTo(99)), [4, 1, 16, 2]);
    assert.deepEqual(await visited(list(4, 1, 16, 2), passUpTo(99), { binarySearch: true }), [4, 1, 16, 2]);
  });

  it("stops at the first level over the latency threshold", async () => {
    assert.deepEqual(await visited(list(1, 2, 4, 8, 16, 32), passUpTo(6)), [1, 2, 4, 8]);
  });

  it("stops on an error-rate or no-data level with --stop-on-error, and goes on without it", async () => {
    const judge = (value: number): LevelStatus => (value === 4 ? "error_rate" : "ok");
    assert.deepEqual(await visited(list(1, 2, 4, 8), judge, { stopOnError: true }), [1, 2, 4]);
    assert.deepEqual(await visited(list(1, 2, 4, 8), judge), [1, 2, 4, 8]);
    const silent = (value: number): LevelStatus => (value === 2 ? "no_data" : "ok");
    assert.deepEqual(await visited(list(1, 2, 4, 8), silent, { stopOnError: true }), [1, 2]);
    assert.deepEqual(await visited(list(1, 2, 4, 8), silent), [1, 2, 4, 8]);
  });

  it("goes on past unstable levels", async () => {
    const judge = (value: number): LevelStatus => (value === 2 ? "unstable" : "ok");
    assert.deepEqual(await visited(list(1, 2, 4), judge, { stopOnError: true }), [1, 2, 4]);
  });

  it("an interrupted level ends it, and so does an interrupt between levels", async () => {
    const judge = (value: number): LevelStatus => (value === 2 ? "interrupted" : "ok");
    assert.deepEqual(await visited(list(1, 2, 4), judge), [1, 2]);
    assert.deepEqual(await visited(list(1, 2, 4), passUpTo(99), { abortAfter: 1 }), [1]);
  });

  it("takes request rates as given, one rate included", async () => {
    const rates: LevelList = { mode: "request_rate", values: [12.345] };
    assert.deepEqual(await visited(rates, () => "ok"), [12.345]);
  });
});

describe("what a sweep names before it runs (warmup level, limit, contexts to make room for)", () => {
  it("a range starts at start, reaches its larger bound, and is open-ended when end is 0", () => {
    assert.deepEqual(firstLevel(concurrency(2, 16, 2)), { mode: "concurrency", value: 2 });
    assert.equal(highestLevel(concurrency(2, 16, 2)), 16);
    assert.equal(isOpenEnded(concurrency(2, 16, 2)), false);
    assert.equal(highestLevel(concurrency(4, 0, 1)), 4);
    assert.equal(isOpenEnded(concurrency(4, 0, 1)), true);
  });

  it("a list starts at its first level and reaches its largest; an empty one names no level", () => {
    const list: LevelList = { mode: "request_rate", values: [50, 200, 100] };
    assert.deepEqual(firstLevel(list), { mode: "request_rate", value: 50 });
    assert.equal(highestLevel(list), 200);
    assert.equal(isOpenEnded(list), false);
    assert.equal(firstLevel({ mode: "concurrency", values: [] }), undefined);
  });
});
