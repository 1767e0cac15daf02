import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRateSchedule, createSeededRandom, parseRequestIntervals, phaseShift } from "./schedule.js";

describe("createRateSchedule", () => {
  it("constant: one gap of exactly 1000/rate ms", () => {
    const schedule = createRateSchedule({ ratePerSec: 250, distribution: "constant", seed: 1 });
    assert.deepEqual([...schedule.intervalsMs], [4]);
    assert.equal(schedule.ratePerSec, 250);
  });

  it("poisson: the same seed gives the same gaps, another seed different ones", () => {
    const a = createRateSchedule({ ratePerSec: 100, distribution: "poisson", seed: 7, length: 64 });
    const b = createRateSchedule({ ratePerSec: 100, distribution: "poisson", seed: 7, length: 64 });
    const c = createRateSchedule({ ratePerSec: 100, distribution: "poisson", seed: 8, length: 64 });
    assert.deepEqual([...a.intervalsMs], [...b.intervalsMs]);
    assert.notDeepEqual([...a.intervalsMs], [...c.intervalsMs]);
  });

  it("poisson: exponential gaps with mean 1000/rate (fixed seed, so this is deterministic)", () => {
    const { intervalsMs } = createRateSchedule({ ratePerSec: 200, distribution: "poisson", seed: 1 });
    const values = [...intervalsMs];
    const mean = values.reduce((x, y) => x + y, 0) / values.length;
    assert.ok(Math.abs(mean - 5) < 0.15, `mean gap ${mean} ms, expected about 5 ms`);
    assert.ok(values.every((v) => v >= 0 && Number.isFinite(v)));
    // Exponential: about 1 - 1/e of the gaps are shorter than the mean.
    const shorter = values.filter((v) => v < 5).length / values.length;
    assert.ok(Math.abs(shorter - (1 - Math.exp(-1))) < 0.02, `share below mean ${shorter}`);
  });

  it("rejects a non-positive rate", () => {
    assert.throws(
      () => createRateSchedule({ ratePerSec: 0, distribution: "constant", seed: 1 }),
      /positive number, got 0/,
    );
  });

  it("the seeded generator matches mulberry32's reference outputs", () => {
    // Reference outputs (32-bit integers, divided by 2^32 by the generator) computed by an independent
    // Python port of Tommy Ettinger's C mulberry32 with explicit 32-bit masking, not by this code.
    // Seed 0's first value, 0.2664292086847126, is the one usually quoted for mulberry32.
    const reference: Record<number, number[]> = {
      0: [1144304738, 1416247, 958946056, 627933444, 2007157716],
      1: [2693262067, 11749833, 2265367787, 4213581821, 4159151403],
      42: [2581720956, 1925393290, 3661312704, 2876485805, 750819978],
    };
    for (const [seed, expected] of Object.entries(reference)) {
      const random = createSeededRandom(Number(seed));
      const got = expected.map(() => random() * 4294967296);
      assert.deepEqual(got, expected, `seed ${seed}`);
    }
  });
});

describe("parseRequestIntervals", () => {
  it("reads microseconds per line, exactly, skipping blank lines", () => {
    const schedule = parseRequestIntervals("1000\n\n2500\r\n500\n");
    assert.deepEqual([...schedule.intervalsMs], [1, 2.5, 0.5]);
    assert.equal(schedule.ratePerSec, 750);
  });

  it("names the bad line", () => {
    assert.throws(
      () => parseRequestIntervals("100\nabc\n", "f.txt"),
      /f\.txt, line 2: expected a non-negative number of microseconds, got "abc"/,
    );
    assert.throws(() => parseRequestIntervals("\n\n", "f.txt"), /at least one interval/);
    assert.throws(() => parseRequestIntervals("0\n0\n", "f.txt"), /add up to 0/);
  });

  it("refuses a negative gap, and names the default source when none is given", () => {
    assert.throws(
      () => parseRequestIntervals("100\n-5\n"),
      /^Error: request intervals file, line 2: expected a non-negative number of microseconds, got "-5"$/,
    );
  });

  it("trims each line: spaces around a number are fine, a line of spaces is blank", () => {
    const schedule = parseRequestIntervals("  1000  \n   \n\t2000\n");
    assert.deepEqual([...schedule.intervalsMs], [1, 2]);
    assert.throws(() => parseRequestIntervals("  abc  \n", "f.txt"), /line 1: .*got "abc"$/);
  });
});

describe("phaseShift", () => {
  it("delays the first send by that fraction of one average gap, the schedule unchanged", () => {
    const schedule = createRateSchedule({ ratePerSec: 200, distribution: "constant", seed: 1 });
    const shifted = phaseShift(schedule, 0.25);
    assert.equal(shifted.schedule, schedule);
    assert.equal(shifted.firstDelayMs, 1.25);
    assert.equal(phaseShift(schedule, 0).firstDelayMs, 0);
  });
});
