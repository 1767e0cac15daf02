import { latencySummary, sendDelaySummary } from "../measure/measurement.js";
import {
  decodeHistogram,
  encodeHistogram,
  mergeHistograms,
  STANDARD_PERCENTILES,
} from "../stats/histogram.js";
import { type LatencyMoments, mergeMoments } from "../stats/latency-stats.js";
import type { LevelJson, ResultJson } from "./json-result.js";

const STATUS_ORDER = ["ok", "unstable", "latency_threshold", "error_rate", "no_data", "interrupted"];

function restoreMoments(m: LatencyMoments): LatencyMoments {
  return m.count === 0 ? { ...m, minUs: Number.POSITIVE_INFINITY } : m;
}

/** Client-library averages of several runs, weighted by their request counts. */
function mergeHttp(levels: readonly LevelJson[]): LevelJson["http"] {
  const withHttp = levels.map((l) => l.http).filter((h) => h !== null && h !== undefined);
  const count = withHttp.reduce((t, h) => t + h.count, 0);
  if (count === 0) return null;
  const avg = (pick: (h: (typeof withHttp)[number]) => number) =>
    withHttp.reduce((t, h) => t + pick(h) * h.count, 0) / count;
  return {
    count,
    sendUs: avg((h) => h.sendUs),
    recvUs: avg((h) => h.recvUs),
    requestUs: avg((h) => h.requestUs),
  };
}

function mergeLevel(levels: readonly LevelJson[]): LevelJson {
  const first = levels[0]!;
  const histogram = mergeHistograms(levels.map((l) => decodeHistogram(l.histograms.latencyUs)));
  const moments = mergeMoments(levels.map((l) => restoreMoments(l.moments.latency)));
  const withUncorrected = levels.filter(
    (l) => l.histograms.uncorrectedLatencyUs !== null && l.moments.uncorrected,
  );
  const uncorrectedHistogram =
    withUncorrected.length === 0
      ? undefined
      : mergeHistograms(withUncorrected.map((l) => decodeHistogram(l.histograms.uncorrectedLatencyUs!)));
  const uncorrectedMoments =
    withUncorrected.length === 0
      ? undefined
      : mergeMoments(withUncorrected.map((l) => restoreMoments(l.moments.uncorrected!)));
  const sendDelays = levels
    .map((l) => l.histograms.sendDelayUs)
    .filter((h) => typeof h === "string")
    .map(decodeHistogram);
  const sendDelayHistogram = sendDelays.length === 0 ? undefined : mergeHistograms(sendDelays);
  const percentiles = [
    ...new Set([
      ...STANDARD_PERCENTILES,
      ...levels.flatMap((l) => Object.keys(l.latency.percentiles).map(Number)),
    ]),
  ].sort((a, b) => a - b);
  const errorsByKind: Record<string, number> = {};
  for (const level of levels) {
    for (const [kind, n] of Object.entries(level.errorsByKind))
      errorsByKind[kind] = (errorsByKind[kind] ?? 0) + n;
  }
  const requestCount = levels.reduce((t, l) => t + l.requestCount, 0);
  const errorCount = levels.reduce((t, l) => t + l.errorCount, 0);
  const status = levels
    .map((l) => l.status)
    .sort((a, b) => STATUS_ORDER.indexOf(b) - STATUS_ORDER.indexOf(a))[0]!;
  const summary = latencySummary(histogram, moments, percentiles);
  const sequenceLevels = levels.filter((l) => typeof l.sequenceCount === "number");
  return {
    ...first,
    status: status as LevelJson["status"],
    stable: levels.every((l) => l.stable),
    durationMs: Math.max(...levels.map((l) => l.durationMs)),
    requestCount,
    sentCount: levels.reduce((t, l) => t + l.sentCount, 0),
    errorCount,
    errorRate: requestCount + errorCount === 0 ? 0 : errorCount / (requestCount + errorCount),
    errorsByKind,
    // The runs loaded the server at the same time: their throughputs add up.
    inferPerSec: levels.reduce((t, l) => t + l.inferPerSec, 0),
    sequenceCount:
      sequenceLevels.length === 0 ? null : sequenceLevels.reduce((t, l) => t + (l.sequenceCount ?? 0), 0),
    sequencesPerSec:
      sequenceLevels.length === 0 ? null : sequenceLevels.reduce((t, l) => t + (l.sequencesPerSec ?? 0), 0),
    latency: summary,
    uncorrectedLatency:
      uncorrectedHistogram === undefined || uncorrectedMoments === undefined
        ? null
        : latencySummary(uncorrectedHistogram, uncorrectedMoments, percentiles),
    lateSendCount: levels.reduce((t, l) => t + l.lateSendCount, 0),
    maxSendLagUs: Math.max(...levels.map((l) => l.maxSendLagUs)),
    sendDelay: sendDelayHistogram === undefined ? null : sendDelaySummary(sendDelayHistogram),
    histograms: {
      latencyUs: encodeHistogram(histogram),
      uncorrectedLatencyUs: uncorrectedHistogram === undefined ? null : encodeHistogram(uncorrectedHistogram),
      sendDelayUs: sendDelayHistogram === undefined ? null : encodeHistogram(sendDelayHistogram),
    },
    moments: {
      latency: { ...moments, minUs: Number.isFinite(moments.minUs) ? moments.minUs : 0 },
      uncorrected: uncorrectedMoments ?? null,
    },
    http: mergeHttp(levels),
    windows: levels.flatMap((l) => l.windows ?? []),
    messages: levels.flatMap((l) => l.messages ?? []),
  };
}

/**
 * Combines results of runs that loaded the same server at the same time (several machines): per level
 * (mode and value), counts and throughputs add, HDR histograms add bucket by bucket (so percentiles are
 * exactly those of all requests together, at the histogram's precision), averages come from exact sums.
 * Server statistics are those of the first run (every run saw the same server).
 */
export function mergeResults(results: readonly ResultJson[]): ResultJson {
  const first = results[0];
  if (first === undefined) throw new Error("merge needs at least one result");
  const byLevel = new Map<string, LevelJson[]>();
  for (const result of results) {
    for (const level of result.levels) {
      const key = `${level.mode}:${level.value}`;
      const list = byLevel.get(key) ?? [];
      list.push(level);
      byLevel.set(key, list);
    }
  }
  return {
    ...first,
    createdAt: new Date().toISOString(),
    sources: results.reduce((t, r) => t + (r.sources ?? 1), 0),
    levels: [...byLevel.values()].map(mergeLevel),
  };
}
