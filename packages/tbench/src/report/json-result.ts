import { z } from "zod";
import type { LevelResult, LevelStatus } from "../measure/level-profiler.js";
import type { HttpAverages, LatencySummary, SendDelaySummary } from "../measure/measurement.js";
import type { MetricsSummary } from "../measure/metrics-scraper.js";
import type { OverheadSummary } from "../measure/overhead-monitor.js";
import {
  type ServerLatencyBreakdown,
  type ServerSideStats,
  serverBreakdown,
} from "../measure/server-stats.js";
import { encodeHistogram } from "../stats/histogram.js";
import type { LatencyMoments } from "../stats/latency-stats.js";

/** Version of the `--json` format; bumped on incompatible changes. */
export const RESULT_FORMAT_VERSION = 1;

/** One level in a `--json` result. */
export interface LevelJson {
  mode: "concurrency" | "request_rate";
  value: number;
  status: LevelStatus;
  stable: boolean;
  durationMs: number;
  batchSize: number;
  requestCount: number;
  sentCount: number;
  errorCount: number;
  errorRate: number;
  errorsByKind: Record<string, number>;
  inferPerSec: number;
  /**
   * Sequence models: sequences whose END request completed in the level's windows (the summary's "Sequence
   * count"); null for other models (absent from results written before tbench ran sequences).
   */
  sequenceCount?: number | null;
  /** `sequenceCount` per second ("seq/sec"); null for other models. */
  sequencesPerSec?: number | null;
  latency: LatencySummary;
  uncorrectedLatency: LatencySummary | null;
  lateSendCount: number;
  maxSendLagUs: number;
  /** Rate mode: tbench's own lateness behind its send schedule (p50/p99/max, microseconds); else null. */
  sendDelay?: SendDelaySummary | null;
  /** HDR histograms (microseconds), compressed base64: lossless, what `tbench merge` adds. */
  histograms: { latencyUs: string; uncorrectedLatencyUs: string | null; sendDelayUs?: string | null };
  moments: { latency: LatencyMoments; uncorrected: LatencyMoments | null };
  server: ServerSideStats | null;
  serverBreakdown: ServerLatencyBreakdown | null;
  metrics: MetricsSummary | null;
  overhead: OverheadSummary | null;
  /** Client-library time per request (send, receive, whole request), microseconds. */
  http: HttpAverages | null;
  windows: {
    durationMs: number;
    inferPerSec: number;
    avgLatencyUs: number;
    p99LatencyUs: number;
    errorCount: number;
  }[];
  messages: string[];
}

/** A `--json` result file: the run's settings and every level measured. */
export interface ResultJson {
  tool: "tbench";
  format: number;
  version: string;
  createdAt: string;
  /** How many runs were merged into this one (1 for a plain run). */
  sources: number;
  run: Record<string, unknown>;
  levels: LevelJson[];
}

function momentsJson(m: LatencyMoments): LatencyMoments {
  // Infinity (empty) is not JSON; an empty minimum is written as 0.
  return { ...m, minUs: Number.isFinite(m.minUs) ? m.minUs : 0 };
}

/** Converts the measured levels into the `--json` document. */
export function toResultJson(
  results: readonly LevelResult[],
  run: Record<string, unknown>,
  version: string,
): ResultJson {
  const levels: LevelJson[] = [];
  for (const r of results) {
    const m = r.measurement;
    if (m === undefined) continue;
    levels.push({
      mode: r.level.mode,
      value: r.level.value,
      status: r.status,
      stable: r.stable,
      durationMs: m.durationMs,
      batchSize: m.batchSize,
      requestCount: m.requestCount,
      sentCount: m.sentCount,
      errorCount: m.errorCount,
      errorRate: m.errorRate,
      errorsByKind: m.errorsByKind,
      inferPerSec: m.inferPerSec,
      sequenceCount: m.sequenceCount ?? null,
      sequencesPerSec: m.sequencesPerSec ?? null,
      latency: m.latency,
      uncorrectedLatency: m.uncorrectedLatency ?? null,
      lateSendCount: m.lateSendCount,
      maxSendLagUs: m.maxSendLagUs,
      sendDelay: m.sendDelay ?? null,
      histograms: {
        latencyUs: encodeHistogram(m.histogram),
        uncorrectedLatencyUs:
          m.uncorrectedHistogram === undefined ? null : encodeHistogram(m.uncorrectedHistogram),
        sendDelayUs: m.sendDelayHistogram === undefined ? null : encodeHistogram(m.sendDelayHistogram),
      },
      moments: {
        latency: momentsJson(m.latencyMoments),
        uncorrected: m.uncorrectedMoments === undefined ? null : momentsJson(m.uncorrectedMoments),
      },
      server: m.server ?? null,
      serverBreakdown: m.server === undefined ? null : serverBreakdown(m.server),
      metrics: m.metrics ?? null,
      overhead: m.overhead,
      http: m.http ?? null,
      windows: r.windows.map((w) => ({
        durationMs: w.durationMs,
        inferPerSec: w.inferPerSec,
        avgLatencyUs: w.latency.avgUs,
        p99LatencyUs: w.latency.percentiles["99"] ?? 0,
        errorCount: w.errorCount,
      })),
      messages: r.messages,
    });
  }
  return {
    tool: "tbench",
    format: RESULT_FORMAT_VERSION,
    version,
    createdAt: new Date().toISOString(),
    sources: 1,
    run,
    levels,
  };
}

const momentsSchema = z.object({
  count: z.number(),
  sumUs: z.number(),
  sumSquaresUs2: z.number(),
  minUs: z.number(),
  maxUs: z.number(),
});
const latencySchema = z.object({
  avgUs: z.number(),
  stdUs: z.number(),
  minUs: z.number(),
  maxUs: z.number(),
  percentiles: z.record(z.string(), z.number()),
});
const levelSchema = z.looseObject({
  mode: z.enum(["concurrency", "request_rate"]),
  value: z.number(),
  status: z.string(),
  stable: z.boolean(),
  durationMs: z.number(),
  batchSize: z.number(),
  requestCount: z.number(),
  sentCount: z.number(),
  errorCount: z.number(),
  errorRate: z.number(),
  errorsByKind: z.record(z.string(), z.number()),
  inferPerSec: z.number(),
  latency: latencySchema,
  uncorrectedLatency: latencySchema.nullable(),
  lateSendCount: z.number(),
  maxSendLagUs: z.number(),
  histograms: z.object({
    latencyUs: z.string(),
    uncorrectedLatencyUs: z.string().nullable(),
    // Absent from results written before tbench measured its send delay.
    sendDelayUs: z.string().nullable().optional(),
  }),
  moments: z.object({ latency: momentsSchema, uncorrected: momentsSchema.nullable() }),
});
const resultSchema = z.looseObject({
  tool: z.literal("tbench"),
  format: z.literal(RESULT_FORMAT_VERSION),
  levels: z.array(levelSchema),
});

/** Parses and checks a `--json` result (from `compare`/`merge`); throws naming the file and the problem. */
export function parseResultJson(text: string, source: string): ResultJson {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new Error(`${source}: expected a tbench --json result, the file is not JSON`, { cause });
  }
  const parsed = resultSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join(".") ?? "";
    throw new Error(
      `${source}: expected a tbench --json result (format ${RESULT_FORMAT_VERSION}); ${path || "document"}: ${issue?.message}`,
    );
  }
  return parsed.data as unknown as ResultJson;
}
