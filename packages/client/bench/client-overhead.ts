// Benchmark (not a test): the client's per-call overhead under concurrency. 16 calls in flight on a
// 16-connection pool against tbench-server (child process, identity_fp32), side by side with raw undici
// carrying the exact path, headers and body the client sends, two ways: `Pool.request()` (reading the body:
// `dump()` for health, `arrayBuffer()` for infer), and `Pool.dispatch()` with a minimal handler (the floor
// under any undici-based client). Cases:
//   1. GET /v2/health/ready: `client.isServerReady()`;
//   2. a 4-byte FP32 infer, binary tensors: `prepareInfer().send()` (the client also decodes the answer);
//   3. the same infer as JSON both ways.
// Rounds rotate the contenders' order so drift on a shared CPU hits all alike; ratios are medians of
// per-round ratios. Target (issue 4's, for infer calls): the client >= 0.9x raw undici, here against the
// faster of `request` and `dispatch` in each round. Besides calls/s, the CPU time of this process per call (user + system) is reported: the
// server runs in another process, so that is the cost of the client side alone.
// Writes bench-results/client-overhead.{json,md}.
// Run: npm run bench:client (its second part), or alone:
//   node --conditions=source --import tsx packages/client/bench/client-overhead.ts [--quick] [--only CASE]
// `--quick` (or BENCH_QUICK=1): a short smoke run, written under the system's temporary folder unless
// --out DIR / BENCH_RESULTS_DIR says where; `--only health|infer-binary|infer-json`: one case, written
// nowhere.

import {
  atLeast,
  benchOptions,
  environmentMarkdown,
  median,
  medianRatio,
  rotate,
  startEnvironment,
  startTbenchServer,
  type Verdict,
  verdictMarkdown,
  writeResult,
} from "@tbench/bench-kit";
import { Pool } from "undici";
import { createHttpClient, type InferenceClient, type InferRequest } from "../src/index.js";
import { type Call, captureRequest, rawDispatch, rawOptions, rawRequest } from "./raw-undici.js";

const IN_FLIGHT = 16;
const options = benchOptions();
const QUICK = options.quick;
const ONLY = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
const ROUNDS = QUICK ? 2 : 6;
const ROUND_MS = QUICK ? 300 : 1000;
/** Issue 16's target for infer calls: >= 0.95x raw undici (here the faster raw contender per round). */
const TARGET = 0.95;

interface Tally {
  calls: number;
  ms: number;
  cpuUs: number;
}

/** Keeps IN_FLIGHT calls going for `ms`; counts completed calls and this process's CPU time. */
async function rateOf(call: Call, ms: number): Promise<Tally> {
  let calls = 0;
  let stop = false;
  const loop = async () => {
    while (!stop) {
      await call();
      calls++;
    }
  };
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const loops = Array.from({ length: IN_FLIGHT }, loop);
  await new Promise((resolve) => setTimeout(resolve, ms));
  stop = true;
  const counted = calls;
  const elapsed = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await Promise.all(loops);
  return { calls: counted, ms: elapsed, cpuUs: cpu.user + cpu.system };
}

const SIDES = ["request", "dispatch", "client"] as const;
type Side = (typeof SIDES)[number];

interface Case {
  name: string;
  label: string;
  client: Call;
  request: Call;
  dispatch: Call;
}

async function buildCases(url: string, client: InferenceClient, pool: Pool): Promise<Case[]> {
  const request = (binary: boolean): InferRequest => ({
    inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1], data: Float32Array.of(1.5) }],
    binaryInputs: binary,
    binaryOutputs: binary,
  });
  const inferCase = async (name: string, label: string, binary: boolean): Promise<Case> => {
    const prepared = client.prepareInfer("identity_fp32", request(binary));
    const wire = rawOptions(
      url,
      await captureRequest(url, (c) => c.prepareInfer("identity_fp32", request(binary)).send()),
    );
    return {
      name,
      label,
      client: () => prepared.send(),
      dispatch: rawDispatch(pool, wire),
      request: rawRequest(pool, wire, true),
    };
  };
  const health = rawOptions(url, await captureRequest(url, (c) => c.isServerReady()));
  return [
    {
      name: "health",
      label: "GET /v2/health/ready, `isServerReady()`",
      client: () => client.isServerReady(),
      dispatch: rawDispatch(pool, health),
      request: rawRequest(pool, health, false),
    },
    await inferCase(
      "infer-binary",
      "infer identity_fp32, 4-byte FP32, binary, `prepareInfer().send()`",
      true,
    ),
    await inferCase("infer-json", "infer identity_fp32, 4-byte FP32, JSON, `prepareInfer().send()`", false),
  ].filter((c) => ONLY === undefined || c.name === ONLY);
}

interface Row {
  name: string;
  label: string;
  /** Median round, per side. */
  callsPerSec: Record<Side, number>;
  callsPerSecPerRound: Record<Side, number[]>;
  /** Over all rounds, per side. */
  cpuUsPerCall: Record<Side, number>;
  /** Medians of per-round ratios. */
  clientOverRequest: number;
  clientOverDispatch: number;
  /** Against the faster of request and dispatch in each round. */
  clientOverStrongest: number;
  target: number | null;
  verdict: Verdict | null;
}

async function measureCase(c: Case): Promise<Row> {
  for (const side of SIDES) await rateOf(c[side], 300); // warm-up: connections open, JIT
  const rates = { request: [], dispatch: [], client: [] } as Record<Side, number[]>;
  const cpu = { request: 0, dispatch: 0, client: 0 } as Record<Side, number>;
  const calls = { request: 0, dispatch: 0, client: 0 } as Record<Side, number>;
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of rotate(SIDES, round)) {
      const r = await rateOf(c[side], ROUND_MS);
      rates[side].push((r.calls / r.ms) * 1000);
      cpu[side] += r.cpuUs;
      calls[side] += r.calls;
    }
  }
  const strongest = rates.dispatch.map((d, i) => Math.max(d, rates.request[i]!));
  const clientOverStrongest = medianRatio(rates.client, strongest);
  // The target is for infer calls; the health row is reported without one.
  const target = c.name === "health" ? null : TARGET;
  return {
    name: c.name,
    label: c.label,
    callsPerSec: {
      request: median(rates.request),
      dispatch: median(rates.dispatch),
      client: median(rates.client),
    },
    callsPerSecPerRound: rates,
    cpuUsPerCall: {
      request: cpu.request / calls.request,
      dispatch: cpu.dispatch / calls.dispatch,
      client: cpu.client / calls.client,
    },
    clientOverRequest: medianRatio(rates.client, rates.request),
    clientOverDispatch: medianRatio(rates.client, rates.dispatch),
    clientOverStrongest,
    target,
    verdict: target === null ? null : atLeast(clientOverStrongest, target),
  };
}

async function main(): Promise<void> {
  const finishEnvironment = startEnvironment(options);
  const server = await startTbenchServer({ from: "source", models: ["identity_fp32"] });
  const pool = new Pool(server.httpUrl, { connections: IN_FLIGHT });
  const client = createHttpClient({ url: server.httpUrl, connections: IN_FLIGHT, maxRetries: 0 });
  try {
    const rows: Row[] = [];
    for (const c of await buildCases(server.httpUrl, client, pool)) rows.push(await measureCase(c));
    const environment = finishEnvironment();
    const result = {
      benchmark: "@tbench/client per-call overhead vs raw undici (request and dispatch), 16 calls in flight",
      environment,
      inFlight: IN_FLIGHT,
      rounds: ROUNDS,
      roundMs: ROUND_MS,
      rows,
    };
    const f = (x: number) => x.toFixed(2);
    const md = [
      "# @tbench/client per-call overhead vs raw undici, 16 calls in flight",
      "",
      environmentMarkdown(environment),
      "",
      `${IN_FLIGHT} calls in flight on a ${IN_FLIGHT}-connection pool, tbench-server in a child process, ` +
        `${ROUNDS} rounds of ${ROUND_MS / 1000} s per contender, the order rotating. Raw undici sends the exact ` +
        "path, headers and body the client sends: `Pool.request()` reading the body (`dump()` for health, " +
        "`arrayBuffer()` for infer), and `Pool.dispatch()` with a handler that only waits for the end (the " +
        "floor under any undici-based client). The client also checks the status and, for infer, decodes the answer into typed " +
        'outputs. calls/s: the median round; ratios: medians of per-round ratios, "strongest" dividing by the ' +
        "faster raw contender of each round. CPU us/call: this process's " +
        "user + system CPU per completed call over all rounds (the server runs in another process).",
      "",
      "| Case | calls/s: request / dispatch / client | client / request | client / dispatch | client / strongest | target | verdict | CPU us/call: request / dispatch / client |",
      "| --- | --- | --- | --- | --- | --- | --- | --- |",
      ...rows.map(
        (r) =>
          `| ${r.label} | ${r.callsPerSec.request.toFixed(0)} / ${r.callsPerSec.dispatch.toFixed(0)} / ${r.callsPerSec.client.toFixed(0)} | ` +
          `${f(r.clientOverRequest)}x | ${f(r.clientOverDispatch)}x | ${f(r.clientOverStrongest)}x | ` +
          `${r.target === null ? "-" : `>= ${r.target}x`} | ` +
          `${r.verdict === null ? "- (no target)" : verdictMarkdown(r.verdict)} | ` +
          `${r.cpuUsPerCall.request.toFixed(1)} / ${r.cpuUsPerCall.dispatch.toFixed(1)} / ${r.cpuUsPerCall.client.toFixed(1)} |`,
      ),
      "",
    ].join("\n");
    if (ONLY === undefined) {
      const paths = await writeResult(options, "client-overhead", result, md);
      process.stdout.write(`${md}\nwrote ${paths.join(", ")}\n`);
    } else {
      process.stdout.write(md);
    }
  } finally {
    await client.close();
    await pool.close();
    await server.close();
  }
}

await main();
