// Benchmark (not a test): @tbench/client against a raw undici request carrying the same bytes, side by
// side in one run, on one keep-alive connection to tbench-server (in a child process) with identity_fp32:
//   1. a 1 MiB FP32 tensor round trip: p50 latency (target: client within 10% of raw undici);
//   2. a small (4-byte) tensor: sequential calls per second (target: client >= 90% of raw undici).
// Rounds alternate between the contenders so drift in a shared CPU hits both alike.
// Writes bench-results/client.{json,md}. Run: npm run bench:client
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { createHttpClient, type InferRequest } from "../src/index.js";
import { spawnServer } from "./spawn-server.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const OUT = `${ROOT}bench-results/`;
const LARGE_ELEMENTS = 262_144; // 1 MiB of FP32
/** `--quick`: a short smoke run that checks the program works and writes nothing. */
const QUICK = process.argv.includes("--quick");
const LARGE_ROUNDS = QUICK ? 1 : 8;
const LARGE_PER_ROUND = QUICK ? 3 : 25;
const SMALL_ROUNDS = QUICK ? 1 : 8;
const SMALL_ROUND_MS = QUICK ? 200 : 1000;

function request(elements: number): InferRequest {
  return {
    inputs: [
      {
        name: "INPUT0",
        datatype: "FP32",
        shape: [1, elements],
        data: Float32Array.from({ length: elements }, (_, i) => i),
      },
    ],
  };
}

/** The exact bytes the client sends for `req`, captured once, so raw undici sends the same request. */
function rawBody(req: InferRequest): { body: Buffer; headers: Record<string, string> } {
  const input = req.inputs[0]!;
  const data = input.data as Float32Array;
  const json = JSON.stringify({
    inputs: [
      {
        name: input.name,
        shape: input.shape,
        datatype: input.datatype,
        parameters: { binary_data_size: data.byteLength },
      },
    ],
    parameters: { binary_data_output: true },
  });
  const header = Buffer.from(json);
  return {
    body: Buffer.concat([header, Buffer.from(data.buffer, data.byteOffset, data.byteLength)]),
    headers: {
      "content-type": "application/octet-stream",
      "inference-header-content-length": String(header.length),
    },
  };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

type Contender = () => Promise<unknown>;

async function latencies(run: Contender, n: number, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await run();
    into.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
}

async function countFor(run: Contender, ms: number): Promise<{ calls: number; ms: number }> {
  const t0 = performance.now();
  let calls = 0;
  while (performance.now() - t0 < ms) {
    await run();
    calls++;
  }
  return { calls, ms: performance.now() - t0 };
}

async function main(): Promise<void> {
  const loadBefore = loadavg()[0]!;
  const server = await spawnServer(["identity_fp32"]);
  const path = "/v2/models/identity_fp32/infer";
  const pool = new Pool(server.url, { connections: 1 });
  const client = createHttpClient({ url: server.url, connections: 1, maxRetries: 0 });
  const raw =
    (b: { body: Buffer; headers: Record<string, string> }): Contender =>
    async () => {
      const res = await pool.request({ method: "POST", path, headers: b.headers, body: b.body });
      const bytes = await res.body.arrayBuffer();
      if (res.statusCode !== 200) throw new Error(`raw undici: HTTP ${res.statusCode}`);
      return bytes;
    };
  try {
    // 1. 1 MiB round trip
    const large = request(LARGE_ELEMENTS);
    const largePrepared = client.prepareInfer("identity_fp32", large);
    const largeRaw = raw(rawBody(large));
    const largeClient: Contender = async () => {
      const r = await client.infer("identity_fp32", large);
      if (r.outputs[0]!.as("FP32").length !== LARGE_ELEMENTS) throw new Error("wrong output");
    };
    const largeSend: Contender = async () => (await largePrepared.send()).outputs[0]!.as("FP32");
    for (const c of [largeRaw, largeClient, largeSend]) await latencies(c, 10, []); // warm-up
    const lat = { raw: [] as number[], infer: [] as number[], prepared: [] as number[] };
    for (let round = 0; round < LARGE_ROUNDS; round++) {
      await latencies(largeRaw, LARGE_PER_ROUND, lat.raw);
      await latencies(largeClient, LARGE_PER_ROUND, lat.infer);
      await latencies(largeSend, LARGE_PER_ROUND, lat.prepared);
    }

    // 2. small tensor calls per second on one connection
    const small = request(1);
    const smallPrepared = client.prepareInfer("identity_fp32", small);
    const smallRaw = raw(rawBody(small));
    const smallClient: Contender = () => client.infer("identity_fp32", small);
    const smallSend: Contender = () => smallPrepared.send();
    for (const c of [smallRaw, smallClient, smallSend]) await countFor(c, 300); // warm-up
    const counts = { raw: { calls: 0, ms: 0 }, infer: { calls: 0, ms: 0 }, prepared: { calls: 0, ms: 0 } };
    for (let round = 0; round < SMALL_ROUNDS; round++) {
      for (const [name, c] of [
        ["raw", smallRaw],
        ["infer", smallClient],
        ["prepared", smallSend],
      ] as const) {
        const r = await countFor(c, SMALL_ROUND_MS);
        counts[name].calls += r.calls;
        counts[name].ms += r.ms;
      }
    }
    const rate = (x: { calls: number; ms: number }) => (x.calls / x.ms) * 1000;

    const p50 = {
      raw: percentile(lat.raw, 50),
      infer: percentile(lat.infer, 50),
      prepared: percentile(lat.prepared, 50),
    };
    const p99 = {
      raw: percentile(lat.raw, 99),
      infer: percentile(lat.infer, 99),
      prepared: percentile(lat.prepared, 99),
    };
    const rates = { raw: rate(counts.raw), infer: rate(counts.infer), prepared: rate(counts.prepared) };
    const result = {
      date: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model ?? "",
        node: process.version,
        loadAverageBefore: loadBefore,
      },
      note: "one run on a shared machine (see the load average); server in a child process; one keep-alive connection.",
      largeRoundTrip: {
        tensorBytes: LARGE_ELEMENTS * 4,
        requestsEach: LARGE_ROUNDS * LARGE_PER_ROUND,
        p50Ms: p50,
        p99Ms: p99,
        inferOverRaw: p50.infer / p50.raw,
        preparedOverRaw: p50.prepared / p50.raw,
        target: "client p50 <= 1.10 x raw undici p50",
        met: p50.infer <= p50.raw * 1.1,
      },
      smallTensorRate: {
        tensorBytes: 4,
        secondsEach: (SMALL_ROUNDS * SMALL_ROUND_MS) / 1000,
        callsPerSecond: rates,
        inferOverRaw: rates.infer / rates.raw,
        preparedOverRaw: rates.prepared / rates.raw,
        target: "client calls/s >= 0.90 x raw undici calls/s",
        met: rates.infer >= rates.raw * 0.9,
      },
    };
    if (!QUICK) {
      await mkdir(OUT, { recursive: true });
      await writeFile(`${OUT}client.json`, `${JSON.stringify(result, null, 2)}\n`);
    }
    const f = (x: number) => x.toFixed(2);
    const md = `# @tbench/client vs raw undici

${result.date}, ${result.machine.cpus} CPUs (${result.machine.cpuModel}), Node ${result.machine.node}. Load average before: ${loadBefore.toFixed(2)}. ${result.note} Rounds alternate raw undici, \`client.infer()\` and \`prepareInfer().send()\`. Raw undici sends the same bytes (pre-encoded) with \`Pool.request\` and reads the body with \`arrayBuffer()\`; the client also encodes (infer only) and decodes the answer into typed outputs.

## 1 MiB FP32 round trip (identity_fp32, ${result.largeRoundTrip.requestsEach} requests each)

| Contender | p50 ms | p99 ms | p50 / raw |
| --- | --- | --- | --- |
| raw undici | ${f(p50.raw)} | ${f(p99.raw)} | 1.00x |
| client.infer() | ${f(p50.infer)} | ${f(p99.infer)} | ${f(result.largeRoundTrip.inferOverRaw)}x |
| prepareInfer().send() | ${f(p50.prepared)} | ${f(p99.prepared)} | ${f(result.largeRoundTrip.preparedOverRaw)}x |

Target: client.infer() p50 within 10% of raw undici: **${result.largeRoundTrip.met ? "met" : "not met"}**.

## Small tensor (4 bytes), calls per second on one connection (${result.smallTensorRate.secondsEach} s each)

| Contender | calls/s | / raw |
| --- | --- | --- |
| raw undici | ${rates.raw.toFixed(0)} | 1.00x |
| client.infer() | ${rates.infer.toFixed(0)} | ${f(result.smallTensorRate.inferOverRaw)}x |
| prepareInfer().send() | ${rates.prepared.toFixed(0)} | ${f(result.smallTensorRate.preparedOverRaw)}x |

Target: client.infer() >= 90% of raw undici: **${result.smallTensorRate.met ? "met" : "not met"}**.
`;
    if (!QUICK) await writeFile(`${OUT}client.md`, md);
    process.stdout.write(md);
  } finally {
    await client.close();
    await pool.close();
    await server.close();
  }
}

await main();
