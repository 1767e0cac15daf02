import { nowMs } from "../load/clock.js";
import type { LoadDriver, LoadLevel } from "../load/load-driver.js";
import type { MeasuredWindow, Measurement } from "./measurement.js";
import { stabilizingLatencyUs, summarizeWindows } from "./measurement.js";
import type { MetricsScraper } from "./metrics-scraper.js";
import type { OverheadMonitor } from "./overhead-monitor.js";
import { diffServerStats, type ModelTree, type StatsSnapshot } from "./server-stats.js";
import { anyOverThreshold, isStable, STABILITY_WINDOW_COUNT, type StabilitySample } from "./stability.js";

/** How a level ended. Only `latency_threshold` (and `interrupted`) stop a sweep by themselves. */
export type LevelStatus = "ok" | "unstable" | "error_rate" | "latency_threshold" | "no_data" | "interrupted";

/** The outcome of measuring one level. */
export interface LevelResult {
  level: LoadLevel;
  status: LevelStatus;
  stable: boolean;
  /** The merged stable windows (or the last windows measured when stability was not reached). */
  measurement: Measurement | undefined;
  /** Every window, summarized on its own. */
  windows: Measurement[];
  /** Lines for stderr, perf_analyzer's wording where it has one. */
  messages: string[];
}

/** Progress of the window being measured, for the live progress line. */
export interface WindowProgress {
  level: LoadLevel;
  window: number;
  completed: number;
  elapsedMs: number;
}

/** Options of {@link createLevelProfiler}. */
export interface LevelProfilerOptions {
  driver: LoadDriver;
  /** Reads the server's statistics; `undefined` when the server has none (no server-side breakdown). */
  readStats: (() => Promise<StatsSnapshot>) | undefined;
  modelTree: ModelTree;
  scraper: MetricsScraper | undefined;
  overhead: OverheadMonitor;
  measurementMode: "time_windows" | "count_windows";
  measurementIntervalMs: number;
  measurementRequestCount: number;
  /** `--request-count`: measure exactly this many requests in one window (0: windows until stable). */
  requestCount: number;
  stabilityPercent: number;
  maxTrials: number;
  /**
   * perf_analyzer's async mode (`--async`; tbench's request-rate mode without `--sync`): when the windows run
   * out with throughput stable but latency not, the level is accepted with a warning.
   */
  asyncMode: boolean;
  /** `--percentile`, or `undefined` to stabilize on the average latency. */
  percentile: number | undefined;
  /** Percentiles to report (50, 90, 95, 99, 99.9 and `--percentile`). */
  percentiles: number[];
  latencyThresholdMs: number;
  maxErrorRate: number;
  batchSize: number;
  signal: AbortSignal;
  onProgress?: (progress: WindowProgress) => void;
  /** Called after each window (verbose "Pass [n]" lines). */
  onWindow?: (level: LoadLevel, index: number, window: Measurement) => void;
  /** The clock windows are timed with; tests pass a fake one. Default: the real clock and timers. */
  clock?: ProfilerClock;
}

/** What the profiler reads the time from and waits with. */
export interface ProfilerClock {
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves after `ms` milliseconds, or at once when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** Measures levels one after the other against a running load driver. */
export interface LevelProfiler {
  profile(level: LoadLevel): Promise<LevelResult>;
}

/** Count windows last at least this long (perf_analyzer's rule). */
const COUNT_WINDOW_MIN_MS = 1000;
const POLL_MS = 20;
const PROGRESS_MS = 250;

/** perf_analyzer's words when it accepts a level whose throughput is stable but whose latency is not. */
export const LATENCY_NOT_STABILIZING_WARNING =
  "Warning: Request latency is not stabilizing. Please try lowering the request rate.";

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Creates a profiler following perf_analyzer's measurement loop (windows until 3 agree, at most -r). */
export function createLevelProfiler(options: LevelProfilerOptions): LevelProfiler {
  const { driver, signal } = options;
  const clock = options.clock ?? { now: nowMs, sleep };

  async function waitForWindow(level: LoadLevel, index: number, startMs: number): Promise<void> {
    let lastProgress = 0;
    const target =
      options.requestCount > 0
        ? options.requestCount
        : options.measurementMode === "count_windows"
          ? options.measurementRequestCount
          : 0;
    const minMs =
      options.requestCount > 0 ? 0 : options.measurementMode === "count_windows" ? COUNT_WINDOW_MIN_MS : 0;
    while (!signal.aborted) {
      const elapsedMs = clock.now() - startMs;
      const completed = driver.completedCount();
      if (target === 0 && elapsedMs >= options.measurementIntervalMs) return;
      if (target > 0 && completed >= target && elapsedMs >= minMs) return;
      if (options.onProgress !== undefined && elapsedMs - lastProgress >= PROGRESS_MS) {
        lastProgress = elapsedMs;
        options.onProgress({ level, window: index, completed, elapsedMs });
      }
      const remaining = target === 0 ? options.measurementIntervalMs - elapsedMs : POLL_MS;
      await clock.sleep(
        Math.max(1, Math.min(remaining, PROGRESS_MS, target === 0 ? PROGRESS_MS : POLL_MS)),
        signal,
      );
    }
  }

  async function readStats(): Promise<StatsSnapshot | undefined> {
    if (options.readStats === undefined) return undefined;
    try {
      return await options.readStats();
    } catch {
      return undefined;
    }
  }

  return {
    async profile(level) {
      const messages: string[] = [];
      await driver.setBudget(options.requestCount > 0 ? options.requestCount : Number.POSITIVE_INFINITY);
      await driver.apply(level);
      // Start clean: whatever completed before this level's first window belongs to no window.
      // The statistics call leaves in the same tick as the swap, so both ends start the window together.
      const firstStats = readStats();
      await driver.collect();
      let windowStart = clock.now();
      let statsBefore = await firstStats;
      options.scraper?.take();
      options.overhead.begin();
      const windows: MeasuredWindow[] = [];
      const summaries: Measurement[] = [];
      const samples: StabilitySample[] = [];
      const trials = options.requestCount > 0 ? 1 : options.maxTrials;
      let stable = options.requestCount > 0;
      let overThreshold = false;

      for (let trial = 0; trial < trials && !signal.aborted; trial++) {
        await waitForWindow(level, trial + 1, windowStart);
        const statsPromise = readStats();
        const part = await driver.collect();
        const windowEnd = clock.now();
        const overhead = options.overhead.end();
        options.overhead.begin();
        const statsAfter = await statsPromise;
        const server =
          statsBefore !== undefined && statsAfter !== undefined
            ? diffServerStats(statsBefore, statsAfter, options.modelTree)
            : undefined;
        const window: MeasuredWindow = {
          startMs: windowStart,
          endMs: windowEnd,
          part,
          server,
          metrics: options.scraper?.take(),
          overhead,
        };
        statsBefore = statsAfter;
        windowStart = windowEnd;
        if (signal.aborted && part.successCount + part.errorCount === 0) break;
        windows.push(window);
        const summary = summarizeWindows([window], options.batchSize, options.percentiles);
        summaries.push(summary);
        options.onWindow?.(level, trial + 1, summary);
        samples.push({
          inferPerSec: summary.inferPerSec,
          // perf_analyzer records a failed window as 0 infer/s and the largest latency there is.
          latencyUs:
            summary.requestCount === 0
              ? Number.POSITIVE_INFINITY
              : stabilizingLatencyUs(summary, options.percentile),
        });
        if (options.requestCount > 0) break;
        if (isStable(samples, options.stabilityPercent)) {
          stable = true;
          break;
        }
        if (anyOverThreshold(samples, options.latencyThresholdMs)) {
          overThreshold = true;
          break;
        }
      }
      // perf_analyzer (ProfileHelper): in async mode, once the windows are done (all -r of them, or stopped
      // by the latency threshold), a level whose last 3 throughputs are stable is accepted with a warning.
      if (!stable && options.asyncMode && isStable(samples, options.stabilityPercent, false)) {
        stable = true;
        messages.push(LATENCY_NOT_STABILIZING_WARNING);
      }

      const merged =
        windows.length === 0
          ? undefined
          : summarizeWindows(windows.slice(-STABILITY_WINDOW_COUNT), options.batchSize, options.percentiles);
      let status: LevelStatus = "ok";
      if (merged === undefined || merged.requestCount + merged.errorCount === 0) {
        status = signal.aborted ? "interrupted" : "no_data";
        messages.push("No valid requests recorded within time interval. Please use a larger time window.");
      } else if (merged.errorRate > options.maxErrorRate) {
        status = "error_rate";
        const kinds = Object.entries(merged.errorsByKind)
          .map(([kind, n]) => `${kind}: ${n}`)
          .join(", ");
        messages.push(
          `Error rate ${(merged.errorRate * 100).toFixed(2)}% is over --max-error-rate ` +
            `${(options.maxErrorRate * 100).toFixed(2)}% (${kinds}).`,
        );
      }
      if (merged !== undefined && status === "ok") {
        const latencyMs = stabilizingLatencyUs(merged, options.percentile) / 1000;
        const mergedOver = options.latencyThresholdMs > 0 && latencyMs >= options.latencyThresholdMs;
        // A stable level is judged by its merged latency alone, as perf_analyzer judges it, even when one
        // of its windows went over; an unstable one that stopped early on the threshold is over it.
        if (mergedOver || (!stable && overThreshold)) {
          status = "latency_threshold";
          messages.push(`Measured latency went over the set limit of ${options.latencyThresholdMs} msec. `);
        } else if (signal.aborted) {
          status = "interrupted";
        } else if (!stable) {
          status = "unstable";
          const flag =
            options.measurementMode === "count_windows"
              ? "--measurement-request-count"
              : "--measurement-interval";
          messages.push(
            level.mode === "concurrency"
              ? `Failed to obtain stable measurement within ${options.maxTrials} measurement windows for ` +
                  `concurrency ${level.value}. Please try to increase the ${flag}.`
              : "Failed to obtain stable measurement.",
          );
        }
      }
      if (merged?.overhead.warning !== undefined) messages.push(`Warning: ${merged.overhead.warning}`);
      return { level, status, stable, measurement: merged, windows: summaries, messages };
    },
  };
}
