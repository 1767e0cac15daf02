import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { anyOverThreshold, isStable, type StabilitySample } from "./stability.js";

const w = (inferPerSec: number, latencyUs: number): StabilitySample => ({ inferPerSec, latencyUs });

describe("isStable (perf_analyzer's rule: max / min <= 1 + s over the last 3 windows)", () => {
  it("needs three windows", () => {
    assert.equal(isStable([w(100, 1000), w(100, 1000)], 10), false);
    assert.equal(isStable([w(100, 1000), w(100, 1000), w(100, 1000)], 10), true);
  });

  it("throughput: max / min exactly 1.1 is stable at -s 10, a hair above is not", () => {
    assert.equal(isStable([w(100, 1000), w(105, 1000), w(110, 1000)], 10), true);
    assert.equal(isStable([w(100, 1000), w(105, 1000), w(110.001, 1000)], 10), false);
    // The order of the windows does not matter, only the extremes.
    assert.equal(isStable([w(110, 1000), w(100, 1000), w(105, 1000)], 10), true);
  });

  it("rejects what the old +/- s% around the mean accepted (about twice as loose)", () => {
    // Mean 100: 90 and 110 are both within 10% of it, but 110 / 90 = 1.22.
    assert.equal(isStable([w(90, 1000), w(100, 1000), w(110, 1000)], 10), false);
    assert.equal(isStable([w(100, 900), w(100, 1000), w(100, 1100)], 10), false);
  });

  it("latency: max / min exactly 1.1 is stable at -s 10, a hair above is not", () => {
    assert.equal(isStable([w(100, 1000), w(100, 1050), w(100, 1100)], 10), true);
    assert.equal(isStable([w(100, 1000), w(100, 1050), w(100, 1100.1)], 10), false);
  });

  it("checkLatency false looks at throughput only (perf_analyzer's async fallback)", () => {
    assert.equal(isStable([w(100, 1000), w(100, 5000), w(100, 9000)], 10, false), true);
    assert.equal(isStable([w(100, 1000), w(100, 1000), w(111, 1000)], 10, false), false);
  });

  it("only looks at the last three windows", () => {
    assert.equal(isStable([w(10, 9000), w(100, 1000), w(100, 1000), w(100, 1000)], 10), true);
    assert.equal(isStable([w(100, 1000), w(100, 1000), w(100, 1000), w(10, 9000)], 10), false);
  });

  it("never calls a window with zero throughput stable", () => {
    assert.equal(isStable([w(0, 0), w(0, 0), w(0, 0)], 10), false);
    assert.equal(isStable([w(100, 1000), w(100, 1000), w(0, 1000)], 100), false);
    assert.equal(isStable([w(100, 1000), w(100, 1000), w(0, 1000)], 100, false), false);
  });

  it("a window without a successful request (latency Infinity) is never latency-stable", () => {
    assert.equal(isStable([w(100, 1000), w(100, 1000), w(100, Number.POSITIVE_INFINITY)], 1000), false);
  });

  it("honours the percentage, boundaries included", () => {
    const samples = [w(100, 1000), w(110, 1000), w(120, 1000)];
    assert.equal(isStable(samples, 10), false);
    assert.equal(isStable(samples, 19.9), false);
    assert.equal(isStable(samples, 20), true);
    assert.equal(isStable([w(100, 1000), w(100, 1000), w(100, 1000)], 0), true);
    assert.equal(isStable([w(100, 1000), w(100, 1000), w(100.001, 1000)], 0), false);
  });
});

describe("anyOverThreshold (perf_analyzer's IsDoneProfiling)", () => {
  it("is true once any of the last 3 windows is at or over the threshold", () => {
    assert.equal(anyOverThreshold([w(1, 4999), w(1, 4999), w(1, 5000)], 5), true);
    assert.equal(anyOverThreshold([w(1, 5000), w(1, 4999), w(1, 4999)], 5), true);
    assert.equal(anyOverThreshold([w(1, 4999), w(1, 4999), w(1, 4999.9)], 5), false);
    assert.equal(anyOverThreshold([w(1, 1000), w(1, 1000), w(1, Number.POSITIVE_INFINITY)], 5), true);
  });

  it("only looks at the last 3, and only once there are 3", () => {
    assert.equal(anyOverThreshold([w(1, 9000), w(1, 1000), w(1, 1000), w(1, 1000)], 5), false);
    assert.equal(anyOverThreshold([w(1, 9000), w(1, 9000)], 5), false);
  });

  it("threshold 0 means none", () => {
    assert.equal(anyOverThreshold([w(1, 9000), w(1, 9000), w(1, 9000)], 0), false);
  });
});
