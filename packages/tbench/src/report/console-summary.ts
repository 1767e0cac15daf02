import type { LoadLevel } from "../load/load-driver.js";
import type { LevelResult } from "../measure/level-profiler.js";
import type { Measurement } from "../measure/measurement.js";
import { type ServerSideStats, serverBreakdown } from "../measure/server-stats.js";
import { formatCppDouble, usec } from "./format.js";

/** The settings echoed in perf_analyzer's "*** Measurement Settings ***" block. */
export interface SettingsSummary {
  batchSize: number;
  measurementMode: "time_windows" | "count_windows";
  measurementIntervalMs: number;
  measurementRequestCount: number;
  percentile: number | undefined;
  latencyThresholdMs: number;
  mode: LoadLevel["mode"];
  /** Highest level of the sweep (0: until the latency threshold). */
  limit: number;
  async: boolean;
  distribution: "constant" | "poisson" | "custom";
  workers: number;
}

/** perf_analyzer's settings block. */
export function formatSettings(s: SettingsSummary): string {
  const lines = ["*** Measurement Settings ***", `  Batch size: ${s.batchSize}`, "  Service Kind: TRITON"];
  if (s.measurementMode === "count_windows") {
    lines.push('  Using "count_windows" mode for stabilization');
    lines.push(`  Minimum number of samples in each window: ${s.measurementRequestCount}`);
  } else {
    lines.push('  Using "time_windows" mode for stabilization');
  }
  lines.push(
    s.percentile === undefined
      ? "  Stabilizing using average latency and throughput"
      : `  Stabilizing using p${s.percentile} latency and throughput`,
  );
  if (s.measurementMode === "time_windows")
    lines.push(`  Measurement window: ${s.measurementIntervalMs} msec`);
  lines.push(`  Latency limit: ${s.latencyThresholdMs} msec`);
  if (s.mode === "concurrency") lines.push(`  Concurrency limit: ${s.limit} concurrent requests`);
  else lines.push(`  Request Rate limit: ${s.limit} requests per seconds`);
  lines.push(`  Using ${s.async ? "asynchronous" : "synchronous"} calls for inference`);
  if (s.mode === "request_rate") {
    const name = s.distribution === "constant" ? "uniform" : s.distribution;
    lines.push(`  Using ${name} distribution on request generation`);
  }
  if (s.workers > 1) lines.push(`  Load spread over ${s.workers} worker threads`);
  return `${lines.join("\n")}\n`;
}

/** "Request concurrency: 4" / "Request Rate: 100 inference requests per seconds". */
export function levelHeading(level: LoadLevel): string {
  return level.mode === "concurrency"
    ? `Request concurrency: ${level.value}`
    : `Request Rate: ${formatCppDouble(level.value)} inference requests per seconds`;
}

function serverLines(stats: ServerSideStats, depth: number, out: string[]): void {
  const ident = " ".repeat(2 * depth);
  if (stats.successCount === 0) {
    out.push(`${ident}  Request count: 0`);
    return;
  }
  const b = serverBreakdown(stats);
  out.push(`${ident}  Inference count: ${stats.inferenceCount}`);
  out.push(`${ident}  Execution count: ${stats.executionCount}`);
  out.push(`${ident}  Successful request count: ${stats.successCount}`);
  const composing = Object.entries(stats.composing);
  if (composing.length === 0) {
    out.push(
      `${ident}  Avg request latency: ${b.requestUs} usec (overhead ${b.overheadUs} usec + queue ${b.queueUs} usec + ` +
        `compute input ${b.computeInputUs} usec + compute infer ${b.computeInferUs} usec + ` +
        `compute output ${b.computeOutputUs} usec)`,
    );
    out.push(`${ident}  Avg batch size: ${formatCppDouble(b.avgBatchSize)}`);
    out.push("");
    return;
  }
  let queueUs = 0;
  let computeUs = 0;
  for (const [, child] of composing) {
    const c = serverBreakdown(child);
    queueUs += c.queueUs;
    computeUs += c.computeInputUs + c.computeInferUs + c.computeOutputUs;
  }
  out.push(
    `${ident}  Avg request latency: ${b.requestUs} usec (overhead ${Math.max(0, b.requestUs - queueUs - computeUs)} usec + ` +
      `queue ${queueUs} usec + compute ${computeUs} usec)`,
  );
  out.push("");
  out.push(`${ident}Composing models: `);
  for (const [name, child] of composing) {
    out.push(`${ident}${name}, version: ${child.version}`);
    serverLines(child, depth + 1, out);
  }
}

/**
 * perf_analyzer's verbose line after each measurement window: "  Pass [1] throughput: 975.048 infer/sec.
 * Avg latency: 1023 usec (std 88 usec)", or the `--percentile` latency instead of the average.
 */
export function formatPassLine(index: number, window: Measurement, percentile: number | undefined): string {
  const latency =
    percentile === undefined
      ? `Avg latency: ${usec(window.latency.avgUs)} usec (std ${usec(window.latency.stdUs)} usec)`
      : `p${percentile} latency: ${usec(window.latency.percentiles[String(percentile)] ?? 0)} usec`;
  return `  Pass [${index}] throughput: ${formatCppDouble(window.inferPerSec)} infer/sec. ${latency}\n`;
}

/**
 * perf_analyzer's per-level "Client:" / "Server:" block, plus tbench's extra lines. The level heading is
 * printed before the level is measured (verbose "Pass" lines come under it), so it is not repeated here.
 */
export function formatLevelSummary(
  result: LevelResult,
  percentile: number | undefined,
  verbose = false,
): string {
  const out: string[] = [];
  const m = result.measurement;
  if (m === undefined) {
    out.push("  Client: ", "    Request count: 0");
    return `${out.join("\n")}\n`;
  }
  out.push("  Client: ");
  out.push(`    Request count: ${m.requestCount}`);
  if (m.lateSendCount > 0) out.push(`    Delayed Request Count: ${m.lateSendCount}`);
  if (m.sequenceCount !== undefined) {
    out.push(`    Sequence count: ${m.sequenceCount} (${formatCppDouble(m.sequencesPerSec ?? 0)} seq/sec)`);
  }
  out.push(`    Throughput: ${formatCppDouble(m.inferPerSec)} infer/sec`);
  if (percentile === undefined) {
    out.push(
      `    Avg latency: ${usec(m.latency.avgUs)} usec (standard deviation ${usec(m.latency.stdUs)} usec)`,
    );
  }
  for (const [p, value] of Object.entries(m.latency.percentiles).sort(
    (a, b) => Number(a[0]) - Number(b[0]),
  )) {
    out.push(`    p${p} latency: ${usec(value)} usec`);
  }
  if (m.http !== undefined) {
    const send = usec(m.http.sendUs);
    const recv = usec(m.http.recvUs);
    const request = usec(m.http.requestUs);
    const wait = Math.max(0, request - send - recv);
    out.push(
      verbose
        ? `    Avg HTTP time: ${request} usec (send ${send} usec + response wait ${wait} usec + receive ${recv} usec)`
        : `    Avg HTTP time: ${request} usec (send/recv ${send + recv} usec + response wait ${wait} usec)`,
    );
  }
  if (m.uncorrectedLatency !== undefined) {
    const u = m.uncorrectedLatency;
    out.push(
      `    Uncorrected latency (from actual send): avg ${usec(u.avgUs)} usec, p50 ${usec(u.percentiles["50"] ?? 0)} usec, ` +
        `p99 ${usec(u.percentiles["99"] ?? 0)} usec (max send lag ${usec(m.maxSendLagUs)} usec)`,
    );
  }
  if (m.sendDelay !== undefined) {
    const d = m.sendDelay;
    out.push(
      `    Send delay (tbench behind its schedule): p50 ${usec(d.p50Us)} usec, p99 ${usec(d.p99Us)} usec, ` +
        `max ${usec(d.maxUs)} usec`,
    );
  }
  if (m.server !== undefined && m.server.successCount > 0) {
    const clientUs = Math.max(0, m.latency.avgUs - serverBreakdown(m.server).requestUs);
    out.push(
      `    Avg network+client time: ${usec(clientUs)} usec (avg latency - server avg request latency)`,
    );
  }
  if (m.errorCount > 0) {
    const kinds = Object.entries(m.errorsByKind)
      .map(([kind, n]) => `${kind}: ${n}`)
      .join(", ");
    out.push(`    Errors: ${m.errorCount} (${(m.errorRate * 100).toFixed(2)}% of requests; ${kinds})`);
  }
  if (m.server !== undefined) {
    out.push("  Server: ");
    serverLines(m.server, 1, out);
  }
  if (m.metrics !== undefined) out.push(...metricsLines(m));
  return `${out.join("\n")}\n`;
}

function metricsLines(m: Measurement): string[] {
  const metrics = m.metrics!;
  const gpus = Object.entries(metrics.gpus);
  const out = ["  Server Prometheus Metrics: "];
  if (gpus.length === 0) {
    out.push(
      `    Scrapes: ${metrics.scrapeCount} (${metrics.failedScrapeCount} failed), no GPU metrics; ` +
        `avg pending requests: ${formatCppDouble(metrics.avgPendingRequests)}`,
    );
    return out;
  }
  out.push("    Avg GPU Utilization:");
  for (const [uuid, g] of gpus) out.push(`      ${uuid} : ${formatCppDouble(g.avgUtilizationPercent)}%`);
  out.push("    Avg GPU Power Usage:");
  for (const [uuid, g] of gpus) out.push(`      ${uuid} : ${formatCppDouble(g.avgPowerWatts)} watts`);
  out.push("    Max GPU Memory Usage:");
  for (const [uuid, g] of gpus) out.push(`      ${uuid} : ${g.maxMemoryUsedBytes} bytes`);
  out.push("    Total GPU Memory:");
  for (const [uuid, g] of gpus) out.push(`      ${uuid} : ${g.totalMemoryBytes} bytes`);
  return out;
}

/** perf_analyzer's closing lines: "Inferences/Second vs. Client Average Batch Latency" and one per level. */
export function formatFinalSummary(results: readonly LevelResult[], percentile: number | undefined): string {
  const out = [
    percentile === undefined
      ? "Inferences/Second vs. Client Average Batch Latency"
      : `Inferences/Second vs. Client p${percentile} Batch Latency`,
  ];
  for (const r of results) {
    const m = r.measurement;
    if (m === undefined) continue;
    const latency =
      percentile === undefined ? m.latency.avgUs : (m.latency.percentiles[String(percentile)] ?? 0);
    const label = r.level.mode === "concurrency" ? "Concurrency" : "Request Rate";
    out.push(
      `${label}: ${formatCppDouble(r.level.value)}, throughput: ${formatCppDouble(m.inferPerSec)} infer/sec, ` +
        `latency ${usec(latency)} usec`,
    );
  }
  return `${out.join("\n")}\n`;
}
