import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticLevel } from "../testing/synthetic-results.js";
import { COMPARE_METRICS, compareResults, formatCompareTable } from "./compare-results.js";
import { parseResultJson, type ResultJson, toResultJson } from "./json-result.js";

/** A one-run result with one level per entry: `latencyUs` repeated `count` times, plus `errors` 503s. */
function result(
  mode: "concurrency" | "request_rate",
  levels: { value: number; latencyUs: number; count: number; errors?: number }[],
): ResultJson {
  const json = toResultJson(
    levels.map((l) =>
      syntheticLevel({
        mode,
        value: l.value,
        latenciesUs: Array(l.count).fill(l.latencyUs),
        errors: l.errors === undefined ? {} : { "UNAVAILABLE (503)": l.errors },
      }),
    ),
    { mode },
    "t",
  );
  return parseResultJson(JSON.stringify(json), "t.json");
}

const noGate = { minRatio: undefined, maxRegressionPercent: undefined };

describe("compareResults", () => {
  it("offers every metric, throughput first", () => {
    assert.deepEqual(COMPARE_METRICS, [
      "throughput",
      "avg",
      "p50",
      "p90",
      "p95",
      "p99",
      "p99.9",
      "error_rate",
    ]);
  });

  it("compares only the levels both measured, matched by mode and value, labelled by mode", () => {
    const base = result("request_rate", [
      { value: 100, latencyUs: 1000, count: 100 },
      { value: 200, latencyUs: 1000, count: 200 },
    ]);
    const cand = result("request_rate", [{ value: 200, latencyUs: 500, count: 200 }]);
    const rows = compareResults(base, cand, ["avg"], noGate);
    assert.deepEqual(
      rows.map((r) => [r.level, r.baseline, r.candidate, r.ratio, r.regressionPercent, r.pass]),
      [["rate 200", 1000, 500, 2, -50, true]],
    );
    // Same value, other mode: nothing to compare.
    const concurrency = result("concurrency", [{ value: 200, latencyUs: 500, count: 200 }]);
    assert.deepEqual(compareResults(base, concurrency, ["avg"], noGate), []);
    assert.equal(compareResults(concurrency, concurrency, ["avg"], noGate)[0]?.level, "concurrency 200");
  });

  it("reads each metric from its own figure", () => {
    const base = result("concurrency", [{ value: 1, latencyUs: 1000, count: 1000, errors: 10 }]);
    const cand = result("concurrency", [{ value: 1, latencyUs: 2000, count: 500, errors: 50 }]);
    const rows = compareResults(base, cand, ["throughput", "avg", "p99", "error_rate"], noGate);
    const byMetric = Object.fromEntries(rows.map((r) => [r.metric, r]));
    assert.deepEqual([byMetric.throughput?.baseline, byMetric.throughput?.candidate], [1000, 500]);
    assert.equal(byMetric.throughput?.regressionPercent, 50);
    assert.deepEqual([byMetric.avg?.baseline, byMetric.avg?.candidate], [1000, 2000]);
    assert.equal(byMetric.avg?.ratio, 0.5);
    assert.equal(byMetric.p99?.candidate, cand.levels[0]!.latency.percentiles["99"]);
    assert.deepEqual([byMetric.error_rate?.baseline, byMetric.error_rate?.candidate], [10 / 1010, 50 / 550]);
  });

  it("equal figures are a ratio of 1 and no change, zero errors on both sides included", () => {
    const same = result("concurrency", [{ value: 1, latencyUs: 700, count: 10 }]);
    const rows = compareResults(same, same, ["avg", "error_rate"], { minRatio: 1, maxRegressionPercent: 0 });
    assert.deepEqual(
      rows.map((r) => [r.metric, r.ratio, r.regressionPercent, r.pass]),
      [
        ["avg", 1, 0, true],
        ["error_rate", 1, 0, true],
      ],
    );
  });

  it("errors where there were none count as a 100% regression", () => {
    const clean = result("concurrency", [{ value: 1, latencyUs: 700, count: 10 }]);
    const failing = result("concurrency", [{ value: 1, latencyUs: 700, count: 10, errors: 1 }]);
    const [row] = compareResults(clean, failing, ["error_rate"], {
      minRatio: undefined,
      maxRegressionPercent: 99,
    });
    assert.equal(row?.regressionPercent, 100);
    assert.equal(row?.pass, false);
  });

  it("a gate on both: the ratio and the regression must both pass", () => {
    const base = result("concurrency", [{ value: 1, latencyUs: 1000, count: 100 }]);
    const cand = result("concurrency", [{ value: 1, latencyUs: 1000, count: 95 }]);
    const gate = (minRatio: number, maxRegressionPercent: number) =>
      compareResults(base, cand, ["throughput"], { minRatio, maxRegressionPercent })[0]?.pass;
    assert.equal(gate(0.9, 10), true);
    assert.equal(gate(0.96, 10), false);
    assert.equal(gate(0.9, 4), false);
  });

  it("a percentile one run or neither has fails the gate instead of passing silently", () => {
    const base = result("concurrency", [{ value: 1, latencyUs: 1000, count: 100 }]);
    const [row] = compareResults(base, base, ["p99.99" as never], noGate);
    assert.ok(Number.isNaN(row?.baseline));
    assert.equal(row?.pass, false);
    const withIt = result("concurrency", [{ value: 1, latencyUs: 1000, count: 100 }]);
    withIt.levels[0]!.latency.percentiles["99.99"] = 1000;
    assert.equal(compareResults(base, withIt, ["p99.99" as never], noGate)[0]?.pass, false);
    assert.equal(compareResults(withIt, base, ["p99.99" as never], noGate)[0]?.pass, false);
  });
});

describe("formatCompareTable", () => {
  it("shows units, the change in words, and the gate column only when gated", () => {
    const base = result("concurrency", [{ value: 4, latencyUs: 1000, count: 100, errors: 0 }]);
    const cand = result("concurrency", [{ value: 4, latencyUs: 1250, count: 50, errors: 50 }]);
    const rows = compareResults(base, cand, ["throughput", "avg", "error_rate"], {
      minRatio: 0.9,
      maxRegressionPercent: undefined,
    });
    const gated = formatCompareTable(rows, true);
    assert.match(gated, /Gate/);
    assert.match(
      gated,
      /concurrency 4 │ throughput │ 100\.0 infer\/s │ 50\.0 infer\/s │ 0\.500x │ worse 50\.0% +│ FAIL/,
    );
    assert.match(gated, /│ avg +│ 1000 usec +│ 1250 usec +│ 0\.800x │ worse 25\.0% +│ FAIL/);
    assert.match(gated, /│ error_rate │ 0\.00% +│ 50\.00% +│ 0\.000x │ worse 100\.0% │ FAIL/);
    assert.match(gated, /│ Level +│ Metric +│ Baseline +│ Candidate +│ Ratio +│ Change +│ Gate │/);
    const plain = formatCompareTable(compareResults(cand, base, ["avg"], noGate), false);
    assert.match(plain, /│ Level +│ Metric +│ Baseline +│ Candidate +│ Ratio +│ Change +│\n/);
    assert.doesNotMatch(plain, /Gate|PASS|FAIL/);
    assert.match(plain, /│ 1250 usec +│ 1000 usec +│ 1\.250x │ better 20\.0% │/);
    assert.match(
      formatCompareTable(compareResults(base, base, ["avg"], noGate), false),
      /│ 1\.000x │ 0\.0% +│/,
    );
    const missing = formatCompareTable(compareResults(base, base, ["p99.99" as never], noGate), true);
    assert.match(missing, /│ n\/a +│ n\/a +│ n\/a +│/);
  });
});
