import Table from "cli-table3";
import type { LevelResult } from "../measure/level-profiler.js";
import { serverBreakdown } from "../measure/server-stats.js";
import { formatCppDouble, usec } from "./format.js";

/** A cli-table3 table of the sweep: one row per level, client latencies in usec, server breakdown. */
export function formatSweepTable(results: readonly LevelResult[]): string {
  const rateMode = results.some((r) => r.level.mode === "request_rate");
  const head = [
    rateMode ? "Rate (req/s)" : "Concurrency",
    "Infer/sec",
    "Avg (us)",
    "p50 (us)",
    "p90 (us)",
    "p95 (us)",
    "p99 (us)",
    "p99.9 (us)",
    ...(rateMode ? ["p99 uncorr. (us)", "Late sends"] : []),
    "Errors",
    "Srv queue (us)",
    "Srv compute (us)",
    "Avg batch",
    "Status",
  ];
  const table = new Table({ head, style: { head: [], border: [] } });
  for (const r of results) {
    const m = r.measurement;
    if (m === undefined) {
      table.push([String(r.level.value), ...head.slice(1, -1).map(() => "-"), r.status]);
      continue;
    }
    const p = m.latency.percentiles;
    const server = m.server === undefined ? undefined : serverBreakdown(m.server);
    table.push([
      formatCppDouble(r.level.value),
      formatCppDouble(m.inferPerSec),
      String(usec(m.latency.avgUs)),
      String(usec(p["50"] ?? 0)),
      String(usec(p["90"] ?? 0)),
      String(usec(p["95"] ?? 0)),
      String(usec(p["99"] ?? 0)),
      String(usec(p["99.9"] ?? 0)),
      ...(rateMode
        ? [String(usec(m.uncorrectedLatency?.percentiles["99"] ?? 0)), String(m.lateSendCount)]
        : []),
      m.errorCount === 0 ? "0" : `${m.errorCount} (${(m.errorRate * 100).toFixed(2)}%)`,
      server === undefined ? "-" : String(server.queueUs),
      server === undefined
        ? "-"
        : String(server.computeInputUs + server.computeInferUs + server.computeOutputUs),
      server === undefined ? "-" : server.avgBatchSize.toFixed(2),
      r.status,
    ]);
  }
  return `${table.toString()}\n`;
}
