/**
 * What the tune optimises and how candidates are ranked: a latency budget on one statistic, an optional
 * minimum throughput, and the goal (highest throughput within them, or lowest latency at the throughput).
 * Pure functions over `--json` levels, so the ranking is exactly what the result files say.
 */

import type { LevelJson } from "../report/json-result.js";
import { UsageError } from "../run/usage-error.js";

export const LATENCY_METRICS = ["avg", "p50", "p90", "p95", "p99"] as const;
export type LatencyMetric = (typeof LATENCY_METRICS)[number];

/** `--latency-budget p95:10ms`. */
export interface LatencyBudget {
  readonly metric: LatencyMetric;
  readonly ms: number;
}

export interface Objective {
  readonly goal: "throughput" | "latency";
  readonly budget: LatencyBudget | undefined;
  /** Inferences per second a level must reach to count. */
  readonly minThroughput: number | undefined;
}

/** `METRIC:VALUE[ms|us|s]`, e.g. `p95:10ms`, `avg:2.5ms`, `p99:800us`. */
export function parseLatencyBudget(text: string): LatencyBudget {
  const match = /^(avg|p50|p90|p95|p99):(\d+(?:\.\d+)?)(ms|us|s)?$/.exec(text.trim());
  const value = match === null ? Number.NaN : Number(match[2]);
  if (match === null || !(value > 0)) {
    throw new UsageError(
      `--latency-budget: expected METRIC:TIME with METRIC one of ${LATENCY_METRICS.join("|")} and a time > 0 ` +
        `(e.g. p95:10ms), got "${text}"`,
    );
  }
  const unit = match[3] ?? "ms";
  const ms = unit === "us" ? value / 1000 : unit === "s" ? value * 1000 : value;
  return { metric: match[1] as LatencyMetric, ms };
}

/** A duration for `--time-budget`: `90s`, `10m`, `1h`, `500ms`; a bare number is seconds. */
export function parseDurationMs(flag: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  const value = match === null ? Number.NaN : Number(match[1]);
  if (match === null || !(value > 0)) {
    throw new UsageError(`${flag}: expected a duration > 0 such as 90s, 10m or 1h, got "${text}"`);
  }
  const scale = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? "s"] ?? 1000;
  return value * scale;
}

/** The percentile tbench stabilises on and prunes with for a metric (`--percentile`); none for avg. */
export function metricPercentile(metric: LatencyMetric): number | undefined {
  return metric === "avg" ? undefined : Number(metric.slice(1));
}

/** A level's latency for a metric, microseconds. */
export function levelLatencyUs(level: LevelJson, metric: LatencyMetric): number {
  if (metric === "avg") return level.latency.avgUs;
  return level.latency.percentiles[metric.slice(1)] ?? level.latency.avgUs;
}

/** Whether a level was measured cleanly enough to be chosen: no failures, no interruption. */
function usable(level: LevelJson): boolean {
  return (level.status === "ok" || level.status === "unstable") && level.requestCount > 0;
}

/** Whether a level has figures to compare: usable, or stopped over the budget (the sweep's threshold). */
function measured(level: LevelJson): boolean {
  return usable(level) || (level.status === "latency_threshold" && level.requestCount > 0);
}

/**
 * Whether a level meets the objective: usable, under the budget (strictly, as the sweep's threshold stops
 * at a latency >= the limit) and at or above the minimum throughput.
 */
export function meetsObjective(level: LevelJson, objective: Objective): boolean {
  if (!usable(level)) return false;
  const { budget, minThroughput } = objective;
  if (budget !== undefined && levelLatencyUs(level, budget.metric) / 1000 >= budget.ms) return false;
  if (minThroughput !== undefined && level.inferPerSec < minThroughput) return false;
  return true;
}

/** The metric the latency goal minimises: the budget's, else p95. */
export function goalMetric(objective: Objective): LatencyMetric {
  return objective.budget?.metric ?? "p95";
}

/** Whether `a` is a better level than `b` for the goal (ties go to the other figure). */
export function betterLevel(a: LevelJson, b: LevelJson, objective: Objective): boolean {
  const metric = goalMetric(objective);
  const latency = (l: LevelJson) => levelLatencyUs(l, metric);
  if (objective.goal === "throughput") {
    return a.inferPerSec !== b.inferPerSec ? a.inferPerSec > b.inferPerSec : latency(a) < latency(b);
  }
  return latency(a) !== latency(b) ? latency(a) < latency(b) : a.inferPerSec > b.inferPerSec;
}

/** The best level meeting the objective, or undefined when none does. */
export function bestLevel(levels: readonly LevelJson[], objective: Objective): LevelJson | undefined {
  let best: LevelJson | undefined;
  for (const level of levels) {
    if (!meetsObjective(level, objective)) continue;
    if (best === undefined || betterLevel(level, best, objective)) best = level;
  }
  return best;
}

/**
 * How far a level is from meeting the objective: the largest of latency / budget and min throughput /
 * throughput (1 or less meets both). Used to show the closest level when nothing meets the objective.
 */
export function shortfall(level: LevelJson, objective: Objective): number {
  if (!measured(level)) return Number.POSITIVE_INFINITY;
  let worst = 0;
  const { budget, minThroughput } = objective;
  if (budget !== undefined) worst = Math.max(worst, levelLatencyUs(level, budget.metric) / 1000 / budget.ms);
  if (minThroughput !== undefined) {
    worst = Math.max(worst, level.inferPerSec > 0 ? minThroughput / level.inferPerSec : Number.MAX_VALUE);
  }
  return worst;
}

/** The level closest to meeting the objective (smallest shortfall), or undefined when none is usable. */
export function closestLevel(levels: readonly LevelJson[], objective: Objective): LevelJson | undefined {
  let closest: LevelJson | undefined;
  for (const level of levels) {
    if (!Number.isFinite(shortfall(level, objective))) continue;
    if (closest === undefined || shortfall(level, objective) < shortfall(closest, objective)) closest = level;
  }
  return closest;
}

/** How much more throughput a larger instance count must bring for the tune to try the next one. */
export const MIN_INSTANCE_GAIN = 0.05;

/**
 * Pruning of the instance-count dimension: once a count's best throughput is no more than 5% above the
 * best of the count before it, or meets nothing where the count before it did, larger counts of the same
 * group are skipped. While no count meets the objective, more instances may still get there: go on.
 */
export function stopsGrowing(previousBest: number | undefined, best: number | undefined): boolean {
  if (previousBest === undefined) return false;
  if (best === undefined) return true;
  return best <= previousBest * (1 + MIN_INSTANCE_GAIN);
}
