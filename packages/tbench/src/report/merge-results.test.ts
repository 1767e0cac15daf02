import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createLatencyHistogram, decodeHistogram, encodeHistogram } from "../measure/histogram.js";
import { syntheticLevel } from "../testing/synthetic-results.js";
import { compareResults } from "./compare-results.js";
import { parseResultJson, toResultJson } from "./json-result.js";
import { mergeResults } from "./merge-results.js";

function values(seed: number, count: number): number[] {
  // Deterministic spread over 50 us .. ~200 ms, so many HDR buckets are involved.
  let x = seed;
  return Array.from({ length: count }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return 50 + (x % 200_000);
  });
}

function roundTrip(json: ReturnType<typeof toResultJson>) {
  return parseResultJson(JSON.stringify(json), "test.json");
}

describe("merge", () => {
  it("merged histogram equals the histogram of all values; counts and throughputs add", () => {
    const a = values(1, 5000);
    const b = values(2, 7000);
    const runA = roundTrip(
      toResultJson(
        [syntheticLevel({ value: 8, latenciesUs: a, errors: { "UNAVAILABLE (503)": 3 } })],
        { mode: "concurrency" },
        "t",
      ),
    );
    const runB = roundTrip(
      toResultJson([syntheticLevel({ value: 8, latenciesUs: b })], { mode: "concurrency" }, "t"),
    );
    const merged = mergeResults([runA, runB]);
    assert.equal(merged.levels.length, 1);
    const level = merged.levels[0]!;

    const expected = createLatencyHistogram();
    for (const v of [...a, ...b]) expected.recordValue(v);
    const got = decodeHistogram(level.histograms.latencyUs);
    assert.equal(got.totalCount, 12000);
    assert.equal(encodeHistogram(got), encodeHistogram(expected));
    for (const p of [50, 90, 99, 99.9]) {
      assert.equal(level.latency.percentiles[String(p)], expected.getValueAtPercentile(p));
    }
    // The average comes from exact sums, not from the histogram.
    const all = [...a, ...b];
    assert.equal(level.latency.avgUs, all.reduce((x, y) => x + y, 0) / all.length);
    assert.equal(level.latency.maxUs, Math.max(...all));
    assert.equal(level.requestCount, 12000);
    assert.equal(level.errorCount, 3);
    assert.deepEqual(level.errorsByKind, { "UNAVAILABLE (503)": 3 });
    assert.equal(level.inferPerSec, 5000 + 7000);
    assert.equal(merged.sources, 2);
  });

  it("merges every run's uncorrected histogram (rate mode), not only the first run's", () => {
    const a = values(3, 3000);
    const b = values(4, 5000);
    const lagUs = 40;
    const run = (latenciesUs: number[]) =>
      roundTrip(
        toResultJson(
          [syntheticLevel({ mode: "request_rate", value: 100, latenciesUs, sendLagUs: lagUs })],
          { mode: "request_rate" },
          "t",
        ),
      );
    const level = mergeResults([run(a), run(b)]).levels[0]!;
    // Uncorrected latency is measured from the actual send, lagUs after the scheduled time.
    const expected = createLatencyHistogram();
    for (const v of [...a, ...b]) expected.recordValue(v - lagUs);
    const got = decodeHistogram(level.histograms.uncorrectedLatencyUs!);
    assert.equal(got.totalCount, a.length + b.length);
    assert.equal(encodeHistogram(got), encodeHistogram(expected));
    const uncorrected = level.uncorrectedLatency!;
    for (const p of [50, 90, 99]) {
      assert.equal(uncorrected.percentiles[String(p)], expected.getValueAtPercentile(p));
    }
    const all = [...a, ...b];
    assert.equal(uncorrected.avgUs, all.reduce((x, y) => x + y - lagUs, 0) / all.length);
    assert.equal(level.moments.uncorrected!.count, all.length);
  });

  it("rejects a file that is not a tbench result, naming it", () => {
    assert.throws(() => parseResultJson("{}", "x.json"), /x\.json: expected a tbench --json result/);
    assert.throws(
      () => parseResultJson("nope", "y.json"),
      /y\.json: expected a tbench --json result, the file is not JSON/,
    );
  });
});

describe("compare", () => {
  const base = roundTrip(
    toResultJson([syntheticLevel({ value: 1, latenciesUs: Array(1000).fill(1000) })], {}, "t"),
  );
  const faster = roundTrip(
    toResultJson([syntheticLevel({ value: 1, latenciesUs: Array(2000).fill(800) })], {}, "t"),
  );
  const slower = roundTrip(
    toResultJson([syntheticLevel({ value: 1, latenciesUs: Array(800).fill(1500) })], {}, "t"),
  );

  it("ratios: throughput cand/base, latency base/cand", () => {
    const rows = compareResults(base, faster, ["throughput", "p99"], {
      minRatio: 1,
      maxRegressionPercent: undefined,
    });
    assert.equal(rows[0]?.ratio, 2);
    assert.equal(
      rows[1]?.ratio,
      base.levels[0]!.latency.percentiles["99"]! / faster.levels[0]!.latency.percentiles["99"]!,
    );
    assert.ok(rows.every((r) => r.pass));
  });

  it("fails the gate on a regression beyond the limit, passes within it", () => {
    const failing = compareResults(base, slower, ["throughput"], {
      minRatio: undefined,
      maxRegressionPercent: 10,
    });
    assert.equal(failing[0]?.regressionPercent, 20);
    assert.equal(failing[0]?.pass, false);
    const passing = compareResults(base, slower, ["throughput"], {
      minRatio: undefined,
      maxRegressionPercent: 25,
    });
    assert.equal(passing[0]?.pass, true);
    assert.equal(
      compareResults(base, slower, ["p99"], { minRatio: 0.9, maxRegressionPercent: undefined })[0]?.pass,
      false,
    );
  });
});
