/**
 * Idle and slowloris connections beside real clients (issue 14, "held well, keep it so": 5,000 idle and 500
 * slowloris connections with other clients at p99 <= 22 ms), measured once, not a unit test. tbench-server
 * (its command line, in a child process, default --http-header-timeout-ms of 30 s so the slow connections
 * stay for the whole run) serves `simple`; a closed loop of 8 keep-alive callers sends JSON infers, each
 * answer checked, first alone (the baseline), then beside 5,000 connections that never send a byte and 500
 * that trickle a request line or a header one byte a second. Reports the callers' p50/p99 and throughput
 * side by side (ratio to the baseline), the server's RSS and descriptors, whether the slow connections were
 * all still held at the end of the run, and, after the header timeout, how many got the 408 answer. Writes
 * bench-results/idle-connections.{json,md} with a verdict (loaded p99 <= 22 ms, every infer right, every
 * slow connection held through the run and then answered 408).
 *   node --conditions=source --import tsx packages/server/bench/idle-connections.ts [seconds per run, default 20]
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { ROOT, startTbenchServer } from "@tbench/bench-kit";
import { Pool } from "undici";

const OUT_DIR = process.env["IDLE_BENCH_OUT_DIR"] ?? join(ROOT, "bench-results");
const SECONDS = Number(process.argv[2] ?? 20);
const CONCURRENCY = 8;
const IDLE = 5000;
const SLOW = 500;
const P99_TARGET_MS = 22;
const HEADER_TIMEOUT_MS = 30_000;

const round = (v: number, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!, 2);
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Math.round(Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1]) / 1024);
}

const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

interface RunResult {
  readonly requests: number;
  readonly perSecond: number;
  readonly wrong: number;
  readonly errors: number;
  readonly ms: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number };
}

/** Closed loop: CONCURRENCY callers for `seconds`, each answer checked against its own input. */
async function closedLoop(pool: Pool, seconds: number): Promise<RunResult> {
  const latencies: number[] = [];
  let wrong = 0;
  let errors = 0;
  let n = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const i = n++;
        const a = Array.from({ length: 16 }, (_, k) => (i + k) % 1000);
        const body = JSON.stringify({
          inputs: [
            { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: a },
            { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: a },
          ],
        });
        const t0 = performance.now();
        try {
          const res = await pool.request({
            method: "POST",
            path: "/v2/models/simple/infer",
            headers: { "content-type": "application/json" },
            body,
          });
          const json = (await res.body.json()) as { outputs?: { name: string; data: number[] }[] };
          latencies.push(performance.now() - t0);
          const sum = json.outputs?.find((o) => o.name === "OUTPUT0")?.data;
          if (res.statusCode !== 200 || sum?.length !== 16 || sum.some((v, k) => v !== 2 * a[k]!)) wrong++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const sorted = latencies.sort((x, y) => x - y);
  return {
    requests: latencies.length + errors,
    perSecond: Math.round(latencies.length / elapsed),
    wrong,
    errors,
    ms: {
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: round(sorted.at(-1) ?? Number.NaN, 2),
    },
  };
}

interface Held {
  readonly socket: Socket;
  /** Everything the server sent, once it closed the connection. */
  readonly closed: Promise<string>;
}

function open(port: number): Promise<Held> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    const closed = new Promise<string>((done) =>
      socket.once("close", () => done(Buffer.concat(chunks).toString("latin1"))),
    );
    socket.once("connect", () => {
      socket.off("error", reject).on("error", () => {});
      resolve({ socket, closed });
    });
    socket.once("error", reject);
  });
}

/** Opens `count` connections, 250 at a time (the listen backlog is 511). */
async function openMany(port: number, count: number): Promise<Held[]> {
  const held: Held[] = [];
  while (held.length < count)
    held.push(
      ...(await Promise.all(Array.from({ length: Math.min(250, count - held.length) }, () => open(port)))),
    );
  return held;
}

async function main(): Promise<void> {
  const server = await startTbenchServer({ from: "source", models: ["simple"] });
  const { pid } = server;
  const port = Number(new URL(server.httpUrl).port);
  const pool = new Pool(server.httpUrl, { connections: CONCURRENCY, pipelining: 1 });
  const loadStart = loadavg().map((v) => round(v, 2));
  await closedLoop(pool, 3); // warm-up
  const server0 = { rssMiB: rssMiB(pid), fds: fds(pid) };
  const baseline = await closedLoop(pool, SECONDS);

  const openStarted = performance.now();
  const idle = await openMany(port, IDLE);
  const slow = await openMany(port, SLOW);
  const openSeconds = round((performance.now() - openStarted) / 1000, 2);
  // Half trickle a request line that never ends, half a header that never ends: one byte a second each,
  // spread over ten ticks a second.
  for (const [i, { socket }] of slow.entries())
    socket.write(
      i % 2 === 0 ? "GET /v2/health/" : "POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nX-Slow: ",
    );
  let tick = 0;
  const trickle = setInterval(() => {
    for (let i = tick++ % 10; i < slow.length; i += 10) {
      const { socket } = slow[i]!;
      if (!socket.destroyed) socket.write(i % 2 === 0 ? "a" : "b");
    }
  }, 100);
  const openedAt = performance.now();
  const server1 = { rssMiB: rssMiB(pid), fds: fds(pid) };
  const loaded = await closedLoop(pool, SECONDS);
  const heldAtEnd = {
    idle: idle.filter(({ socket }) => !socket.destroyed).length,
    slowloris: slow.filter(({ socket }) => !socket.destroyed).length,
  };
  const server2 = { rssMiB: rssMiB(pid), fds: fds(pid) };
  const loadEnd = loadavg().map((v) => round(v, 2));
  const runEndedAfterOpenS = round((performance.now() - openedAt) / 1000, 1);

  // The header timeout then closes every one of them with the 408 answer.
  const expected = `request headers not received within ${HEADER_TIMEOUT_MS} ms (--http-header-timeout-ms)`;
  const answered408 = (texts: string[]) =>
    texts.filter((t) => t.startsWith("HTTP/1.1 408 Request Timeout\r\n") && t.includes(expected)).length;
  const idle408 = answered408(await Promise.all(idle.map((h) => h.closed)));
  const slow408 = answered408(await Promise.all(slow.map((h) => h.closed)));
  const closedAfterOpenS = round((performance.now() - openedAt) / 1000, 1);
  clearInterval(trickle);
  const after = await closedLoop(pool, 3);
  const server3 = { rssMiB: rssMiB(pid), fds: fds(pid) };
  await pool.close();
  await server.close();

  const checks = {
    [`loaded p99 <= ${P99_TARGET_MS} ms`]: loaded.ms.p99 <= P99_TARGET_MS,
    "every infer answered right": [baseline, loaded, after].every((r) => r.wrong === 0 && r.errors === 0),
    "all idle and slowloris connections held through the run":
      heldAtEnd.idle === IDLE && heldAtEnd.slowloris === SLOW,
    "all answered 408 at the header timeout": idle408 === IDLE && slow408 === SLOW,
  };
  const pass = Object.values(checks).every(Boolean);
  const result = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    loadAverageStart: loadStart,
    loadAverageEnd: loadEnd,
    setup: {
      server:
        "tbench-server command line, explicit mode, simple loaded, default --http-header-timeout-ms 30000",
      callers: `${CONCURRENCY} keep-alive callers in a closed loop (undici Pool), JSON infer on simple`,
      secondsPerRun: SECONDS,
      idle: IDLE,
      slowloris: SLOW,
      slowlorisRate: "one byte a second each (half a request line, half a header value)",
    },
    baseline,
    loaded,
    ratio: {
      p50: round(loaded.ms.p50 / baseline.ms.p50, 2),
      p99: round(loaded.ms.p99 / baseline.ms.p99, 2),
      throughput: round(loaded.perSecond / baseline.perSecond, 2),
    },
    afterClose: after,
    openSeconds,
    heldAtEnd,
    runEndedAfterOpenS,
    answered408: { idle: idle408, slowloris: slow408, closedAfterOpenS },
    server: { beforeBaseline: server0, loadOpened: server1, endOfLoadedRun: server2, afterClose: server3 },
    checks,
    verdict: pass ? "met" : "not met",
  };
  const row = (name: string, r: RunResult) =>
    `| ${name} | ${r.requests} | ${r.perSecond} | ${r.ms.p50} | ${r.ms.p90} | ${r.ms.p99} | ${r.ms.max} | ${r.wrong + r.errors} |`;
  const markdown = [
    "# Idle and slowloris connections beside real clients",
    "",
    `**Verdict: ${result.verdict}**: p99 ${loaded.ms.p99} ms with ${IDLE} idle and ${SLOW} slowloris connections held ` +
      `(target <= ${P99_TARGET_MS} ms; baseline ${baseline.ms.p99} ms, ${result.ratio.p99}x); throughput ` +
      `${loaded.perSecond}/s vs ${baseline.perSecond}/s (${result.ratio.throughput}x).`,
    "",
    `${result.date}, ${result.cpus} CPUs, Node ${result.node}; load average at start ${loadStart.join(" / ")}, ` +
      `at the end of the loaded run ${loadEnd.join(" / ")}. Server: ${result.setup.server}. Callers: ` +
      `${result.setup.callers}, ${SECONDS} s per run, each answer checked.`,
    "",
    "| run | requests | per second | p50 ms | p90 ms | p99 ms | max ms | wrong or failed |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    row("baseline (nothing else open)", baseline),
    row(`${IDLE} idle + ${SLOW} slowloris held`, loaded),
    row("after they were cut (3 s)", after),
    "",
    `Opening the ${IDLE + SLOW} connections took ${openSeconds} s; at the end of the loaded run ` +
      `(${runEndedAfterOpenS} s after) ${heldAtEnd.idle} idle and ${heldAtEnd.slowloris} slowloris were still ` +
      `open. The header timeout then answered ${idle408} idle and ${slow408} slowloris with 408 ` +
      `\`${expected}\` (the last closed ${closedAfterOpenS} s after the last was opened).`,
    "",
    `Server RSS / descriptors: ${server0.rssMiB} MiB / ${server0.fds} before the baseline, ` +
      `${server1.rssMiB} MiB / ${server1.fds} with the connections open, ${server2.rssMiB} MiB / ${server2.fds} ` +
      `at the end of the loaded run, ${server3.rssMiB} MiB / ${server3.fds} after they were cut.`,
    "",
    "Checks: " +
      Object.entries(checks)
        .map(([name, ok]) => `${name}: ${ok ? "yes" : "no"}`)
        .join("; ") +
      ".",
  ].join("\n");
  mkdirSync(OUT_DIR, { recursive: true });
  writeFileSync(join(OUT_DIR, "idle-connections.json"), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(OUT_DIR, "idle-connections.md"), `${markdown}\n`);
  process.stderr.write(`idle-connections: ${result.verdict}; wrote ${OUT_DIR}/idle-connections.{json,md}\n`);
  process.exitCode = pass ? 0 : 1;
}

await main();
