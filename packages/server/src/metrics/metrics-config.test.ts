import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_METRICS_CONFIG, MetricsConfigFlagError, parseMetricsConfig } from "./metrics-config.js";

test("no --metrics-config: Triton's counters on, summaries off, Triton's five quantiles", () => {
  assert.deepEqual(parseMetricsConfig([]), DEFAULT_METRICS_CONFIG);
  assert.deepEqual(
    DEFAULT_METRICS_CONFIG.summaryQuantiles.map((q) => q.quantile),
    [0.5, 0.9, 0.95, 0.99, 0.999],
  );
  assert.equal(DEFAULT_METRICS_CONFIG.counterLatencies, true);
  assert.equal(DEFAULT_METRICS_CONFIG.summaryLatencies, false);
});

test("settings switch the families; only Triton's switching values switch them; later wins", () => {
  const config = parseMetricsConfig([
    "summary_latencies=true",
    "counter_latencies=false",
    "summary_quantiles=0.5:0.05,0.99:0.001",
    "summary_quantiles=0.9:0.01",
  ]);
  assert.equal(config.summaryLatencies, true);
  assert.equal(config.counterLatencies, false);
  assert.deepEqual(config.summaryQuantiles, [{ quantile: 0.9, error: 0.01 }]);
  // Triton compares with "true" / "false" exactly: anything else leaves the default.
  const unchanged = parseMetricsConfig([
    "summary_latencies=yes",
    "counter_latencies=0",
    "some_future_setting=1",
  ]);
  assert.deepEqual(unchanged, DEFAULT_METRICS_CONFIG);
});

test("a malformed argument is refused with Triton's format message, naming what was given", () => {
  for (const arg of ["summary_latencies", "=true", "summary_latencies=", "group,summary_latencies=true"]) {
    assert.throws(
      () => parseMetricsConfig([arg]),
      (error: unknown) =>
        error instanceof MetricsConfigFlagError &&
        error.message === `--metrics-config option format is <setting>=<value>. Got ${arg}`,
    );
  }
  for (const value of ["0.99", "1.5:0.01", "0.5:0", "a:b", "0.5:0.1:3", "0.5:0.05,"]) {
    assert.throws(
      () => parseMetricsConfig([`summary_quantiles=${value}`]),
      /expected <quantile>:<error> pairs with both in \(0, 1\)/,
    );
  }
});
