import Table from "cli-table3";
import type { LevelJson, ResultJson } from "./json-result.js";

/** A metric `tbench compare` can gate on. */
export type CompareMetric = "throughput" | "avg" | "p50" | "p90" | "p95" | "p99" | "p99.9" | "error_rate";

/** Metrics accepted by `--metric`. */
export const COMPARE_METRICS: readonly CompareMetric[] = [
  "throughput",
  "avg",
  "p50",
  "p90",
  "p95",
  "p99",
  "p99.9",
  "error_rate",
];

/** The gate: candidate / baseline at least `minRatio`, or no worse than `maxRegressionPercent`. */
export interface CompareGate {
  minRatio: number | undefined;
  maxRegressionPercent: number | undefined;
}

/** One compared figure. */
export interface CompareRow {
  level: string;
  metric: CompareMetric;
  baseline: number;
  candidate: number;
  /** Candidate relative to baseline, > 1 is better (throughput: cand/base; latency and errors: base/cand). */
  ratio: number;
  /** How much worse the candidate is, percent (negative: better). */
  regressionPercent: number;
  pass: boolean;
}

function metricValue(level: LevelJson, metric: CompareMetric): number {
  if (metric === "throughput") return level.inferPerSec;
  if (metric === "avg") return level.latency.avgUs;
  if (metric === "error_rate") return level.errorRate;
  return level.latency.percentiles[metric.slice(1)] ?? Number.NaN;
}

/** Compares the levels both results measured, metric by metric, against the gate. */
export function compareResults(
  baseline: ResultJson,
  candidate: ResultJson,
  metrics: readonly CompareMetric[],
  gate: CompareGate,
): CompareRow[] {
  const rows: CompareRow[] = [];
  for (const base of baseline.levels) {
    const cand = candidate.levels.find((l) => l.mode === base.mode && l.value === base.value);
    if (cand === undefined) continue;
    const level = `${base.mode === "concurrency" ? "concurrency" : "rate"} ${base.value}`;
    for (const metric of metrics) {
      const b = metricValue(base, metric);
      const c = metricValue(cand, metric);
      const higherIsBetter = metric === "throughput";
      const ratio = higherIsBetter ? c / b : b === c ? 1 : b / c;
      const regressionPercent = higherIsBetter
        ? ((b - c) / b) * 100
        : b === 0
          ? c === 0
            ? 0
            : 100
          : ((c - b) / b) * 100;
      let pass = true;
      if (gate.minRatio !== undefined) pass = ratio >= gate.minRatio;
      if (gate.maxRegressionPercent !== undefined)
        pass = pass && regressionPercent <= gate.maxRegressionPercent;
      if (Number.isNaN(b) || Number.isNaN(c)) pass = false;
      rows.push({ level, metric, baseline: b, candidate: c, ratio, regressionPercent, pass });
    }
  }
  return rows;
}

function show(metric: CompareMetric, value: number): string {
  if (Number.isNaN(value)) return "n/a";
  if (metric === "throughput") return `${value.toFixed(1)} infer/s`;
  if (metric === "error_rate") return `${(value * 100).toFixed(2)}%`;
  return `${Math.round(value)} usec`;
}

/** The side-by-side table `tbench compare` prints. */
export function formatCompareTable(rows: readonly CompareRow[], gated: boolean): string {
  const table = new Table({
    head: ["Level", "Metric", "Baseline", "Candidate", "Ratio", "Change", ...(gated ? ["Gate"] : [])],
    style: { head: [], border: [] },
  });
  for (const row of rows) {
    const change =
      row.regressionPercent === 0
        ? "0.0%"
        : `${row.regressionPercent > 0 ? "worse" : "better"} ${Math.abs(row.regressionPercent).toFixed(1)}%`;
    table.push([
      row.level,
      row.metric,
      show(row.metric, row.baseline),
      show(row.metric, row.candidate),
      Number.isFinite(row.ratio) ? `${row.ratio.toFixed(3)}x` : "n/a",
      change,
      ...(gated ? [row.pass ? "PASS" : "FAIL"] : []),
    ]);
  }
  return `${table.toString()}\n`;
}
