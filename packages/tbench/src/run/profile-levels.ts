// The measuring phase of a run, perf_analyzer's inference profiler: one level profiler over the running
// load (server statistics, --collect-metrics scrapes and tbench's own overhead read per window), driven
// through the sweep's levels. It owns what watches a window (the scraper, the overhead monitor, the live
// progress line) and hands each window and level to the console report as it ends.
import { createLevelProfiler, type LevelResult } from "../measure/level-profiler.js";
import { createMetricsScraper } from "../measure/metrics-scraper.js";
import { createOverheadMonitor } from "../measure/overhead-monitor.js";
import { runSweep } from "../measure/sweep.js";
import { createProgressLine } from "../report/progress-line.js";
import { STANDARD_PERCENTILES } from "../stats/histogram.js";
import type { BenchConfig } from "./bench-config.js";
import type { ConsoleReport } from "./console-report.js";
import type { PreparedRun } from "./prepare-run.js";
import type { RunIo } from "./run-io.js";

/** The percentiles every level reports: the standard ones and `--percentile`, ascending. */
function reportedPercentiles(percentile: number | undefined): number[] {
  const all = new Set([...STANDARD_PERCENTILES, ...(percentile !== undefined ? [percentile] : [])]);
  return [...all].sort((a, b) => a - b);
}

/** Measures the prepared run's levels, in sweep order, while its driver generates load. */
export async function profileLevels(
  run: PreparedRun,
  config: BenchConfig,
  io: RunIo,
  report: ConsoleReport,
): Promise<LevelResult[]> {
  const progress = createProgressLine(io.stderr, config.batchSize);
  const scraper = config.collectMetrics
    ? createMetricsScraper({
        url: config.metricsUrl,
        intervalMs: config.metricsIntervalMs,
        model: config.model,
      })
    : undefined;
  const overhead = createOverheadMonitor({ loadThreads: config.workers });
  try {
    scraper?.start();
    const profiler = createLevelProfiler({
      driver: run.driver,
      readStats: run.serverStats.read,
      modelTree: run.serverStats.tree,
      scraper,
      overhead,
      measurementMode: config.measurementMode,
      measurementIntervalMs: config.measurementIntervalMs,
      measurementRequestCount: config.measurementRequestCount,
      requestCount: config.requestCount,
      stabilityPercent: config.stabilityPercent,
      maxTrials: config.maxTrials,
      asyncMode: config.async,
      percentile: config.percentile,
      percentiles: reportedPercentiles(config.percentile),
      latencyThresholdMs: config.latencyThresholdMs,
      maxErrorRate: config.maxErrorRate,
      batchSize: config.batchSize,
      signal: io.signal,
      onProgress: (p) => progress.update(p),
      onWindow: (_level, index, window) => {
        // Pass lines are verbose output (-v); without them the progress line stays.
        if (config.verbosity === 0) return;
        progress.clear();
        report.window(index, window);
      },
    });
    return await runSweep({
      levels: run.levels,
      binarySearch: config.binarySearch,
      stopOnError: config.stopOnError,
      signal: io.signal,
      profile: async (level) => {
        report.levelStarts(level);
        io.onLevel?.(level);
        const result = await profiler.profile(level);
        progress.clear();
        report.levelEnds(result);
        return result;
      },
    });
  } finally {
    scraper?.close();
    overhead.close();
  }
}
