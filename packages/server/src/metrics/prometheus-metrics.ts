/**
 * Triton's Prometheus metric families, computed at scrape time from the core's statistics and metrics
 * snapshot (prom-client collect callbacks), so serving requests costs nothing here. The registry is our
 * own, never prom-client's global one. Labels: `model` and `version` (failures add `reason`).
 */
import { Counter, Gauge, Registry } from "prom-client";
import type { InferenceCore, ModelMetricsSnapshot, ModelStatistics } from "../core/types.js";
import { type GpuMetricsSource, registerGpuMetrics } from "./gpu-metrics.js";
import type { LatencySummaries } from "./latency-summaries.js";
import { createSystemUsageReader } from "./system-usage.js";

/** Metrics for one core. */
export interface PrometheusMetrics {
  readonly registry: Registry;
  /** The exposition text (what GET /metrics answers). */
  render(): Promise<string>;
  readonly contentType: string;
}

type Labels = "model" | "version";

/** Reads the core once per scrape, shared by every family's collect callback. */
function createScrapeCache(core: InferenceCore) {
  let stats: readonly ModelStatistics[] = [];
  let snapshots: readonly ModelMetricsSnapshot[] = [];
  return {
    refresh() {
      stats = core.modelStatistics();
      snapshots = core.metricsSnapshot();
    },
    stats: () => stats,
    snapshots: () => snapshots,
  };
}

const US_PER_NS = 1 / 1000;

/** The latency counters (`--metrics-config counter_latencies=false` drops them): statistics totals in µs. */
const DURATION_COUNTERS = [
  [
    "nv_inference_request_duration_us",
    "Total end-to-end handling time of successful inference requests, in microseconds",
    "success",
  ],
  [
    "nv_inference_queue_duration_us",
    "Total time requests waited in the scheduler queue, in microseconds",
    "queue",
  ],
  [
    "nv_inference_compute_input_duration_us",
    "Total time spent preparing model inputs, in microseconds",
    "compute_input",
  ],
  [
    "nv_inference_compute_infer_duration_us",
    "Total time spent running the model, in microseconds",
    "compute_infer",
  ],
  [
    "nv_inference_compute_output_duration_us",
    "Total time spent extracting model outputs, in microseconds",
    "compute_output",
  ],
] as const;

/** Options of createPrometheusMetrics. */
export interface PrometheusMetricsOptions {
  /** The GPUs found at startup; without one, no nv_gpu_* family is registered. */
  readonly gpus?: GpuMetricsSource | undefined;
  /** Default true; false drops the five `*_duration_us` counters (`--metrics-config counter_latencies=false`). */
  readonly counterLatencies?: boolean | undefined;
  /** The latency summaries, when `--metrics-config summary_latencies=true` turned them on. */
  readonly summaries?: LatencySummaries | undefined;
}

/** Registers Triton's metric families for `core` on a fresh registry. */
export function createPrometheusMetrics(
  core: InferenceCore,
  options: PrometheusMetricsOptions = {},
): PrometheusMetrics {
  const registry = new Registry();
  const cache = createScrapeCache(core);
  const usage = createSystemUsageReader();
  const labelNames: Labels[] = ["model", "version"];

  const statCounter = (name: string, help: string, value: (s: ModelStatistics) => number) =>
    new Counter<Labels>({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        for (const s of cache.stats()) this.inc({ model: s.name, version: s.version }, Math.max(0, value(s)));
      },
    });

  // First family collected refreshes the cache (prom-client collects in registration order).
  new Counter<Labels>({
    name: "nv_inference_request_success",
    help: "Inference requests that succeeded (a request counts once whatever its batch size)",
    labelNames,
    registers: [registry],
    collect() {
      cache.refresh();
      this.reset();
      for (const s of cache.stats())
        this.inc({ model: s.name, version: s.version }, s.inference_stats.success.count);
    },
  });
  new Counter<Labels | "reason">({
    name: "nv_inference_request_failure",
    help: "Inference requests that failed, by reason (REJECTED, CANCELED, BACKEND, OTHER)",
    labelNames: ["model", "version", "reason"],
    registers: [registry],
    collect() {
      this.reset();
      const byModel = new Map<string, ModelMetricsSnapshot>();
      for (const snap of cache.snapshots()) byModel.set(`${snap.model}\u0000${snap.version}`, snap);
      for (const s of cache.stats()) {
        const snap = byModel.get(`${s.name}\u0000${s.version}`);
        const reasons = snap?.failuresByReason ?? { OTHER: s.inference_stats.fail.count };
        for (const reason of ["REJECTED", "CANCELED", "BACKEND", "OTHER"]) {
          this.inc({ model: s.name, version: s.version, reason }, reasons[reason] ?? 0);
        }
      }
    },
  });
  statCounter("nv_inference_count", "Inferences performed (a batch of n counts n)", (s) => s.inference_count);
  statCounter("nv_inference_exec_count", "Model executions (batches run)", (s) => s.execution_count);
  if (options.counterLatencies !== false) {
    for (const [name, help, field] of DURATION_COUNTERS)
      statCounter(name, help, (s) => Math.floor(s.inference_stats[field].ns * US_PER_NS));
  }
  new Gauge<Labels>({
    name: "nv_inference_pending_request_count",
    help: "Inference requests received and not yet started by a model instance",
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const snap of cache.snapshots())
        this.set({ model: snap.model, version: snap.version }, snap.pendingRequests);
    },
  });
  new Gauge<Labels>({
    name: "nv_model_load_duration_secs",
    help: "Seconds the model version's last load took",
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const snap of cache.snapshots())
        this.set({ model: snap.model, version: snap.version }, snap.loadDurationSecs);
    },
  });
  let system = usage.read();
  new Gauge({
    name: "nv_cpu_utilization",
    help: "Busy fraction of all CPU cores since the previous scrape, 0.0 to 1.0",
    registers: [registry],
    collect() {
      system = usage.read();
      this.set(system.cpuUtilization);
    },
  });
  new Gauge({
    name: "nv_cpu_memory_total_bytes",
    help: "Total host memory in bytes",
    registers: [registry],
    collect() {
      this.set(system.memoryTotalBytes);
    },
  });
  new Gauge({
    name: "nv_cpu_memory_used_bytes",
    help: "Host memory in use in bytes (total minus available)",
    registers: [registry],
    collect() {
      this.set(system.memoryUsedBytes);
    },
  });

  options.summaries?.register(
    registry,
    () => new Set(cache.stats().map((s) => `${s.name}\u0000${s.version}`)),
  );
  if (options.gpus !== undefined) registerGpuMetrics(registry, options.gpus);

  return {
    registry,
    contentType: registry.contentType,
    render: () => registry.metrics(),
  };
}
