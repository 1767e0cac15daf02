/**
 * Triton's latency summaries (`--metrics-config summary_latencies=true`): per model version, the request,
 * queue and compute durations of every successful request, in microseconds, as Prometheus summaries whose
 * quantiles cover a sliding window (prometheus-cpp's default: 60 s in 5 age buckets) while `_count` and
 * `_sum` count since the version loaded. Unlike the counters these cannot be computed at scrape time, so
 * the model statistics hand each request's durations here (stats/model-stats.ts LatencyObserver).
 */
import { type Registry, Summary } from "prom-client";
import type { LatencyObserver } from "../stats/model-stats.js";
import type { SummaryQuantile } from "./metrics-config.js";

/** The summaries of one server: fed by the core, registered on the metrics endpoint's registry. */
export interface LatencySummaries extends LatencyObserver {
  /** Adds the families to `registry`; `live` lists the model versions loaded now (`model\0version`). */
  register(registry: Registry, live: () => ReadonlySet<string>): void;
}

/** prometheus-cpp's Summary defaults, which Triton keeps. */
const MAX_AGE_SECONDS = 60;
const AGE_BUCKETS = 5;

type Labels = "model" | "version";

const FAMILIES = [
  ["nv_inference_request_summary_us", "Summary of end-to-end inference request handling times, microseconds"],
  ["nv_inference_queue_summary_us", "Summary of time requests waited in the scheduler queue, microseconds"],
  ["nv_inference_compute_input_summary_us", "Summary of time spent preparing model inputs, microseconds"],
  ["nv_inference_compute_infer_summary_us", "Summary of time spent running the model, microseconds"],
  ["nv_inference_compute_output_summary_us", "Summary of time spent extracting model outputs, microseconds"],
] as const;

/** Creates the five summaries with `quantiles` (Triton's error bounds are not a parameter of prom-client's digest). */
export function createLatencySummaries(quantiles: readonly SummaryQuantile[]): LatencySummaries {
  const seen = new Map<string, { model: string; version: string }>();
  let live: () => ReadonlySet<string> = () => new Set(seen.keys());
  // An unloaded version's series go away, as Triton removes a reporter's metrics with its model.
  const prune = () => {
    const loaded = live();
    for (const [key, labels] of seen) {
      if (loaded.has(key)) continue;
      seen.delete(key);
      for (const summary of summaries) summary.remove(labels);
    }
  };
  const summaries = FAMILIES.map(
    ([name, help], index) =>
      new Summary<Labels>({
        name,
        help,
        labelNames: ["model", "version"],
        percentiles: quantiles.map((q) => q.quantile),
        maxAgeSeconds: MAX_AGE_SECONDS,
        ageBuckets: AGE_BUCKETS,
        registers: [],
        ...(index === 0 ? { collect: prune } : {}),
      }),
  );
  return {
    requestSucceeded(model, version, durationNs, queueNs, times) {
      const labels = { model, version };
      seen.set(`${model}\u0000${version}`, labels);
      const values = [durationNs, queueNs, times.computeInputNs, times.computeInferNs, times.computeOutputNs];
      for (let i = 0; i < summaries.length; i++)
        summaries[i]!.observe(labels, Math.max(0, values[i]!) / 1000);
    },
    register(registry, loaded) {
      live = loaded;
      for (const summary of summaries) registry.registerMetric(summary);
    },
  };
}
