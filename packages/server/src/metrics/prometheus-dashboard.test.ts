/**
 * The provisioned Grafana dashboard (deploy/grafana/dashboards/tbench.json) proven against a real Prometheus:
 * Debian's `prometheus` scrapes a real tbench-server every second, known traffic goes to `simple`, and the
 * Prometheus HTTP API must show the server's exact counters and give data for every panel query, with the
 * Grafana variables substituted as Grafana would. CI installs prometheus (.ci/run); without it this fails.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { assertSystemTool, skipWithout } from "../../../../scripts/testing/system-tools.js";
import { silentLogger } from "../core/logger.js";
import { type RunningServer, startServer } from "../server.js";
import { parseMetricsConfig } from "./metrics-config.js";

const REPOSITORY = new URL("../../../../examples/models", import.meta.url).pathname;
const DASHBOARD = new URL("../../../../deploy/grafana/dashboards/tbench.json", import.meta.url).pathname;
const SCRAPE_SECONDS = 1;
/** Grafana's $__rate_interval: max($__interval + scrape interval, 4 x scrape interval), with a 1 s step. */
const STEP_SECONDS = 1;
const RATE_INTERVAL = `${Math.max(STEP_SECONDS + SCRAPE_SECONDS, 4 * SCRAPE_SECONDS)}s`;
/** Bounds every wait for a scrape; waits end as soon as the data is there. */
const WAIT_MS = 25_000;
const SUCCEEDED = 12;
const ROWS = 2;
const FAILED = 3;

interface Sample {
  metric: Record<string, string>;
  value?: [number, string];
  values?: [number, string][];
}

/** A free port on 127.0.0.1 (Prometheus has no port 0): bound, read, released. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  assert.ok(address !== null && typeof address === "object");
  return address.port;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a value (not undefined) or WAIT_MS passes; the error names `what`. */
async function waitFor<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await sleep(200);
  }
}

describe("Grafana dashboard against real Prometheus scraping tbench-server", {
  skip: skipWithout("prometheus"),
}, () => {
  let server: RunningServer;
  let prometheus: ChildProcess;
  let promUrl: string;
  let dir: string;
  let prometheusLog = "";
  let trafficStart = 0;

  const api = async (path: string, params: Record<string, string>): Promise<Sample[]> => {
    const response = await fetch(`${promUrl}/api/v1/${path}?${new URLSearchParams(params)}`);
    const body = (await response.json()) as { status: string; error?: string; data: { result: Sample[] } };
    assert.equal(body.status, "success", `${path} ${JSON.stringify(params)}: ${body.error}`);
    return body.data.result;
  };
  const instant = async (query: string): Promise<number | undefined> => {
    const [first] = await api("query", { query });
    return first?.value === undefined ? undefined : Number(first.value[1]);
  };
  const simple = (name: string, extra = "") =>
    `${name}{job="tbench-server",model="simple",version="1"${extra}}`;

  before(async () => {
    assertSystemTool("prometheus");
    server = await startServer({
      modelRepository: REPOSITORY,
      httpPort: 0,
      metricsPort: 0,
      modelControlMode: "explicit",
      loadModels: ["simple"],
      // The p50/p99 panel reads Triton's latency summaries, off unless asked for.
      metricsConfig: parseMetricsConfig(["summary_latencies=true"]),
      logger: silentLogger,
    });
    dir = mkdtempSync(join(tmpdir(), "tbench-prometheus-"));
    const target = new URL(server.metricsUrl ?? "").host;
    writeFileSync(
      join(dir, "prometheus.yml"),
      [
        "global:",
        `  scrape_interval: ${SCRAPE_SECONDS}s`,
        `  scrape_timeout: ${SCRAPE_SECONDS}s`,
        "scrape_configs:",
        "  - job_name: tbench-server",
        "    static_configs:",
        `      - targets: ["${target}"]`,
        "",
      ].join("\n"),
    );
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      "prometheus",
      [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    prometheus.stderr?.on("data", (chunk: Buffer) => {
      prometheusLog = (prometheusLog + chunk.toString()).slice(-4000);
    });
    // A first scrape of simple's counters at 0, so rates have a sample from before the traffic.
    await waitFor(`Prometheus to scrape ${target} (log: ${prometheusLog})`, async () =>
      (await instant(simple("nv_inference_count"))) === 0 ? true : undefined,
    );
    trafficStart = Date.now() / 1000;
    const infer = (rows: number, columns: number) =>
      fetch(`${server.httpUrl}/v2/models/simple/infer`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          inputs: ["INPUT0", "INPUT1"].map((name) => ({
            name,
            datatype: "INT32",
            shape: [rows, columns],
            data: Array.from({ length: rows * columns }, (_, i) => i),
          })),
        }),
      });
    for (let i = 0; i < SUCCEEDED; i++) assert.equal((await infer(ROWS, 16)).status, 200);
    // Inputs of the wrong shape fail in the core: Triton's reason OTHER.
    for (let i = 0; i < FAILED; i++) assert.equal((await infer(1, 15)).status, 400);
    // Every counter is final now; wait until Prometheus has scraped them. The failures came last, so a
    // scrape that holds all of them holds every other counter's final value too (one scrape is one
    // reading of /metrics); a scrape between the successes and the failures holds only some.
    await waitFor("Prometheus to scrape the traffic", async () =>
      (await instant(simple("nv_inference_request_failure", ',reason="OTHER"'))) === FAILED
        ? true
        : undefined,
    );
  });

  after(async () => {
    if (prometheus !== undefined && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus.once("exit", resolve));
      prometheus.kill("SIGTERM");
      await exited;
    }
    await server?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  test("nv_inference_count and the queue/compute counters are the server's exact values", async () => {
    assert.equal(await instant(simple("nv_inference_count")), SUCCEEDED * ROWS);
    assert.equal(await instant(simple("nv_inference_request_success")), SUCCEEDED);
    // No dynamic batching on simple and one request at a time: one execution per request.
    assert.equal(await instant(simple("nv_inference_exec_count")), SUCCEEDED);
    assert.equal(await instant(simple("nv_inference_request_failure", ',reason="OTHER"')), FAILED);
    for (const reason of ["REJECTED", "CANCELED", "BACKEND"]) {
      assert.equal(await instant(simple("nv_inference_request_failure", `,reason="${reason}"`)), 0, reason);
    }
    assert.equal(await instant(simple("nv_inference_pending_request_count")), 0);
    // The duration counters are the statistics extension's nanoseconds in whole microseconds.
    const stats = (await (await fetch(`${server.httpUrl}/v2/models/simple/stats`)).json()) as {
      model_stats: { inference_stats: Record<string, { count: number; ns: number }> }[];
    };
    const inference = stats.model_stats[0]?.inference_stats;
    assert.ok(inference);
    const durations: [string, string][] = [
      ["nv_inference_request_duration_us", "success"],
      ["nv_inference_queue_duration_us", "queue"],
      ["nv_inference_compute_input_duration_us", "compute_input"],
      ["nv_inference_compute_infer_duration_us", "compute_infer"],
      ["nv_inference_compute_output_duration_us", "compute_output"],
    ];
    for (const [metric, field] of durations) {
      const expected = Math.floor((inference[field]?.ns ?? Number.NaN) / 1000);
      assert.equal(await instant(simple(metric)), expected, metric);
    }
    assert.ok(((await instant(simple("nv_inference_compute_infer_duration_us"))) ?? 0) > 0);
  });

  test("the request latency summary counts every success; its quantiles are ordered and within the requests", async () => {
    assert.equal(await instant(simple("nv_inference_request_summary_us_count")), SUCCEEDED);
    const total = (await instant(simple("nv_inference_request_duration_us"))) ?? Number.NaN;
    const sum = (await instant(simple("nv_inference_request_summary_us_sum"))) ?? Number.NaN;
    // The counter is the whole-microsecond floor of the same nanoseconds the summary adds up.
    assert.ok(sum >= total && sum < total + 1, `summary sum ${sum} against counter ${total}`);
    const p50 = (await instant(simple("nv_inference_request_summary_us", ',quantile="0.5"'))) ?? Number.NaN;
    const p99 = (await instant(simple("nv_inference_request_summary_us", ',quantile="0.99"'))) ?? Number.NaN;
    assert.ok(p50 > 0 && p50 <= p99 && p99 <= sum, `p50 ${p50}, p99 ${p99}, sum ${sum}`);
    assert.equal(await instant(simple("nv_inference_queue_summary_us_count")), SUCCEEDED);
  });

  test("the model variable's query lists simple", async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8"));
    const variable = dashboard.templating.list.find((v: { name: string }) => v.name === "model");
    const match = /^label_values\((\w+), (\w+)\)$/.exec(variable?.definition ?? "");
    assert.ok(match, `model variable: expected label_values(metric, label), got ${variable?.definition}`);
    const response = await fetch(`${promUrl}/api/v1/label/${match[2]}/values?match[]=${match[1]}`);
    const body = (await response.json()) as { data: string[] };
    assert.deepEqual(body.data, ["simple"]);
  });

  test("every panel query returns data (model = simple, and All)", async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as {
      panels: { title: string; targets: { expr: string; legendFormat?: string }[] }[];
    };
    const titles = dashboard.panels.map((p) => p.title);
    assert.ok(dashboard.panels.length >= 6, `expected at least 6 panels, got ${titles.join(", ")}`);
    const end = Date.now() / 1000;
    for (const modelValue of ["simple", ".*"]) {
      for (const panel of dashboard.panels) {
        assert.ok(panel.targets.length > 0, `${panel.title}: no queries`);
        const panelSeries: Sample[] = [];
        for (const target of panel.targets) {
          // What Grafana sends: $model as the selected value (All: the variable's allValue).
          const query = target.expr
            .replaceAll("$__rate_interval", RATE_INTERVAL)
            .replaceAll("$model", modelValue);
          assert.doesNotMatch(query, /\$/, `${panel.title}: an unsubstituted variable in ${query}`);
          const series = await api("query_range", {
            query,
            start: String(Math.floor(trafficStart) - 2 * SCRAPE_SECONDS),
            end: String(Math.ceil(end)),
            step: `${STEP_SECONDS}s`,
          });
          const finite = series.flatMap((s) => s.values ?? []).filter(([, v]) => Number.isFinite(Number(v)));
          assert.ok(finite.length > 0, `${panel.title}: no data for ${query}`);
          assert.ok(
            series.every((s) => s.metric.model === "simple"),
            `${panel.title}: series of other models for ${query}`,
          );
          panelSeries.push(...series);
        }
        // The traffic shows: each panel but pending requests (0 between sequential requests) is above 0 at
        // some step; failures in the OTHER reason.
        if (panel.title.startsWith("Pending")) continue;
        const shown = panel.title.startsWith("Failures")
          ? panelSeries.filter((s) => s.metric.reason === "OTHER")
          : panelSeries;
        assert.ok(
          shown.flatMap((s) => s.values ?? []).some(([, v]) => Number(v) > 0),
          `${panel.title}: never above 0 (model = ${modelValue})`,
        );
      }
    }
  });
});
