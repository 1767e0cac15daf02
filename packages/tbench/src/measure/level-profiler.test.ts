import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { LoadDriver, LoadLevel } from "../load/load-driver.js";
import { createWindowRecorder, type WindowPart } from "../load/window-recorder.js";
import {
  createLevelProfiler,
  LATENCY_NOT_STABILIZING_WARNING,
  type LevelProfilerOptions,
  type LevelResult,
} from "./level-profiler.js";

/**
 * One scripted window: this many successful requests (per 1 s window: infer/s) of this latency, of which the
 * last `slow` took `slowUs` instead.
 */
interface WindowScript {
  requests: number;
  latencyUs: number;
  slow?: number;
  slowUs?: number;
}
const win = (requests: number, latencyUs = 1000): WindowScript => ({ requests, latencyUs });

function part(script: WindowScript): WindowPart {
  const recorder = createWindowRecorder({ keepRequests: false, trackUncorrected: false });
  const slow = script.slow ?? 0;
  for (let i = 0; i < script.requests; i++) {
    recorder.recordSent(0, false);
    const latencyUs = i >= script.requests - slow ? (script.slowUs ?? 0) : script.latencyUs;
    recorder.recordSuccess(0, 0, latencyUs / 1000);
  }
  return recorder.swap();
}

/**
 * A load driver that hands out scripted windows. The profiler's first collect() after apply() starts the
 * level clean and gets an empty part; every later one takes the next scripted window, and asking for more
 * windows than scripted fails the test.
 */
function createScriptedDriver(windows: readonly WindowScript[]) {
  const queue = [...windows];
  const applied: LoadLevel[] = [];
  const budgets: number[] = [];
  let fresh = false;
  let measured = 0;
  const driver: LoadDriver = {
    async apply(level) {
      applied.push(level);
      fresh = true;
    },
    async setBudget(requests) {
      budgets.push(requests);
    },
    async collect() {
      if (fresh) {
        fresh = false;
        return part(win(0));
      }
      const next = queue.shift();
      assert.ok(
        next !== undefined,
        `the profiler asked for window ${measured + 1}; the script has ${windows.length}`,
      );
      measured += 1;
      return part(next);
    },
    // Count windows end on completed requests: the window being measured has completed all of its own.
    completedCount: () => (fresh ? 0 : (queue[0]?.requests ?? 0)),
    async stop() {},
    async close() {},
  };
  return { driver, applied, budgets, measuredCount: () => measured };
}

/** A clock whose sleeps pass at once: every time window lasts exactly measurementIntervalMs. */
function createFakeClock() {
  let now = 1_700_000_000_000;
  return {
    now: () => now,
    async sleep(ms: number) {
      now += ms;
    },
  };
}

const overhead = {
  begin() {},
  end: () => ({ cpuPercent: 0, eventLoopDelayP99Ms: 0, warning: undefined }),
  close() {},
};

async function profile(
  windows: readonly WindowScript[],
  settings: Partial<LevelProfilerOptions> = {},
  level: LoadLevel = { mode: "concurrency", value: 4 },
): Promise<LevelResult & { measuredCount: number; budgets: number[] }> {
  const scripted = createScriptedDriver(windows);
  const profiler = createLevelProfiler({
    driver: scripted.driver,
    readStats: undefined,
    modelTree: { name: "m", version: "", composing: [] },
    scraper: undefined,
    overhead,
    measurementMode: "time_windows",
    measurementIntervalMs: 1000,
    measurementRequestCount: 50,
    requestCount: 0,
    stabilityPercent: 10,
    maxTrials: 10,
    asyncMode: false,
    percentile: undefined,
    percentiles: [50, 90, 95, 99, 99.9],
    latencyThresholdMs: 0,
    maxErrorRate: 0,
    batchSize: 1,
    signal: new AbortController().signal,
    clock: createFakeClock(),
    ...settings,
  });
  const result = await profiler.profile(level);
  assert.deepEqual(scripted.applied, [level]);
  return { ...result, measuredCount: scripted.measuredCount(), budgets: scripted.budgets };
}

const unstableMessage = (windows: number) =>
  `Failed to obtain stable measurement within ${windows} measurement windows for concurrency 4. ` +
  "Please try to increase the --measurement-interval.";

describe("level profiler: when a level is accepted", () => {
  it("accepts after 3 agreeing windows and reports them merged", async () => {
    const r = await profile([win(100), win(100), win(100)]);
    assert.deepEqual([r.measuredCount, r.status, r.stable], [3, "ok", true]);
    assert.equal(r.measurement?.requestCount, 300);
    assert.equal(r.measurement?.inferPerSec, 100);
    assert.equal(r.measurement?.latency.avgUs, 1000);
    assert.deepEqual(r.budgets, [Number.POSITIVE_INFINITY]);
    assert.deepEqual(r.messages, []);
  });

  it("keeps measuring until the last 3 agree, then merges only those 3", async () => {
    const r = await profile([win(100), win(50), win(100), win(100), win(100)]);
    assert.deepEqual([r.measuredCount, r.status, r.windows.length], [5, "ok", 5]);
    assert.equal(r.measurement?.requestCount, 300);
  });

  it("throughput max / min of exactly 1.1 is accepted; just above it is not", async () => {
    assert.equal((await profile([win(100), win(105), win(110)])).measuredCount, 3);
    const r = await profile([win(100), win(105), win(111), win(110)]);
    // Windows 2-4: 105, 111, 110 -> 111 / 105 < 1.1.
    assert.deepEqual([r.measuredCount, r.status], [4, "ok"]);
  });

  it("does not accept what +/- 10% around the mean accepted: 90, 100, 110", async () => {
    const r = await profile([win(90), win(100), win(110), win(110)]);
    assert.deepEqual([r.measuredCount, r.status], [4, "ok"]);
  });

  it("latency must agree as well: max / min 1.1 accepted, 1101 / 1000 not", async () => {
    assert.equal((await profile([win(100, 1000), win(100, 1050), win(100, 1100)])).measuredCount, 3);
    const r = await profile([win(100, 1000), win(100, 1050), win(100, 1101), win(100, 1050)]);
    assert.deepEqual([r.measuredCount, r.status], [4, "ok"]);
  });

  it("stabilizes on --percentile instead of the average when one is given", async () => {
    // 100 requests a window, 4 or 6 of them at 3 ms: averages 1080 and 1120 us (within 1.1), p95 1 and 3 ms.
    const a: WindowScript = { requests: 100, latencyUs: 1000, slow: 4, slowUs: 3000 };
    const b: WindowScript = { requests: 100, latencyUs: 1000, slow: 6, slowUs: 3000 };
    assert.equal((await profile([a, b, a])).measuredCount, 3);
    const byP95 = await profile([a, b, a, a, a], { percentile: 95 });
    assert.deepEqual([byP95.measuredCount, byP95.status], [5, "ok"]);
  });

  it("--request-count: one window, accepted without a stability check", async () => {
    const r = await profile([win(7, 1000)], { requestCount: 7 });
    assert.deepEqual([r.measuredCount, r.status, r.stable], [1, "ok", true]);
    assert.deepEqual(r.budgets, [7]);
  });
});

describe("level profiler: when it gives up", () => {
  it("after -r windows without 3 agreeing: unstable, the last 3 merged", async () => {
    const r = await profile([win(100), win(50), win(100), win(50), win(100)], { maxTrials: 5 });
    assert.deepEqual([r.measuredCount, r.status, r.stable], [5, "unstable", false]);
    assert.equal(r.measurement?.requestCount, 250);
    assert.deepEqual(r.messages, [unstableMessage(5)]);
  });

  it("count windows name --measurement-request-count; request rates get perf_analyzer's short message", async () => {
    const flapping = [win(100), win(50), win(100)];
    const counted = await profile(flapping, { maxTrials: 3, measurementMode: "count_windows" });
    assert.equal(counted.messages[0]?.endsWith("--measurement-request-count."), true);
    const rate = await profile(flapping, { maxTrials: 3 }, { mode: "request_rate", value: 100 });
    assert.deepEqual(rate.messages, ["Failed to obtain stable measurement."]);
  });

  it("a window without a successful request is never stable", async () => {
    const r = await profile([win(100), win(0), win(100), win(100), win(100)]);
    assert.deepEqual([r.measuredCount, r.status], [5, "ok"]);
  });

  it("latency threshold: stops after 3 windows once any of the last 3 is at or over it", async () => {
    const r = await profile([win(100, 9000), win(100, 1000), win(100, 1000), win(100, 1000)], {
      latencyThresholdMs: 5,
    });
    assert.deepEqual([r.measuredCount, r.status, r.stable], [3, "latency_threshold", false]);
    assert.deepEqual(r.messages, ["Measured latency went over the set limit of 5 msec. "]);
  });

  it("latency threshold: a window with no successful request counts as over it", async () => {
    const r = await profile([win(100), win(0), win(100), win(100)], { latencyThresholdMs: 5 });
    assert.deepEqual([r.measuredCount, r.status], [3, "latency_threshold"]);
  });

  it("latency threshold: a stable level is judged by its merged latency, not by one window", async () => {
    const under = await profile([win(100, 4800), win(100, 4900), win(100, 5100)], { latencyThresholdMs: 5 });
    assert.deepEqual([under.measuredCount, under.status, under.stable], [3, "ok", true]);
    const over = await profile([win(100, 5000), win(100, 5100), win(100, 5200)], { latencyThresholdMs: 5 });
    assert.deepEqual([over.measuredCount, over.status, over.stable], [3, "latency_threshold", true]);
  });
});

describe("level profiler: async mode (perf_analyzer's 'Request latency is not stabilizing')", () => {
  const latencyFlaps = [win(100, 1000), win(100, 2000), win(100, 1000), win(100, 2000), win(100, 1000)];

  it("sync: throughput stable but latency not -> unstable after -r windows", async () => {
    const r = await profile(latencyFlaps, { maxTrials: 5 });
    assert.deepEqual([r.measuredCount, r.status, r.stable], [5, "unstable", false]);
  });

  it("async: the same windows are accepted with the warning, only after all -r windows", async () => {
    const r = await profile(latencyFlaps, { maxTrials: 5, asyncMode: true });
    assert.deepEqual([r.measuredCount, r.status, r.stable], [5, "ok", true]);
    assert.deepEqual(r.messages, [LATENCY_NOT_STABILIZING_WARNING]);
    assert.equal(r.measurement?.requestCount, 300);
  });

  it("async: throughput unstable too -> still unstable, no warning", async () => {
    const r = await profile([win(100), win(50), win(100)], { maxTrials: 3, asyncMode: true });
    assert.deepEqual([r.status, r.stable], ["unstable", false]);
    assert.deepEqual(r.messages, [unstableMessage(3)]);
  });

  it("async: after an early stop on the threshold, the merged latency decides", async () => {
    // Window 3 is over 5 ms: the loop stops; throughput is stable, so the level is accepted and judged by
    // its merged average, (1000 + 1000 + 6000) / 3 us, which is under the threshold.
    const r = await profile([win(100, 1000), win(100, 1000), win(100, 6000), win(100, 1000)], {
      latencyThresholdMs: 5,
      asyncMode: true,
    });
    assert.deepEqual([r.measuredCount, r.status, r.stable], [3, "ok", true]);
    assert.deepEqual(r.messages, [LATENCY_NOT_STABILIZING_WARNING]);
  });
});
