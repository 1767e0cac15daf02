// Benchmark (not a test): tbench's request rate against autocannon's on the same trivial endpoints, same
// connections, same machine, one process: GET /v2/health/ready, and infer on identity_fp32 with a 4-byte input
// (JSON both ways for both tools, so they send and parse the same bytes). Also a bare loop of the same
// @tbench/client calls, the ceiling for tbench. Each contender runs ROUNDS times, interleaved, the order
// rotating each round (whoever runs first or after another tool is not always the same one); the figures
// are each contender's median round. Writes bench-results/tbench.{json,md}.
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
const ROUNDS = 3;
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

type Contender = "autocannon" | "tbench" | "bareClient";
const ORDER: readonly Contender[] = ["autocannon", "tbench", "bareClient"];

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** The round whose rate is the median of a contender's rounds (its latencies are reported). */
function medianRound(rounds: readonly Figure[]): Figure {
  const rate = median(rounds.map((r) => r.requestsPerSec));
  return rounds.find((r) => r.requestsPerSec === rate) ?? rounds[0]!;
}

interface EndpointResult {
  autocannon: Figure;
  tbench: Figure;
  bareClientRequestsPerSec: number;
  ratio: number;
  tbenchToBareClient: number;
  rounds: { order: Contender[]; autocannon: number; tbench: number; bareClient: number }[];
}

async function runEndpoint(run: Record<Contender, () => Promise<Figure>>): Promise<EndpointResult> {
  const figures: Record<Contender, Figure[]> = { autocannon: [], tbench: [], bareClient: [] };
  const rounds: EndpointResult["rounds"] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = ORDER.map((_, i) => ORDER[(i + round) % ORDER.length]!);
    const rates: Partial<Record<Contender, number>> = {};
    for (const contender of order) {
      const figure = await run[contender]();
      figures[contender].push(figure);
      rates[contender] = figure.requestsPerSec;
    }
    rounds.push({
      order,
      autocannon: rates.autocannon!,
      tbench: rates.tbench!,
      bareClient: rates.bareClient!,
    });
  }
  const autocannonFigure = medianRound(figures.autocannon);
  const tbenchFigure = medianRound(figures.tbench);
  const bare = median(figures.bareClient.map((f) => f.requestsPerSec));
  return {
    autocannon: autocannonFigure,
    tbench: tbenchFigure,
    bareClientRequestsPerSec: bare,
    ratio: tbenchFigure.requestsPerSec / autocannonFigure.requestsPerSec,
    tbenchToBareClient: tbenchFigure.requestsPerSec / bare,
    rounds,
  };
}

const bareFigure = async (url: string, target: "health" | "infer"): Promise<Figure> => ({
  requestsPerSec: await runBareClient(url, target),
  requests: 0,
  errors: 0,
  p50Ms: 0,
  p99Ms: 0,
});

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
  const health = await runEndpoint({
    autocannon: () => runAutocannon(`${server.httpUrl}/v2/health/ready`, "GET"),
    tbench: () => runTbench({ ...base, target: "health" }),
    bareClient: () => bareFigure(server.httpUrl, "health"),
  });
  const infer = await runEndpoint({
    autocannon: () => runAutocannon(`${server.httpUrl}/v2/models/identity_fp32/infer`, "POST", INFER_BODY),
    tbench: () => runTbench({ ...base, target: "infer" }),
    bareClient: () => bareFigure(server.httpUrl, "infer"),
  });
  const loadAfter = loadavg()[0] ?? 0;
  const result = {
    benchmark: "tbench vs autocannon, same endpoint, same connections, one process, interleaved rounds",
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      node: process.version,
      loadAverage1mBefore: loadBefore,
      loadAverage1mAfter: loadAfter,
    },
    note:
      `${ROUNDS} rounds per contender, interleaved, order rotating; each figure is the contender's median round ` +
      "(see the load average); server in a child process, each load generator single-threaded",
    connections: CONNECTIONS,
    durationS: DURATION_S,
    warmupS: WARMUP_S,
    rounds: ROUNDS,
    health,
    infer,
    target: 0.9,
  };
  const row = (name: string, r: EndpointResult) =>
    `| ${name} | ${r.autocannon.requestsPerSec.toFixed(0)} | ${r.tbench.requestsPerSec.toFixed(0)} | ${r.ratio.toFixed(2)}x | ` +
    `${r.bareClientRequestsPerSec.toFixed(0)} | ${r.tbenchToBareClient.toFixed(2)}x | ` +
    `${r.autocannon.p50Ms.toFixed(2)} / ${r.autocannon.p99Ms.toFixed(2)} | ${r.tbench.p50Ms.toFixed(2)} / ${r.tbench.p99Ms.toFixed(2)} | ` +
    `${r.autocannon.errors} / ${r.tbench.errors} |`;
  const roundRows = (name: string, r: EndpointResult) =>
    r.rounds.map(
      (round, i) =>
        `| ${name} | ${i + 1} | ${round.order.join(", ")} | ${round.autocannon.toFixed(0)} | ${round.tbench.toFixed(0)} | ` +
        `${round.bareClient.toFixed(0)} | ${(round.tbench / round.autocannon).toFixed(2)}x | ${(round.tbench / round.bareClient).toFixed(2)}x |`,
    );
  const markdown = [
    "# tbench vs autocannon",
    "",
    `${result.date}, ${result.machine.cpus} CPUs (${result.machine.cpuModel}), Node ${result.machine.node}, ` +
      `${CONNECTIONS} connections, ${DURATION_S} s per tool after ${WARMUP_S} s warmup, ${ROUNDS} rounds. ` +
      `Load average before: ${loadBefore.toFixed(2)}, after: ${loadAfter.toFixed(2)}. ${result.note}.`,
    "",
    "| Endpoint | autocannon req/s | tbench req/s | tbench / autocannon | bare @tbench/client loop req/s | tbench / bare loop | autocannon p50/p99 ms | tbench p50/p99 ms | errors (ac / tb) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    row("GET /v2/health/ready", result.health),
    row("infer identity_fp32, 4-byte FP32, JSON", result.infer),
    "",
    `Target: tbench >= ${result.target}x autocannon. The bare client loop (the same @tbench/client calls, ` +
      "16 at a time, nothing measured) is the ceiling for tbench, which drives load through that client.",
    "",
    "Every round (req/s):",
    "",
    "| Endpoint | Round | Order | autocannon | tbench | bare loop | tbench / autocannon | tbench / bare loop |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...roundRows("health", result.health),
    ...roundRows("infer", result.infer),
    "",
  ].join("\n");
  await mkdir(OUT, { recursive: true });
  await writeFile(`${OUT}tbench.json`, `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(`${OUT}tbench.md`, markdown);
  process.stdout.write(markdown);
} finally {
  await server.close();
}
