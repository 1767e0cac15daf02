import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  createLatencyHistogram,
  decodeHistogram,
  encodeHistogram,
  mergeHistograms,
  readPercentiles,
  STANDARD_PERCENTILES,
} from "./histogram.js";
import {
  addLatency,
  averageUs,
  createLatencyMoments,
  type LatencyMoments,
  mergeMoments,
  standardDeviationUs,
} from "./latency-stats.js";

function momentsOf(values: readonly number[]): LatencyMoments {
  const moments = createLatencyMoments();
  for (const v of values) addLatency(moments, v);
  return moments;
}

describe("latency moments", () => {
  it("count, sum, sum of squares, min and max of the latencies, in any order", () => {
    assert.deepEqual(momentsOf([300, 100, 200]), {
      count: 3,
      sumUs: 600,
      sumSquaresUs2: 140_000,
      minUs: 100,
      maxUs: 300,
    });
    // A first value that is both the smallest and the largest so far.
    assert.deepEqual(momentsOf([7]), { count: 1, sumUs: 7, sumSquaresUs2: 49, minUs: 7, maxUs: 7 });
  });

  it("the average and the population standard deviation, exactly", () => {
    const m = momentsOf([2, 4, 4, 4, 5, 5, 7, 9]);
    assert.equal(averageUs(m), 5);
    assert.equal(standardDeviationUs(m), 2);
    assert.equal(standardDeviationUs(momentsOf([10, 10, 10])), 0);
  });

  it("empty moments average 0 with deviation 0, not NaN", () => {
    const empty = createLatencyMoments();
    assert.equal(averageUs(empty), 0);
    assert.equal(standardDeviationUs(empty), 0);
  });

  it("never a NaN deviation when rounding makes the variance a hair negative", () => {
    // 0.1 three times: sum of squares / n - mean^2 comes out about -1.4e-17 in floating point.
    const m = momentsOf([0.1, 0.1, 0.1]);
    assert.ok(m.sumSquaresUs2 / m.count - (m.sumUs / m.count) ** 2 < 0, "the case this test is about");
    assert.equal(standardDeviationUs(m), 0);
  });

  it("merged moments are those of all the values together", () => {
    const merged = mergeMoments([momentsOf([5, 1]), createLatencyMoments(), momentsOf([9, 3])]);
    assert.deepEqual(merged, momentsOf([5, 1, 9, 3]));
    assert.equal(standardDeviationUs(merged), standardDeviationUs(momentsOf([1, 3, 5, 9])));
  });
});

describe("latency histogram", () => {
  it("reads the standard percentiles, zeros when empty", () => {
    const h = createLatencyHistogram();
    for (let v = 1; v <= 1000; v++) h.recordValue(v);
    assert.deepEqual(readPercentiles(h, STANDARD_PERCENTILES), {
      "50": 500,
      "90": 900,
      "95": 950,
      "99": 990,
      "99.9": 999,
    });
    assert.deepEqual(readPercentiles(createLatencyHistogram(), [50, 99]), { "50": 0, "99": 0 });
  });

  it("keeps values past an hour (auto-resize) and round-trips through its encoding", () => {
    const h = createLatencyHistogram();
    h.recordValue(3);
    h.recordValue(7_200_000_000);
    const back = decodeHistogram(encodeHistogram(h));
    assert.equal(back.totalCount, 2);
    assert.equal(back.getValueAtPercentile(100), h.getValueAtPercentile(100));
    assert.ok(back.getValueAtPercentile(100) >= 7_200_000_000);
    // A decoded histogram takes further values of any size.
    back.recordValue(10_000_000_000);
    assert.equal(mergeHistograms([back, h]).totalCount, 5);
  });

  it("names what it got when the text is not an encoded histogram", () => {
    assert.throws(
      () => decodeHistogram("not a histogram at all, really"),
      (error: unknown) =>
        error instanceof Error &&
        error.message === 'expected a compressed base64 HDR histogram, got "not a histogram at all, "...' &&
        error.cause !== undefined,
    );
  });
});
