import type { ResultJson } from "./json-result.js";

/** Server-side time per request at one level (averages, microseconds), as Triton's statistics give it. */
export interface ChartBreakdown {
  queueUs: number;
  computeInputUs: number;
  computeInferUs: number;
  computeOutputUs: number;
}

/** One measured level as the charts draw it. */
export interface ChartPoint {
  /** Concurrency or request rate. */
  level: number;
  inferPerSec: number;
  /** Client-side latency percentiles, microseconds, keyed "50", "90", "95", "99" (those measured). */
  latencyUs: Record<string, number>;
  breakdown: ChartBreakdown | null;
}

/** One run (one result file, e.g. batching on or off): its label and its levels in sweep order. */
export interface ChartRun {
  label: string;
  mode: "concurrency" | "request_rate";
  points: ChartPoint[];
}

/** The percentiles charted when the result has them, in this order. */
export const CHART_PERCENTILES = ["50", "90", "95", "99"] as const;

/**
 * A result's levels as a chart run. Levels that measured nothing (every request failed) are left out: a
 * point at zero throughput and zero latency would draw a line that never happened.
 */
export function chartRunFromResult(result: ResultJson, label: string): ChartRun {
  const points: ChartPoint[] = [];
  for (const level of result.levels) {
    if (level.requestCount <= 0) continue;
    const latencyUs: Record<string, number> = {};
    for (const p of CHART_PERCENTILES) {
      const v = level.latency.percentiles[p];
      if (v !== undefined) latencyUs[p] = v;
    }
    const b = level.serverBreakdown ?? null;
    points.push({
      level: level.value,
      inferPerSec: level.inferPerSec,
      latencyUs,
      breakdown:
        b === null
          ? null
          : {
              queueUs: b.queueUs,
              computeInputUs: b.computeInputUs,
              computeInferUs: b.computeInferUs,
              computeOutputUs: b.computeOutputUs,
            },
    });
  }
  const mode =
    result.levels[0]?.mode ?? (result.run["mode"] === "request_rate" ? "request_rate" : "concurrency");
  return { label, mode, points };
}

/** The latency a run's throughput curve is drawn against: p99 when measured, else the highest there is. */
export function curveLatencyUs(point: ChartPoint): number {
  const p99 = point.latencyUs["99"];
  if (p99 !== undefined) return p99;
  const values = Object.values(point.latencyUs);
  return values.length === 0 ? 0 : Math.max(...values);
}

/** A round upper bound for an axis: the data's maximum rounded up to 1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 x 10^n. */
export function niceCeiling(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) {
    if (step * power >= max) return step * power;
  }
  return 10 * power;
}
