import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticLevel } from "../testing/synthetic-results.js";
import {
  formatFinalSummary,
  formatLevelSummary,
  formatPassLine,
  formatSettings,
  levelHeading,
} from "./console-summary.js";
import { formatCppDouble } from "./format.js";

describe("console summary (perf_analyzer's wording)", () => {
  it("formats throughput like C++ iostreams (6 significant digits)", () => {
    assert.equal(formatCppDouble(6005.7812), "6005.78");
    assert.equal(formatCppDouble(975.0481), "975.048");
    assert.equal(formatCppDouble(100), "100");
    assert.equal(formatCppDouble(1234567.8), "1.23457e+06");
    assert.equal(formatCppDouble(0), "0");
  });

  it("prints the settings block and the per-level client lines", () => {
    const settings = formatSettings({
      batchSize: 1,
      measurementMode: "time_windows",
      measurementIntervalMs: 5000,
      measurementRequestCount: 50,
      percentile: undefined,
      latencyThresholdMs: 0,
      mode: "concurrency",
      limit: 8,
      async: false,
      distribution: "constant",
      workers: 1,
    });
    assert.equal(
      settings,
      [
        "*** Measurement Settings ***",
        "  Batch size: 1",
        "  Service Kind: TRITON",
        '  Using "time_windows" mode for stabilization',
        "  Stabilizing using average latency and throughput",
        "  Measurement window: 5000 msec",
        "  Latency limit: 0 msec",
        "  Concurrency limit: 8 concurrent requests",
        "  Using synchronous calls for inference",
        "",
      ].join("\n"),
    );
    const level = syntheticLevel({ value: 1, latenciesUs: [100, 200, 300], durationMs: 1000 });
    assert.equal(levelHeading(level.level), "Request concurrency: 1");
    const lines = formatLevelSummary(level, undefined).split("\n");
    assert.deepEqual(lines.slice(0, 5), [
      "  Client: ",
      "    Request count: 3",
      "    Throughput: 3 infer/sec",
      "    Avg latency: 200 usec (standard deviation 81 usec)",
      "    p50 latency: 200 usec",
    ]);
    assert.equal(
      formatFinalSummary([level], undefined),
      "Inferences/Second vs. Client Average Batch Latency\nConcurrency: 1, throughput: 3 infer/sec, latency 200 usec\n",
    );
  });

  it("a sequence model's level has perf_analyzer's Sequence count line before the throughput", () => {
    const level = syntheticLevel({
      value: 2,
      latenciesUs: Array(30).fill(100),
      durationMs: 1500,
      sequenceEnds: 7,
    });
    assert.deepEqual(formatLevelSummary(level, undefined).split("\n").slice(0, 4), [
      "  Client: ",
      "    Request count: 30",
      "    Sequence count: 7 (4.66667 seq/sec)",
      "    Throughput: 20 infer/sec",
    ]);
    const plain = syntheticLevel({ value: 2, latenciesUs: [100], durationMs: 1000 });
    assert.doesNotMatch(formatLevelSummary(plain, undefined), /Sequence count/);
  });

  it("prints a verbose pass line per window, throughput as C++ prints it", () => {
    const window = syntheticLevel({ value: 1, latenciesUs: [100, 200, 300], durationMs: 1000 }).windows[0];
    assert.ok(window !== undefined);
    assert.equal(
      formatPassLine(1, window, undefined),
      "  Pass [1] throughput: 3 infer/sec. Avg latency: 200 usec (std 81 usec)\n",
    );
    assert.equal(
      formatPassLine(2, window, 50),
      "  Pass [2] throughput: 3 infer/sec. p50 latency: 200 usec\n",
    );
    // 120,000 infer/sec keeps its zeros (they are not decimals).
    const fast = { ...window, inferPerSec: 120_000 };
    assert.match(formatPassLine(3, fast, undefined), /throughput: 120000 infer\/sec\./);
  });
});
