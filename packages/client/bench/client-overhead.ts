// Benchmark (not a test): the client's per-call overhead under concurrency. 16 calls in flight on a
// 16-connection pool against tbench-server (child process, identity_fp32), side by side with raw undici
// carrying the exact path, headers and body the client sends, two ways: `Pool.request()` (reading the body:
// `dump()` for health, `arrayBuffer()` for infer), and `Pool.dispatch()` with a minimal handler that only
// counts (the floor under any undici-based client). Cases:
//   1. GET /v2/health/ready: `client.isServerReady()`;
//   2. a 4-byte FP32 infer, binary tensors: `prepareInfer().send()` (the client also decodes the answer);
//   3. the same infer as JSON both ways (what `npm run bench:tbench` sends).
// Rounds alternate the contenders so drift on a shared CPU hits all alike. Besides calls/s, the CPU time
// of this process per call (user + system) is reported: the server runs in another process, so that is
// the cost of the client side alone.
// Prints a Markdown table and writes bench-results/client-overhead.{json,md}.
// Run: npm run bench:client (its second part), or alone:
//   node --conditions=source --import tsx packages/client/bench/client-overhead.ts [--quick] [--only CASE]
// `--quick`: a short smoke run that writes nothing; `--only health|infer-binary|infer-json`: one case
// (writes nothing either).
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { type Dispatcher, Pool } from "undici";
import { createHttpClient, type InferenceClient, type InferRequest } from "../src/index.js";
import { spawnServer } from "./spawn-server.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const OUT = `${ROOT}bench-results/`;
const IN_FLIGHT = 16;
const QUICK = process.argv.includes("--quick");
const ONLY = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
const WRITE = !QUICK && ONLY === undefined;
const ROUNDS = QUICK ? 1 : 6;
const ROUND_MS = QUICK ? 300 : 1000;

type Call = () => Promise<unknown>;

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

/** What the client put on the wire for one call, captured through the `dispatcher` option. */
async function captureRequest(
  url: string,
  send: (c: InferenceClient) => Promise<unknown>,
): Promise<Dispatcher.DispatchOptions> {
  const pool = new Pool(url, { connections: 1 });
  let captured: Dispatcher.DispatchOptions | undefined;
  const spy = {
    dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) {
      captured ??= options;
      return pool.dispatch(options, handler);
    },
  } as unknown as Dispatcher;
  const client = createHttpClient({ url, maxRetries: 0, dispatcher: spy });
  await send(client);
  await client.close();
  await pool.close();
  if (captured === undefined) throw new Error("nothing was dispatched");
  return captured;
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

/** Raw `Pool.dispatch` with a minimal handler (undici's original handler API): resolves with the status. */
function rawDispatch(pool: Pool, options: Dispatcher.DispatchOptions): Call {
  return () =>
    new Promise<number>((resolve, reject) => {
      let status = 0;
      pool.dispatch(options, {
        onConnect() {},
        onHeaders(statusCode: number) {
          status = statusCode;
          return true;
        },
        onData() {
          return true;
        },
        onComplete() {
          resolve(status);
        },
        onError: reject,
      });
    });
}

async function buildCases(url: string, client: InferenceClient, pool: Pool): Promise<Case[]> {
  const request = (binary: boolean): InferRequest => ({
    inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1], data: Float32Array.of(1.5) }],
    binaryInputs: binary,
    binaryOutputs: binary,
  });
  const inferCase = async (name: string, label: string, binary: boolean): Promise<Case> => {
    const prepared = client.prepareInfer("identity_fp32", request(binary));
    const wire = await captureRequest(url, (c) => c.prepareInfer("identity_fp32", request(binary)).send());
    const options = {
      origin: url,
      method: "POST" as const,
      path: wire.path,
      headers: wire.headers as Record<string, string>,
      body: wire.body as Buffer,
    };
    return {
      name,
      label,
      client: () => prepared.send(),
      dispatch: rawDispatch(pool, options),
      request: async () => {
        const res = await pool.request(options);
        const bytes = await res.body.arrayBuffer();
        if (res.statusCode !== 200) throw new Error(`raw undici: HTTP ${res.statusCode}`);
        return bytes;
      },
    };
  };
  const health = await captureRequest(url, (c) => c.isServerReady());
  const healthOptions = {
    origin: url,
    method: "GET" as const,
    path: health.path,
    headers: health.headers as Record<string, string>,
  };
  return [
    {
      name: "health",
      label: "GET /v2/health/ready, `isServerReady()`",
      client: () => client.isServerReady(),
      dispatch: rawDispatch(pool, healthOptions),
      request: async () => {
        const res = await pool.request(healthOptions);
        await res.body.dump();
        return res.statusCode === 200;
      },
    },
    await inferCase(
      "infer-binary",
      "infer identity_fp32, 4-byte FP32, binary, `prepareInfer().send()`",
      true,
    ),
    await inferCase("infer-json", "infer identity_fp32, 4-byte FP32, JSON, `prepareInfer().send()`", false),
  ].filter((c) => ONLY === undefined || c.name === ONLY);
}

async function main(): Promise<void> {
  const loadBefore = loadavg()[0]!;
  const server = await spawnServer(["identity_fp32"]);
  const pool = new Pool(server.url, { connections: IN_FLIGHT });
  const client = createHttpClient({ url: server.url, connections: IN_FLIGHT, maxRetries: 0 });
  try {
    const cases = await buildCases(server.url, client, pool);
    const rows = [];
    for (const c of cases) {
      for (const side of SIDES) await rateOf(c[side], 300); // warm-up: connections open, JIT
      const sum = {} as Record<Side, Tally>;
      for (const side of SIDES) sum[side] = { calls: 0, ms: 0, cpuUs: 0 };
      for (let round = 0; round < ROUNDS; round++) {
        // Rotate the order each round, so no contender always follows the same one.
        for (let i = 0; i < SIDES.length; i++) {
          const side = SIDES[(round + i) % SIDES.length]!;
          const r = await rateOf(c[side], ROUND_MS);
          sum[side].calls += r.calls;
          sum[side].ms += r.ms;
          sum[side].cpuUs += r.cpuUs;
        }
      }
      const perSec = (t: Tally) => (t.calls / t.ms) * 1000;
      const cpuUsPerCall = (t: Tally) => t.cpuUs / t.calls;
      rows.push({
        name: c.name,
        label: c.label,
        callsPerSec: {
          request: perSec(sum.request),
          dispatch: perSec(sum.dispatch),
          client: perSec(sum.client),
        },
        cpuUsPerCall: {
          request: cpuUsPerCall(sum.request),
          dispatch: cpuUsPerCall(sum.dispatch),
          client: cpuUsPerCall(sum.client),
        },
        clientOverRequest: perSec(sum.client) / perSec(sum.request),
        clientOverDispatch: perSec(sum.client) / perSec(sum.dispatch),
      });
    }
    const result = {
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? "", node: process.version },
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadavg()[0]!,
      inFlight: IN_FLIGHT,
      secondsEach: (ROUNDS * ROUND_MS) / 1000,
      rows,
    };
    const md = [
      "# @tbench/client per-call overhead vs raw undici, 16 calls in flight",
      "",
      `${result.date}, ${result.machine.cpus} CPUs (${result.machine.cpuModel}), Node ${result.machine.node}. ` +
        `Load average (1 min) before/after: ${loadBefore.toFixed(2)} / ${result.loadAverageAfter.toFixed(2)}. ` +
        `${IN_FLIGHT} calls in flight on a ${IN_FLIGHT}-connection pool, tbench-server in a child process, ` +
        `${result.secondsEach} s per contender in rotating rounds. Raw undici sends the exact path, headers and ` +
        "body the client sends: `Pool.request()` reading the body (`dump()` for health, `arrayBuffer()` for infer), " +
        "and `Pool.dispatch()` with a handler that only counts. The client also checks the status and, for infer, " +
        "decodes the answer into typed outputs. CPU us/call: this process's user + system CPU per completed call " +
        "(the server runs in another process).",
      "",
      "| Case | calls/s: request / dispatch / client | client / request | client / dispatch | CPU us/call: request / dispatch / client |",
      "| --- | --- | --- | --- | --- |",
      ...rows.map(
        (r) =>
          `| ${r.label} | ${r.callsPerSec.request.toFixed(0)} / ${r.callsPerSec.dispatch.toFixed(0)} / ${r.callsPerSec.client.toFixed(0)} | ` +
          `${r.clientOverRequest.toFixed(2)}x | ${r.clientOverDispatch.toFixed(2)}x | ` +
          `${r.cpuUsPerCall.request.toFixed(1)} / ${r.cpuUsPerCall.dispatch.toFixed(1)} / ${r.cpuUsPerCall.client.toFixed(1)} |`,
      ),
      "",
    ].join("\n");
    if (WRITE) {
      await mkdir(OUT, { recursive: true });
      await writeFile(`${OUT}client-overhead.json`, `${JSON.stringify(result, null, 2)}\n`);
      await writeFile(`${OUT}client-overhead.md`, md);
    }
    process.stdout.write(md);
  } finally {
    await client.close();
    await pool.close();
    await server.close();
  }
}

await main();
