import type { LevelResult } from "../measure/level-profiler.js";
import type { Measurement } from "../measure/measurement.js";
import type { ServerSideStats } from "../measure/server-stats.js";
import { formatCppDouble, usec } from "./format.js";

/** Options of {@link formatCsv}. */
export interface CsvOptions {
  mode: "concurrency" | "request_rate";
  /** `--percentile` (added to the p50/p90/p95/p99 columns), or `undefined`. */
  percentile: number | undefined;
  verbose: boolean;
  /** Include the server columns (the server answered the statistics API). */
  includeServerStats: boolean;
  /** Include the GPU metric columns (`--collect-metrics` with `--verbose-csv`). */
  includeMetrics: boolean;
}

/** The percentiles in perf_analyzer's CSV: 50, 90, 95, 99 and `--percentile`, ascending, no duplicates. */
export function csvPercentiles(percentile: number | undefined): number[] {
  const set = new Set([50, 90, 95, 99]);
  if (percentile !== undefined) set.add(percentile);
  return [...set].sort((a, b) => a - b);
}

/** perf_analyzer's CSV header for these options, column for column. */
export function csvHeader(options: CsvOptions): string[] {
  const columns = [
    options.mode === "concurrency" ? "Concurrency" : "Request Rate",
    "Inferences/Second",
    "Client Send",
  ];
  if (options.includeServerStats) {
    columns.push(
      "Network+Server Send/Recv",
      "Server Queue",
      "Server Compute Input",
      "Server Compute Infer",
      "Server Compute Output",
    );
  }
  columns.push("Client Recv");
  for (const p of csvPercentiles(options.percentile)) columns.push(`p${p} latency`);
  if (options.verbose) {
    if (options.percentile === undefined) columns.push("Avg latency");
    columns.push("request/response", "response wait");
    if (options.includeMetrics) {
      columns.push("Avg GPU Utilization", "Avg GPU Power Usage", "Max GPU Memory Usage", "Total GPU Memory");
    }
  }
  return columns;
}

function perCount(ns: number, count: number): number {
  return count > 0 ? Math.floor(ns / count) : 0;
}

function serverColumns(m: Measurement, stats: ServerSideStats | undefined): number[] {
  if (stats === undefined) return [0, 0, 0, 0, 0];
  const queueNs = perCount(stats.queueNs, stats.queueCount);
  const inputNs = perCount(stats.computeInputNs, stats.computeInputCount);
  const inferNs = perCount(stats.computeInferNs, stats.computeInferCount);
  const outputNs = perCount(stats.computeOutputNs, stats.computeOutputCount);
  const computeNs = perCount(
    stats.computeInputNs + stats.computeInferNs + stats.computeOutputNs,
    stats.computeInputCount,
  );
  // perf_analyzer: the client's wait is the latency less the client library's send and receive time.
  const clientWaitNs = (m.latency.avgUs - usec(m.http?.sendUs ?? 0) - usec(m.http?.recvUs ?? 0)) * 1000;
  const networkNs = Math.max(0, clientWaitNs - queueNs - computeNs);
  return [networkNs, queueNs, inputNs, inferNs, outputNs].map((ns) => Math.floor(ns / 1000));
}

function gpuColumn(
  m: Measurement,
  pick: (g: Measurement["metrics"] extends infer T ? T : never) => string,
): string {
  return m.metrics === undefined ? "" : pick(m.metrics);
}

/** One CSV row per measured level, sorted by throughput ascending like perf_analyzer. */
export function formatCsv(results: readonly LevelResult[], options: CsvOptions): string {
  const rows = results
    .filter((r): r is LevelResult & { measurement: Measurement } => r.measurement !== undefined)
    .sort((a, b) => a.measurement.inferPerSec - b.measurement.inferPerSec);
  const lines = [csvHeader(options).join(",")];
  for (const r of rows) {
    const m = r.measurement;
    const sendUs = usec(m.http?.sendUs ?? 0);
    const recvUs = usec(m.http?.recvUs ?? 0);
    const requestUs = usec(m.http?.requestUs ?? m.latency.avgUs);
    const cells: (string | number)[] = [
      formatCppDouble(r.level.value),
      formatCppDouble(m.inferPerSec),
      sendUs,
    ];
    if (options.includeServerStats) cells.push(...serverColumns(m, m.server));
    cells.push(recvUs);
    for (const p of csvPercentiles(options.percentile))
      cells.push(usec(m.latency.percentiles[String(p)] ?? 0));
    if (options.verbose) {
      if (options.percentile === undefined) cells.push(usec(m.latency.avgUs));
      cells.push(sendUs + recvUs, Math.max(0, requestUs - sendUs - recvUs));
      if (options.includeMetrics) {
        const per = (f: (g: NonNullable<Measurement["metrics"]>["gpus"][string]) => number) =>
          gpuColumn(m, (metrics) =>
            Object.entries(metrics!.gpus)
              .map(([uuid, g]) => `${uuid}:${f(g)};`)
              .join(""),
          );
        cells.push(
          per((g) => g.avgUtilizationPercent),
          per((g) => g.avgPowerWatts),
          per((g) => g.maxMemoryUsedBytes),
          per((g) => g.totalMemoryBytes),
        );
      }
    }
    lines.push(cells.join(","));
  }
  return `${lines.join("\n")}\n`;
}

/**
 * perf_analyzer's per-composing-model CSVs of an ensemble (same columns, server figures of that model,
 * throughput scaled by its share of the ensemble's successful requests). Keyed by `name_vVERSION`.
 */
export function formatComposingCsvs(
  results: readonly LevelResult[],
  mode: CsvOptions["mode"],
): Map<string, string> {
  const files = new Map<string, string>();
  const first = results.find((r) => r.measurement?.server !== undefined)?.measurement?.server;
  if (first === undefined) return files;
  for (const [name, child] of Object.entries(first.composing)) {
    const header = [
      mode === "concurrency" ? "Concurrency" : "Request Rate",
      "Inferences/Second",
      "Client Send",
    ];
    header.push("Network+Server Send/Recv", "Server Queue", "Server Compute Input", "Server Compute Infer");
    header.push("Server Compute Output", "Client Recv");
    const lines = [header.join(",")];
    for (const r of results) {
      const m = r.measurement;
      const stats = m?.server?.composing[name];
      if (m === undefined || stats === undefined || m.server === undefined) continue;
      const avgNs = perCount(stats.cumulativeNs, stats.successCount);
      const queueNs = perCount(stats.queueNs, stats.queueCount);
      const computeNs = perCount(
        stats.computeInputNs + stats.computeInferNs + stats.computeOutputNs,
        stats.computeInputCount,
      );
      const ratio = m.server.successCount > 0 ? stats.successCount / m.server.successCount : 0;
      lines.push(
        [
          formatCppDouble(r.level.value),
          formatCppDouble(ratio * m.inferPerSec),
          0,
          Math.floor(Math.max(0, avgNs - queueNs - computeNs) / 1000),
          Math.floor(queueNs / 1000),
          Math.floor(perCount(stats.computeInputNs, stats.computeInputCount) / 1000),
          Math.floor(perCount(stats.computeInferNs, stats.computeInferCount) / 1000),
          Math.floor(perCount(stats.computeOutputNs, stats.computeOutputCount) / 1000),
          0,
        ].join(","),
      );
    }
    files.set(`${name}_v${child.version}`, `${lines.join("\n")}\n`);
  }
  return files;
}
