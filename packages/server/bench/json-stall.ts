/**
 * What one large JSON body does to everyone else (issue 36, item 6), measured once, not a unit test:
 * tbench-server (its command line, in a child process) serves `simple` to 4 closed-loop clients, first
 * alone, then while one more client sends a ~30 MiB JSON infer body to identity_fp32 again and again (its
 * output asked as binary, so that what is measured is the request's decode, not the answer's encoding).
 * Prints one JSON object: `simple`'s latency p50/p99/max in each phase, the large bodies answered, the
 * load average. A server tree other than this one can be measured (e.g. an older commit's export):
 *   node --conditions=source --import tsx packages/server/bench/json-stall.ts [seconds per phase, 15] [root]
 */
import { spawn } from "node:child_process";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";

const HERE = fileURLToPath(new URL("../../../", import.meta.url));
const SECONDS = Number(process.argv[2] ?? 15);
const ROOT = process.argv[3] ?? HERE;
const SIMPLE_CLIENTS = 4;

const simpleBody = JSON.stringify({
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
  ],
});
// ~30 MiB of JSON: 6.3 M values written as "0.25,".
const LARGE_VALUES = 6_300_000;
const largeBody = Buffer.from(
  `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,${LARGE_VALUES}],"data":[` +
    `${"0.25,".repeat(LARGE_VALUES - 1)}0.25]}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`,
);

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 10) / 10;
}

async function simpleLoop(pool: Pool, until: number, latencies: number[]): Promise<void> {
  while (performance.now() < until) {
    const start = performance.now();
    const res = await pool.request({
      method: "POST",
      path: "/v2/models/simple/infer",
      headers: { "content-type": "application/json" },
      body: simpleBody,
    });
    await res.body.arrayBuffer();
    if (res.statusCode !== 200) throw new Error(`simple answered ${res.statusCode}`);
    latencies.push(performance.now() - start);
  }
}

async function largeLoop(pool: Pool, until: () => boolean): Promise<number> {
  let answered = 0;
  while (!until()) {
    const res = await pool.request({
      method: "POST",
      path: "/v2/models/identity_fp32/infer",
      headers: { "content-type": "application/json" },
      body: largeBody,
    });
    await res.body.arrayBuffer();
    if (res.statusCode !== 200) throw new Error(`the large body answered ${res.statusCode}`);
    answered++;
  }
  return answered;
}

async function phase(pool: Pool, withLarge: boolean) {
  const latencies: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  let done = false;
  const large = withLarge ? largeLoop(pool, () => done) : Promise.resolve(0);
  await Promise.all(Array.from({ length: SIMPLE_CLIENTS }, () => simpleLoop(pool, end, latencies)));
  done = true;
  const largeAnswered = await large;
  return {
    simpleRequests: latencies.length,
    simpleMs: {
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: percentile(latencies, 100),
    },
    ...(withLarge ? { largeBodiesAnswered: largeAnswered, largeBodyBytes: largeBody.byteLength } : {}),
  };
}

async function main(): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      "--conditions=source",
      "--import",
      "tsx",
      join(ROOT, "packages/server/src/cli/main.ts"),
      "--model-repository",
      join(HERE, "examples/models"),
      "--model-control-mode",
      "explicit",
      "--load-model",
      "simple",
      "--load-model",
      "identity_fp32",
      "--http-port",
      "0",
      "--allow-grpc",
      "false",
      "--allow-metrics",
      "false",
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const match = /Started HTTPService at ([\d.]+:\d+)/.exec(text);
      if (match) resolve(`http://${match[1]}`);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`server exited (${code}):\n${text}`)));
  });
  const pool = new Pool(url, { connections: 16, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const loadStart = loadavg();
  // Warm-up: both models, and the decode threads (started by the first large body).
  await simpleLoop(pool, performance.now() + 2000, []);
  let warmed = false;
  await largeLoop(pool, () => {
    const stop = warmed;
    warmed = true;
    return stop;
  });
  const alone = await phase(pool, false);
  const withLarge = await phase(pool, true);
  await pool.close();
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
  const round = (values: number[]) => values.map((v) => Math.round(v * 100) / 100);
  console.log(
    JSON.stringify(
      {
        date: new Date().toISOString(),
        server: ROOT,
        secondsPerPhase: SECONDS,
        loadAverageStart: round(loadStart),
        loadAverageEnd: round(loadavg()),
        simpleAlone: alone,
        simpleWithLargeJson: withLarge,
      },
      null,
      2,
    ),
  );
}

await main();
