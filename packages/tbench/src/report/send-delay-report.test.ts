import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createWindowRecorder } from "../load/window-recorder.js";
import type { LevelResult } from "../measure/level-profiler.js";
import { summarizeWindows } from "../measure/measurement.js";
import { formatLevelSummary } from "./console-summary.js";
import { formatCsv } from "./csv-report.js";
import { parseResultJson, toResultJson } from "./json-result.js";
import { mergeResults } from "./merge-results.js";

const START_MS = 1_700_000_000_000;

/** A request-rate level of 100 sends whose own send delays are 0..99 us (and `extraUs` on top of each). */
function rateLevel(extraUs = 0): LevelResult {
  const recorder = createWindowRecorder({ keepRequests: false, trackUncorrected: true });
  for (let i = 0; i < 100; i++) {
    recorder.recordSent((i + extraUs) / 1000, false);
    recorder.recordSendDelay((i + extraUs) / 1000);
    recorder.recordSuccess(START_MS, START_MS, START_MS + 1);
  }
  const window = {
    startMs: START_MS,
    endMs: START_MS + 1000,
    part: recorder.swap(),
    server: undefined,
    metrics: undefined,
    overhead: { cpuPercent: 1, eventLoopDelayP99Ms: 0, warning: undefined },
  };
  const measurement = summarizeWindows([window], 1, [50, 90, 95, 99, 99.9]);
  return {
    level: { mode: "request_rate", value: 100 },
    status: "ok",
    stable: true,
    measurement,
    windows: [measurement],
    messages: [],
  };
}

describe("send delay: tbench's own lateness, reported on its own", () => {
  it("console: p50, p99 and max under the client lines", () => {
    const lines = formatLevelSummary(rateLevel(), undefined).split("\n");
    assert.ok(
      lines.includes("    Send delay (tbench behind its schedule): p50 49 usec, p99 98 usec, max 99 usec"),
      lines.join("\n"),
    );
  });

  it("--json: the figures and a lossless histogram; merge adds the histograms", () => {
    const a = toResultJson([rateLevel()], {}, "test");
    assert.deepEqual(a.levels[0]?.sendDelay, { count: 100, p50Us: 49, p99Us: 98, maxUs: 99 });
    const reread = parseResultJson(JSON.stringify(a), "a.json");
    assert.equal(typeof reread.levels[0]?.histograms.sendDelayUs, "string");
    // The second run's delays are 1000..1099 us: of the 200 together, p50 is the first run's largest.
    const merged = mergeResults([reread, toResultJson([rateLevel(1000)], {}, "test")]);
    assert.deepEqual(merged.levels[0]?.sendDelay, { count: 200, p50Us: 99, p99Us: 1097, maxUs: 1099 });
  });

  it("results written before the figure existed still merge (no send delay there)", () => {
    const old = toResultJson([rateLevel()], {}, "test");
    for (const level of old.levels) {
      delete level.sendDelay;
      delete level.histograms.sendDelayUs;
    }
    const merged = mergeResults([parseResultJson(JSON.stringify(old), "old.json")]);
    assert.equal(merged.levels[0]?.sendDelay, null);
  });

  it("concurrency mode has none", () => {
    const recorder = createWindowRecorder({ keepRequests: false, trackUncorrected: false });
    recorder.recordSendDelay(5);
    assert.equal(recorder.swap().sendDelay, undefined);
  });

  it("the CSV keeps perf_analyzer's columns: no send delay column", () => {
    const csv = formatCsv([rateLevel()], {
      mode: "request_rate",
      percentile: undefined,
      verbose: false,
      includeServerStats: false,
      includeMetrics: false,
    });
    assert.ok(!/send delay/i.test(csv.split("\n")[0] ?? ""));
  });
});
