import { mergeWindowParts } from "../load/window-part.js";
import type { RequestRecord, WindowPart } from "../load/window-recorder.js";
import { type LatencyHistogram, type PercentileMap, readPercentiles } from "../stats/histogram.js";
import { averageUs, type LatencyMoments, standardDeviationUs } from "../stats/latency-stats.js";
import type { MetricsSummary } from "./metrics-scraper.js";
import type { OverheadSummary } from "./overhead-monitor.js";
import { addServerStats, type ServerSideStats } from "./server-stats.js";

/** One measurement window as it was taken. */
export interface MeasuredWindow {
  startMs: number;
  endMs: number;
  part: WindowPart;
  server: ServerSideStats | undefined;
  metrics: MetricsSummary | undefined;
  overhead: OverheadSummary;
}

/** Latency figures in microseconds. */
export interface LatencySummary {
  avgUs: number;
  stdUs: number;
  minUs: number;
  maxUs: number;
  /** Keyed by percentile: 50, 90, 95, 99, 99.9 and any `--percentile`. */
  percentiles: PercentileMap;
}

/** What tbench reports for a level: one window, or the merged stable windows. */
export interface Measurement {
  durationMs: number;
  batchSize: number;
  /** Successful requests. */
  requestCount: number;
  sentCount: number;
  errorCount: number;
  /** errors / (successes + errors), 0..1. */
  errorRate: number;
  errorsByKind: Record<string, number>;
  /** Successful inferences per second (requests x batch size). */
  inferPerSec: number;
  /**
   * Sequence models: sequences whose END request completed (successfully) in the windows, perf_analyzer's
   * "Sequence count"; `undefined` for other models.
   */
  sequenceCount: number | undefined;
  /** `sequenceCount` per second of the windows ("seq/sec"); `undefined` for other models. */
  sequencesPerSec: number | undefined;
  /** Latency from the due time (rate mode) or the send (concurrency mode). */
  latency: LatencySummary;
  /** Rate mode: latency from the actual send, which hides coordinated omission. */
  uncorrectedLatency: LatencySummary | undefined;
  lateSendCount: number;
  maxSendLagUs: number;
  /** Rate mode: the generator's own lateness behind the schedule (see {@link SendDelaySummary}). */
  sendDelay: SendDelaySummary | undefined;
  sendDelayHistogram: LatencyHistogram | undefined;
  histogram: LatencyHistogram;
  uncorrectedHistogram: LatencyHistogram | undefined;
  /** Exact sums behind the average and deviation (kept so results merge without loss). */
  latencyMoments: LatencyMoments;
  uncorrectedMoments: LatencyMoments | undefined;
  server: ServerSideStats | undefined;
  metrics: MetricsSummary | undefined;
  overhead: OverheadSummary;
  /** Window start times then the last end, epoch ms (perf_analyzer's `window_boundaries`). */
  windowBoundariesMs: number[];
  requests: RequestRecord[] | undefined;
  /** Averages of the client library's time per request (undefined when not observed). */
  http: HttpAverages | undefined;
}

/**
 * How late tbench's own sends left in rate mode, microseconds: behind their due time, or behind the moment a
 * `--sync` slot freed up when they had to wait for one (that wait is the server's and stays in the latency).
 */
export interface SendDelaySummary {
  /** Sends measured. */
  count: number;
  p50Us: number;
  p99Us: number;
  maxUs: number;
}

/** The send delay figures of a histogram of delays (microseconds). */
export function sendDelaySummary(histogram: LatencyHistogram): SendDelaySummary {
  const empty = histogram.totalCount === 0;
  return {
    count: histogram.totalCount,
    p50Us: empty ? 0 : histogram.getValueAtPercentile(50),
    p99Us: empty ? 0 : histogram.getValueAtPercentile(99),
    maxUs: empty ? 0 : histogram.maxValue,
  };
}

/** perf_analyzer's client-library split of a request, microseconds. */
export interface HttpAverages {
  /** Requests timed: a sample of the level's requests (see `load/http-timing.ts`), not all of them. */
  count: number;
  sendUs: number;
  recvUs: number;
  requestUs: number;
}

/** Metrics of several windows: averages weighted by scrapes, maxima kept, counts added. */
function mergeMetrics(all: readonly MetricsSummary[]): MetricsSummary | undefined {
  if (all.length === 0) return undefined;
  const scrapes = all.reduce((t, m) => t + m.scrapeCount, 0);
  const weight = (m: MetricsSummary) => (scrapes === 0 ? 1 / all.length : m.scrapeCount / scrapes);
  const gpus: MetricsSummary["gpus"] = {};
  for (const m of all) {
    for (const [uuid, g] of Object.entries(m.gpus)) {
      const acc = gpus[uuid] ?? {
        avgUtilizationPercent: 0,
        avgPowerWatts: 0,
        maxMemoryUsedBytes: 0,
        totalMemoryBytes: 0,
      };
      acc.avgUtilizationPercent += g.avgUtilizationPercent * weight(m);
      acc.avgPowerWatts += g.avgPowerWatts * weight(m);
      acc.maxMemoryUsedBytes = Math.max(acc.maxMemoryUsedBytes, g.maxMemoryUsedBytes);
      acc.totalMemoryBytes = Math.max(acc.totalMemoryBytes, g.totalMemoryBytes);
      gpus[uuid] = acc;
    }
  }
  return {
    scrapeCount: scrapes,
    failedScrapeCount: all.reduce((t, m) => t + m.failedScrapeCount, 0),
    gpus,
    avgPendingRequests: all.reduce((t, m) => t + m.avgPendingRequests * weight(m), 0),
  };
}

/** Latency figures from a histogram (percentiles) and exact moments (average, deviation, min, max). */
export function latencySummary(
  histogram: LatencyHistogram,
  moments: LatencyMoments,
  percentiles: number[],
): LatencySummary {
  return {
    avgUs: averageUs(moments),
    stdUs: standardDeviationUs(moments),
    minUs: moments.count === 0 ? 0 : moments.minUs,
    maxUs: moments.maxUs,
    percentiles: readPercentiles(histogram, percentiles),
  };
}

/** The latency a window is judged by for stability and the threshold: the average, or `--percentile`. */
export function stabilizingLatencyUs(measurement: Measurement, percentile: number | undefined): number {
  return percentile === undefined
    ? measurement.latency.avgUs
    : (measurement.latency.percentiles[String(percentile)] ?? measurement.latency.avgUs);
}

/** Summarizes consecutive windows into one measurement (all of them merged: counts, histograms, stats). */
export function summarizeWindows(
  windows: readonly MeasuredWindow[],
  batchSize: number,
  percentiles: number[],
): Measurement {
  const first = windows[0];
  const last = windows[windows.length - 1];
  if (first === undefined || last === undefined)
    throw new Error("summarizeWindows needs at least one window");
  const part = mergeWindowParts(windows.map((w) => w.part));
  const durationMs = windows.reduce((total, w) => total + (w.endMs - w.startMs), 0);
  const completed = part.successCount + part.errorCount;
  const servers = windows.map((w) => w.server).filter((s) => s !== undefined);
  const cpu = windows.reduce((total, w) => total + w.overhead.cpuPercent, 0) / windows.length;
  const warnings = windows.map((w) => w.overhead.warning).filter((w) => w !== undefined);
  return {
    durationMs,
    batchSize,
    requestCount: part.successCount,
    sentCount: part.sentCount,
    errorCount: part.errorCount,
    errorRate: completed === 0 ? 0 : part.errorCount / completed,
    errorsByKind: part.errorsByKind,
    inferPerSec: durationMs > 0 ? (part.successCount * batchSize * 1000) / durationMs : 0,
    sequenceCount: part.sequenceEndCount,
    sequencesPerSec:
      part.sequenceEndCount === undefined
        ? undefined
        : durationMs > 0
          ? (part.sequenceEndCount * 1000) / durationMs
          : 0,
    latency: latencySummary(part.latency, part.latencyMoments, percentiles),
    uncorrectedLatency:
      part.uncorrected === undefined || part.uncorrectedMoments === undefined
        ? undefined
        : latencySummary(part.uncorrected, part.uncorrectedMoments, percentiles),
    lateSendCount: part.lateSendCount,
    maxSendLagUs: part.maxSendLagUs,
    sendDelay: part.sendDelay === undefined ? undefined : sendDelaySummary(part.sendDelay),
    sendDelayHistogram: part.sendDelay,
    histogram: part.latency,
    uncorrectedHistogram: part.uncorrected,
    latencyMoments: part.latencyMoments,
    uncorrectedMoments: part.uncorrectedMoments,
    server: servers.length === windows.length ? addServerStats(servers) : undefined,
    metrics: mergeMetrics(windows.map((w) => w.metrics).filter((m) => m !== undefined)),
    overhead: {
      cpuPercent: cpu,
      eventLoopDelayP99Ms: Math.max(...windows.map((w) => w.overhead.eventLoopDelayP99Ms)),
      warning: warnings[warnings.length - 1],
    },
    windowBoundariesMs: [...windows.map((w) => w.startMs), last.endMs],
    requests: part.requests,
    http:
      part.http.count === 0
        ? undefined
        : {
            count: part.http.count,
            sendUs: part.http.sendNs / part.http.count / 1000,
            recvUs: part.http.recvNs / part.http.count / 1000,
            requestUs: part.http.requestNs / part.http.count / 1000,
          },
  };
}
