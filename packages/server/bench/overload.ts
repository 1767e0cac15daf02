/**
 * Overload with a queue limit (issue 14, item 1), measured once, not a unit test: tbench-server (its command
 * line, in a child process) serves `heavy` with `max_queue_size: 16`, each request carrying 32 rows (its
 * max_batch_size, so requests never share a run: the model, not the HTTP front end, is the bottleneck, as
 * on a real deployment). The program finds the sustainable rate (closed loop, 16 in flight), then offers an open-loop load at half of it and at four times it, and
 * reports for each: answers by status, latency p50/p99 of the 200s and of the 503s, the 200s' p99 per 5 s
 * window (steady or not), and the server's RSS before and after. Prints one JSON object.
 *   node --conditions=source --import tsx packages/server/bench/overload.ts [seconds at 4x, default 20]
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ROOT, startTbenchServer } from "@tbench/bench-kit";
import { Pool } from "undici";

const OVERLOAD_SECONDS = Number(process.argv[2] ?? 20);
const MAX_QUEUE_SIZE = 16;
const ROWS = 32;

function repository(): string {
  const dir = mkdtempSync(join(tmpdir(), "tbench-overload-"));
  const source = join(ROOT, "examples/models/heavy");
  mkdirSync(join(dir, "heavy/1"), { recursive: true });
  copyFileSync(join(source, "1/model.onnx"), join(dir, "heavy/1/model.onnx"));
  const config = readFileSync(join(source, "config.pbtxt"), "utf8").replace(
    "max_queue_delay_microseconds: 1000",
    `max_queue_delay_microseconds: 1000\n  default_queue_policy { max_queue_size: ${MAX_QUEUE_SIZE} }`,
  );
  writeFileSync(join(dir, "heavy/config.pbtxt"), config);
  return dir;
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Math.round(Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1]) / 1024);
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 10) / 10;
}

const header = JSON.stringify({
  inputs: [
    { name: "input", datatype: "FP32", shape: [ROWS, 256], parameters: { binary_data_size: ROWS * 1024 } },
  ],
  outputs: [{ name: "output", parameters: { binary_data: true } }],
});
const body = Buffer.concat([Buffer.from(header), Buffer.from(new Float32Array(ROWS * 256).fill(0.5).buffer)]);
const headers = {
  "content-type": "application/octet-stream",
  "inference-header-content-length": String(Buffer.byteLength(header)),
};

interface Outcome {
  readonly status: number;
  readonly ms: number;
  readonly at: number;
}

async function send(pool: Pool, started: number): Promise<Outcome> {
  const t0 = performance.now();
  try {
    const res = await pool.request({ method: "POST", path: "/v2/models/heavy/infer", headers, body });
    await res.body.arrayBuffer();
    return { status: res.statusCode, ms: performance.now() - t0, at: t0 - started };
  } catch {
    return { status: 0, ms: performance.now() - t0, at: t0 - started };
  }
}

/** Closed loop: `concurrency` callers for `seconds`; the 200s per second. */
async function capacity(pool: Pool, concurrency: number, seconds: number): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let ok = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) if ((await send(pool, 0)).status === 200) ok++;
    }),
  );
  return ok / seconds;
}

/** Open loop: requests started at `rate` per second for `seconds`, whatever the answers do. */
async function openLoop(pool: Pool, rate: number, seconds: number) {
  const started = performance.now();
  const pending: Promise<Outcome>[] = [];
  let sent = 0;
  while (performance.now() - started < seconds * 1000) {
    const due = Math.floor(((performance.now() - started) / 1000) * rate);
    for (; sent < due; sent++) pending.push(send(pool, started));
    await sleep(2);
  }
  const outcomes = await Promise.all(pending);
  const by = (s: number) => outcomes.filter((o) => o.status === s);
  const windows: Record<string, number> = {};
  for (let w = 0; w < seconds; w += 5) {
    windows[`${w}-${w + 5}s`] = percentile(
      by(200)
        .filter((o) => o.at >= w * 1000 && o.at < (w + 5) * 1000)
        .map((o) => o.ms),
      99,
    );
  }
  const statuses: Record<string, number> = {};
  for (const o of outcomes) statuses[o.status] = (statuses[o.status] ?? 0) + 1;
  return {
    offeredPerSecond: Math.round(rate),
    sent: outcomes.length,
    statuses,
    okPerSecond: Math.round(by(200).length / seconds),
    okMs: {
      p50: percentile(
        by(200).map((o) => o.ms),
        50,
      ),
      p99: percentile(
        by(200).map((o) => o.ms),
        99,
      ),
    },
    rejectedMs: {
      p50: percentile(
        by(503).map((o) => o.ms),
        50,
      ),
      p99: percentile(
        by(503).map((o) => o.ms),
        99,
      ),
    },
    okP99MsPer5s: windows,
  };
}

async function main(): Promise<void> {
  const repo = repository();
  const server = await startTbenchServer({ from: "source", repository: repo });
  const pool = new Pool(server.httpUrl, { connections: 1024, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const load = loadavg();
  await capacity(pool, 16, 3); // warm-up
  const sustainable = await capacity(pool, 16, 8);
  const rssStart = rssMiB(server.pid);
  const half = await openLoop(pool, sustainable / 2, 10);
  const rssMid = rssMiB(server.pid);
  const quadruple = await openLoop(pool, sustainable * 4, OVERLOAD_SECONDS);
  const rssEnd = rssMiB(server.pid);
  await pool.close();
  await server.close();
  rmSync(repo, { recursive: true, force: true });
  console.log(
    JSON.stringify(
      {
        date: new Date().toISOString(),
        model: `heavy, max_queue_size ${MAX_QUEUE_SIZE}, one instance, ${ROWS} rows per request`,
        loadAverageStart: load.map((v) => Math.round(v * 100) / 100),
        loadAverageEnd: loadavg().map((v) => Math.round(v * 100) / 100),
        sustainablePerSecond: Math.round(sustainable),
        halfLoad: half,
        fourTimesLoad: quadruple,
        serverRssMiB: { start: rssStart, afterHalf: rssMid, afterFourTimes: rssEnd },
      },
      null,
      2,
    ),
  );
}

await main();
