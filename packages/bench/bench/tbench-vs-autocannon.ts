// Benchmark (not a test): tbench's request rate against autocannon's on the same trivial endpoints, same
// connections, same machine, one run: GET /v2/health/ready, and infer on identity_fp32 with a 4-byte input
// (JSON both ways for both tools, so they send and parse the same bytes). Also a bare loop of the same
// @tbench/client calls, the ceiling for tbench. Writes bench-results/tbench.{json,md}.
// Run: npm run bench:tbench  (builds models and packages first).
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { createHttpClient } from "@tbench/client";
import autocannon from "autocannon";
import { createLocalLoadDriver } from "../src/load/load-driver.js";
import { createSender, type SenderSpec } from "../src/load/sender-factory.js";
import { spawnServer } from "./spawn-server.js";

const CONNECTIONS = 16;
const WARMUP_S = 1;
const DURATION_S = 5;
const OUT = fileURLToPath(new URL("../../../bench-results/", import.meta.url));
const INFER_BODY = JSON.stringify({
  inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1], data: [1.5] }],
});

interface Figure {
  requestsPerSec: number;
  requests: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
}

async function runAutocannon(url: string, method: "GET" | "POST", body?: string): Promise<Figure> {
  const options = {
    url,
    method,
    connections: CONNECTIONS,
    ...(body !== undefined ? { body, headers: { "content-type": "application/json" } } : {}),
  };
  await autocannon({ ...options, duration: WARMUP_S });
  const result = await autocannon({ ...options, duration: DURATION_S });
  return {
    requestsPerSec: result.requests.total / DURATION_S,
    requests: result.requests.total,
    errors: result.errors + result.non2xx + result.timeouts,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
  };
}

/** The floor under tbench: the same client calls in a bare loop, no measurement at all. */
async function runBareClient(url: string, target: "health" | "infer"): Promise<number> {
  const client = createHttpClient({ url, connections: CONNECTIONS, maxRetries: 0 });
  const prepared = client.prepareInfer("identity_fp32", {
    inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1], data: Float32Array.of(1.5) }],
    binaryInputs: false,
    binaryOutputs: false,
  });
  let count = 0;
  let stop = false;
  const loop = async () => {
    while (!stop) {
      if (target === "health") await client.isServerReady();
      else await prepared.send();
      count += 1;
    }
  };
  const loops = Array.from({ length: CONNECTIONS }, loop);
  await new Promise((resolve) => setTimeout(resolve, WARMUP_S * 1000));
  count = 0;
  const start = performance.now();
  await new Promise((resolve) => setTimeout(resolve, DURATION_S * 1000));
  const rate = count / ((performance.now() - start) / 1000);
  stop = true;
  await Promise.all(loops);
  await client.close();
  return rate;
}

async function runTbench(spec: SenderSpec): Promise<Figure> {
  const driver = createLocalLoadDriver({
    sender: await createSender(spec),
    rate: {
      distribution: "constant",
      seed: 1,
      customIntervalsMs: undefined,
      maxInFlight: Infinity,
      rateShare: 1,
      phase: 0,
    },
    mode: "concurrency",
    keepRequests: false,
  });
  try {
    await driver.apply({ mode: "concurrency", value: CONNECTIONS });
    await new Promise((resolve) => setTimeout(resolve, WARMUP_S * 1000));
    await driver.collect();
    const start = performance.now();
    await new Promise((resolve) => setTimeout(resolve, DURATION_S * 1000));
    const part = await driver.collect();
    const seconds = (performance.now() - start) / 1000;
    await driver.stop();
    return {
      requestsPerSec: part.successCount / seconds,
      requests: part.successCount,
      errors: part.errorCount,
      p50Ms: part.latency.getValueAtPercentile(50) / 1000,
      p99Ms: part.latency.getValueAtPercentile(99) / 1000,
    };
  } finally {
    await driver.close();
  }
}

const server = await spawnServer(["identity_fp32"]);
try {
  const base: Omit<SenderSpec, "target"> = {
    url: server.httpUrl,
    headers: {},
    connections: CONNECTIONS,
    model: "identity_fp32",
    modelVersion: undefined,
    requests: [
      {
        inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1], data: Float32Array.of(1.5) }],
        expected: undefined,
      },
    ],
    binaryInputs: false,
    binaryOutputs: false,
  };
  const loadBefore = loadavg()[0] ?? 0;
  const health = {
    autocannon: await runAutocannon(`${server.httpUrl}/v2/health/ready`, "GET"),
    tbench: await runTbench({ ...base, target: "health" }),
    bareClientRequestsPerSec: await runBareClient(server.httpUrl, "health"),
  };
  const infer = {
    autocannon: await runAutocannon(`${server.httpUrl}/v2/models/identity_fp32/infer`, "POST", INFER_BODY),
    tbench: await runTbench({ ...base, target: "infer" }),
    bareClientRequestsPerSec: await runBareClient(server.httpUrl, "infer"),
  };
  const result = {
    benchmark: "tbench vs autocannon, same endpoint, same connections, one run",
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      node: process.version,
      loadAverage1mBefore: loadBefore,
    },
    note: "one run on a shared machine (see the load average); server in a child process, each load generator single-threaded",
    connections: CONNECTIONS,
    durationS: DURATION_S,
    warmupS: WARMUP_S,
    health: { ...health, ratio: health.tbench.requestsPerSec / health.autocannon.requestsPerSec },
    infer: { ...infer, ratio: infer.tbench.requestsPerSec / infer.autocannon.requestsPerSec },
    target: 0.9,
  };
  const row = (
    name: string,
    r: { autocannon: Figure; tbench: Figure; ratio: number; bareClientRequestsPerSec: number },
  ) =>
    `| ${name} | ${r.autocannon.requestsPerSec.toFixed(0)} | ${r.tbench.requestsPerSec.toFixed(0)} | ${r.ratio.toFixed(2)}x | ` +
    `${r.bareClientRequestsPerSec.toFixed(0)} | ` +
    `${r.autocannon.p50Ms.toFixed(2)} / ${r.autocannon.p99Ms.toFixed(2)} | ${r.tbench.p50Ms.toFixed(2)} / ${r.tbench.p99Ms.toFixed(2)} | ` +
    `${r.autocannon.errors} / ${r.tbench.errors} |`;
  const markdown = [
    "# tbench vs autocannon",
    "",
    `${result.date}, ${result.machine.cpus} CPUs (${result.machine.cpuModel}), Node ${result.machine.node}, ` +
      `${CONNECTIONS} connections, ${DURATION_S} s per tool after ${WARMUP_S} s warmup, one run. ` +
      `Load average before: ${loadBefore.toFixed(2)}. ${result.note}.`,
    "",
    "| Endpoint | autocannon req/s | tbench req/s | tbench / autocannon | bare @tbench/client loop req/s | autocannon p50/p99 ms | tbench p50/p99 ms | errors (ac / tb) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    row("GET /v2/health/ready", result.health),
    row("infer identity_fp32, 4-byte FP32, JSON", result.infer),
    "",
    `Target: tbench >= ${result.target}x autocannon. The bare client loop (the same @tbench/client calls, ` +
      "16 at a time, nothing measured) is the ceiling for tbench, which drives load through that client.",
    "",
  ].join("\n");
  await mkdir(OUT, { recursive: true });
  await writeFile(`${OUT}tbench.json`, `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(`${OUT}tbench.md`, markdown);
  process.stdout.write(markdown);
} finally {
  await server.close();
}
