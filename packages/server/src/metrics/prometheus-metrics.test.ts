import assert from "node:assert/strict";
import { test } from "node:test";
import { parsePrometheusText } from "@tbench/proto";
import { silentLogger } from "../core/logger.js";
import type { ModelStatistics } from "../core/types.js";
import { createFakeCore } from "../testing/fake-core.js";
import { createLatencySummaries } from "./latency-summaries.js";
import { parseMetricsConfig } from "./metrics-config.js";
import { createMetricsServer } from "./metrics-server.js";

const d = (count: number, ns: number) => ({ count, ns });

function stats(name: string, version: string, n: number): ModelStatistics {
  return {
    name,
    version,
    last_inference: 0,
    inference_count: 10 * n,
    execution_count: 3 * n,
    inference_stats: {
      success: d(7 * n, 5_000_999 * n),
      fail: d(2 * n, 0),
      queue: d(7 * n, 1_000_000 * n),
      compute_input: d(7 * n, 2_000 * n),
      compute_infer: d(7 * n, 3_000_000 * n),
      compute_output: d(7 * n, 4_000 * n),
      cache_hit: d(0, 0),
      cache_miss: d(0, 0),
    },
    response_stats: {},
    batch_stats: [],
    memory_usage: [],
  };
}

test("metrics are computed at scrape time from statistics and the metrics snapshot", async () => {
  const core = createFakeCore();
  let scale = 1;
  core.modelStatistics = () => [stats("simple", "1", scale), stats("heavy", "2", scale)];
  core.metricsSnapshot = () => [
    {
      model: "simple",
      version: "1",
      pendingRequests: 4,
      failuresByReason: { REJECTED: 1, BACKEND: 1 },
      loadDurationSecs: 0.25,
    },
  ];
  const server = await createMetricsServer({ core, port: 0, address: "127.0.0.1", logger: silentLogger });
  try {
    const first = await fetch(server.url);
    assert.equal(first.status, 200);
    assert.match(first.headers.get("content-type") ?? "", /^text\/plain/);
    const text = await first.text();
    const samples = parsePrometheusText(text);
    const value = (name: string, labels: Record<string, string>) => samples.get(name, labels);
    assert.equal(value("nv_inference_request_success", { model: "simple", version: "1" }), 7);
    assert.equal(value("nv_inference_count", { model: "heavy", version: "2" }), 10);
    assert.equal(value("nv_inference_exec_count", { model: "simple", version: "1" }), 3);
    assert.equal(value("nv_inference_request_duration_us", { model: "simple", version: "1" }), 5000);
    assert.equal(value("nv_inference_queue_duration_us", { model: "simple", version: "1" }), 1000);
    assert.equal(value("nv_inference_compute_input_duration_us", { model: "simple", version: "1" }), 2);
    assert.equal(value("nv_inference_compute_infer_duration_us", { model: "simple", version: "1" }), 3000);
    assert.equal(value("nv_inference_compute_output_duration_us", { model: "simple", version: "1" }), 4);
    assert.equal(
      value("nv_inference_request_failure", { model: "simple", version: "1", reason: "REJECTED" }),
      1,
    );
    assert.equal(
      value("nv_inference_request_failure", { model: "simple", version: "1", reason: "OTHER" }),
      0,
    );
    // No snapshot for heavy: failures fall back to the statistics' fail count, as OTHER.
    assert.equal(value("nv_inference_request_failure", { model: "heavy", version: "2", reason: "OTHER" }), 2);
    assert.equal(value("nv_inference_pending_request_count", { model: "simple", version: "1" }), 4);
    assert.equal(value("nv_model_load_duration_secs", { model: "simple", version: "1" }), 0.25);
    const cpu = value("nv_cpu_utilization", {})!;
    assert.ok(cpu >= 0 && cpu <= 1);
    assert.ok(value("nv_cpu_memory_total_bytes", {})! > value("nv_cpu_memory_used_bytes", {})!);
    assert.match(text, /# TYPE nv_inference_request_success counter/);
    assert.match(text, /# TYPE nv_inference_pending_request_count gauge/);

    scale = 2;
    const second = parsePrometheusText(await (await fetch(server.url)).text());
    assert.equal(second.get("nv_inference_request_success", { model: "simple", version: "1" }), 14);

    assert.equal((await fetch(server.url.replace("/metrics", "/other"))).status, 400);
    assert.equal((await fetch(server.url, { method: "POST" })).status, 405);
  } finally {
    await server.close();
    await server.close();
  }
});

test("--metrics-config: summaries carry each success in µs with Triton's quantiles, counters can be dropped, an unloaded version's series go", async () => {
  const core = createFakeCore();
  let models = [stats("simple", "1", 1)];
  core.modelStatistics = () => models;
  const summaries = createLatencySummaries(parseMetricsConfig([]).summaryQuantiles);
  const server = await createMetricsServer({
    core,
    port: 0,
    address: "127.0.0.1",
    logger: silentLogger,
    latency: { counterLatencies: false, summaries },
  });
  try {
    const times = { computeInputNs: 2_000, computeInferNs: 3_000_000, computeOutputNs: 4_000 };
    // 100 requests of 1..100 ms end to end, queued 10 µs each.
    for (let ms = 1; ms <= 100; ms++) summaries.requestSucceeded("simple", "1", ms * 1e6, 10_000, times);
    const text = await (await fetch(server.url)).text();
    const samples = parsePrometheusText(text);
    const labels = { model: "simple", version: "1" };
    assert.match(text, /# TYPE nv_inference_request_summary_us summary/);
    assert.equal(samples.get("nv_inference_request_summary_us_count", labels), 100);
    assert.equal(samples.get("nv_inference_request_summary_us_sum", labels), 5050 * 1000);
    for (const [quantile, expected] of [
      ["0.5", 50_000],
      ["0.9", 90_000],
      ["0.99", 99_000],
    ] as const) {
      const value = samples.get("nv_inference_request_summary_us", { ...labels, quantile }) ?? Number.NaN;
      // prom-client's digest interpolates between neighbours: within one request of the exact rank.
      assert.ok(Math.abs(value - expected) <= 1_000, `quantile ${quantile}: ${value}, expected ~${expected}`);
    }
    assert.equal(samples.get("nv_inference_queue_summary_us_sum", labels), 100 * 10);
    assert.equal(samples.get("nv_inference_compute_infer_summary_us_count", labels), 100);
    assert.equal(
      samples.samples.filter(
        (s) => s.name === "nv_inference_request_summary_us" && s.labels.model === "simple",
      ).length,
      5,
    );
    // counter_latencies=false: the five duration counters are gone, the counts stay.
    assert.doesNotMatch(text, /nv_inference_request_duration_us/);
    assert.doesNotMatch(text, /nv_inference_compute_infer_duration_us/);
    assert.equal(samples.get("nv_inference_request_success", labels), 7);

    models = [];
    const after = await (await fetch(server.url)).text();
    assert.doesNotMatch(after, /nv_inference_request_summary_us\{/);
    assert.doesNotMatch(after, /nv_inference_queue_summary_us_count\{/);
  } finally {
    await server.close();
  }
});
