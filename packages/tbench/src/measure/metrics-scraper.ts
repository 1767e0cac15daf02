import { parsePrometheusText } from "@tbench/proto";

/** Per-GPU figures over one window, the ones perf_analyzer reports (`--collect-metrics`). */
export interface GpuMetrics {
  avgUtilizationPercent: number;
  avgPowerWatts: number;
  maxMemoryUsedBytes: number;
  totalMemoryBytes: number;
}

/** What the scraper saw during one window. */
export interface MetricsSummary {
  scrapeCount: number;
  failedScrapeCount: number;
  /** Keyed by `gpu_uuid`; empty against servers without GPUs (tbench-server on CPU). */
  gpus: Record<string, GpuMetrics>;
  /** Average of `nv_inference_pending_request_count` for the model over the scrapes. */
  avgPendingRequests: number;
}

/** Options of {@link createMetricsScraper}. */
export interface MetricsScraperOptions {
  url: string;
  intervalMs: number;
  model: string;
  /** Defaults to the global fetch; tests may pass their own. */
  fetchText?: (url: string) => Promise<string>;
}

/** Scrapes a Prometheus endpoint every `intervalMs` while running; `take()` ends the window. */
export interface MetricsScraper {
  start(): void;
  take(): MetricsSummary;
  close(): void;
}

interface GpuAccumulator {
  utilization: number[];
  power: number[];
  maxUsed: number;
  total: number;
}

async function defaultFetchText(url: string): Promise<string> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
  if (!response.ok) throw new Error(`metrics endpoint ${url} answered ${response.status}`);
  return response.text();
}

/** Creates a scraper for Triton-style metrics (`nv_gpu_*`, `nv_inference_pending_request_count`). */
export function createMetricsScraper(options: MetricsScraperOptions): MetricsScraper {
  const fetchText = options.fetchText ?? defaultFetchText;
  let timer: NodeJS.Timeout | undefined;
  let gpus = new Map<string, GpuAccumulator>();
  let scrapes = 0;
  let failed = 0;
  let pending: number[] = [];

  async function scrape(): Promise<void> {
    let text: string;
    try {
      text = await fetchText(options.url);
    } catch {
      failed += 1;
      return;
    }
    scrapes += 1;
    for (const sample of parsePrometheusText(text).samples) {
      if (!Number.isFinite(sample.value)) continue;
      const uuid = sample.labels["gpu_uuid"];
      if (uuid !== undefined) {
        let gpu = gpus.get(uuid);
        if (gpu === undefined) {
          gpu = { utilization: [], power: [], maxUsed: 0, total: 0 };
          gpus.set(uuid, gpu);
        }
        if (sample.name === "nv_gpu_utilization") gpu.utilization.push(sample.value * 100);
        else if (sample.name === "nv_gpu_power_usage") gpu.power.push(sample.value);
        else if (sample.name === "nv_gpu_memory_used_bytes")
          gpu.maxUsed = Math.max(gpu.maxUsed, sample.value);
        else if (sample.name === "nv_gpu_memory_total_bytes") gpu.total = sample.value;
      } else if (
        sample.name === "nv_inference_pending_request_count" &&
        sample.labels["model"] === options.model
      ) {
        pending.push(sample.value);
      }
    }
  }

  const average = (values: number[]) =>
    values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;

  return {
    start() {
      if (timer !== undefined) return;
      void scrape();
      timer = setInterval(() => void scrape(), options.intervalMs);
      timer.unref();
    },
    take() {
      const summary: MetricsSummary = {
        scrapeCount: scrapes,
        failedScrapeCount: failed,
        gpus: {},
        avgPendingRequests: average(pending),
      };
      for (const [uuid, gpu] of gpus) {
        summary.gpus[uuid] = {
          avgUtilizationPercent: average(gpu.utilization),
          avgPowerWatts: average(gpu.power),
          maxMemoryUsedBytes: gpu.maxUsed,
          totalMemoryBytes: gpu.total,
        };
      }
      gpus = new Map();
      pending = [];
      scrapes = 0;
      failed = 0;
      return summary;
    },
    close() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
  };
}
