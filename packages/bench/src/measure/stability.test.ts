import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hopelesslyOverThreshold, isStable, type StabilitySample } from "./stability.js";

const w = (inferPerSec: number, latencyUs: number): StabilitySample => ({ inferPerSec, latencyUs });

describe("isStable (perf_analyzer's rule: last 3 windows within +/- s% of their average)", () => {
  it("needs three windows", () => {
    assert.equal(isStable([w(100, 1000), w(100, 1000)], 10), false);
    assert.equal(isStable([w(100, 1000), w(100, 1000), w(100, 1000)], 10), true);
  });

  it("accepts windows inside the band and rejects one just outside it, on throughput", () => {
    // average 100: 90 and 110 are exactly on the +/-10% band edges -> stable
    assert.equal(isStable([w(90, 1000), w(100, 1000), w(110, 1000)], 10), true);
    // average 100.33: 89 is below 90.3 -> unstable
    assert.equal(isStable([w(89, 1000), w(101, 1000), w(111, 1000)], 10), false);
  });

  it("checks latency the same way", () => {
    assert.equal(isStable([w(100, 1000), w(100, 1000), w(100, 1300)], 10), false);
    assert.equal(isStable([w(100, 1000), w(100, 1050), w(100, 1100)], 10), true);
  });

  it("only looks at the last three windows", () => {
    assert.equal(isStable([w(10, 9000), w(100, 1000), w(100, 1000), w(100, 1000)], 10), true);
    assert.equal(isStable([w(100, 1000), w(100, 1000), w(100, 1000), w(10, 9000)], 10), false);
  });

  it("never calls a window with zero throughput stable", () => {
    assert.equal(isStable([w(0, 0), w(0, 0), w(0, 0)], 10), false);
  });

  it("honours the percentage", () => {
    const samples = [w(80, 1000), w(100, 1000), w(120, 1000)];
    assert.equal(isStable(samples, 10), false);
    assert.equal(isStable(samples, 20), true);
  });
});

describe("hopelesslyOverThreshold", () => {
  it("is true only when all of the last 3 windows are at or over the threshold", () => {
    assert.equal(hopelesslyOverThreshold([w(1, 5000), w(1, 6000), w(1, 7000)], 5), true);
    assert.equal(hopelesslyOverThreshold([w(1, 4999), w(1, 6000), w(1, 7000)], 5), false);
    assert.equal(hopelesslyOverThreshold([w(1, 5000), w(1, 6000)], 5), false);
    assert.equal(hopelesslyOverThreshold([w(1, 5000), w(1, 6000), w(1, 7000)], 0), false);
  });
});
