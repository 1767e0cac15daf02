// Benchmark (not a test): the `tbench` command's request rate against autocannon's and wrk's, on the same
// binary infer request (identity_fp32, a 4-byte FP32 input, binary output) at the same connection count.
// tbench runs as users run it: the built bin in a child process (profiler, statistics reads, overhead
// monitor included). Its request is captured through a recording proxy and replayed byte for byte by the
// others. Several rounds per connection count, the order rotating; ratios are medians of per-round ratios.
// Issue 16's target is tbench >= 0.95x wrk at c=1, 4 and 16 (the verdict); autocannon stays as a column,
// and raw undici `Pool.dispatch()` (undici-run.mjs: the client's default transport, keeping nothing) is
// the fastest undici use there is; tbench itself sends through the client's wire engine.
// wrk is Debian's `wrk` package: when it is not installed the benchmark says so and the verdict is
// against autocannon. Three rounds of short runs keep the whole benchmark near 4 minutes.
// Writes bench-results/tbench.{json,md}.
// Run: npm run bench:tbench  (builds models and packages first)
//   options: --quick or BENCH_QUICK=1 (a short smoke run, written under the system's temporary folder
//   unless --out DIR / BENCH_RESULTS_DIR says where), --connections 1,4,16 (the default)
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  atLeast,
  benchOptions,
  captureInferRequest,
  checkRequest,
  describeRequest,
  findWrk,
  type LoadFigure,
  loadFigureOf,
  median,
  medianRatio,
  rotate,
  runTbenchCli,
  runWrk,
  spread,
  startEnvironment,
  startTbenchServer,
  type WireRequest,
  writeResult,
} from "@tbench/bench-kit";
import {
  type ConnectionsResult,
  type Contender,
  type Ratio,
  type Round,
  type TbenchBenchResult,
  type TbenchFigure,
  tbenchMarkdown,
} from "./tbench-report.js";

const options = benchOptions();
const QUICK = options.quick;
const connectionsFlag = process.argv.indexOf("--connections");
const CONNECTIONS = (connectionsFlag >= 0 ? (process.argv[connectionsFlag + 1] ?? "") : "1,4,16")
  .split(",")
  .map(Number);
if (CONNECTIONS.some((c) => !Number.isInteger(c) || c < 1)) {
  throw new Error(
    `--connections: expected positive integers separated by commas, got ${process.argv[connectionsFlag + 1]}`,
  );
}
const ROUNDS = QUICK ? 2 : 3;
/** tbench's -p: 3 stable windows make its measured time, matched by the others' measured run. */
const WINDOW_MS = QUICK ? 300 : 2000;
/** tbench's -r: at most this many windows per run (an unstable run still reports its last 3). */
const MAX_TRIALS = QUICK ? 3 : 4;
/** Whole seconds: wrk takes no fractions. */
const DURATION_S = QUICK ? 1 : (3 * WINDOW_MS) / 1000;
const WARMUP_S = 1;
/** One wrk thread: each tool then drives its connections from one thread, as tbench and autocannon do. */
const WRK_THREADS = 1;
/** Issue 16's target: tbench >= 0.95x wrk's rate. */
const TARGET = 0.95;
/** The request, as tbench is asked to build it: perf_analyzer's defaults are binary tensors both ways. */
const REQUEST_ARGS = ["-m", "identity_fp32", "--shape", "INPUT0:1", "--input-data", "zero"];
const AUTOCANNON_RUN = fileURLToPath(new URL("./autocannon-run.mjs", import.meta.url));
const UNDICI_RUN = fileURLToPath(new URL("./undici-run.mjs", import.meta.url));

function tbenchArgs(url: string, connections: number | string): string[] {
  const settle = QUICK ? ["-s", "100"] : [];
  return [
    ...REQUEST_ARGS,
    "-u",
    url,
    "--concurrency-range",
    String(connections),
    "-p",
    String(WINDOW_MS),
    "-r",
    String(MAX_TRIALS),
    ...settle,
  ];
}

async function runTbench(serverUrl: string, connections: number, work: string): Promise<TbenchFigure> {
  const level = await runTbenchCli(tbenchArgs(serverUrl, connections), join(work, "tbench.json"));
  return {
    ...loadFigureOf(level),
    status: level.status,
    cpuPercent: level.cpuPercent,
    overheadWarning: level.overheadWarning,
  };
}

/** autocannon or raw undici in a child process (autocannon-run.mjs, undici-run.mjs: the same spec). */
async function runNodeTool(
  script: string,
  serverUrl: string,
  wire: WireRequest,
  connections: number,
  work: string,
): Promise<LoadFigure> {
  const specPath = join(work, "node-tool.json");
  await writeFile(
    specPath,
    JSON.stringify({
      url: new URL(wire.path, serverUrl).href,
      method: wire.method,
      headers: wire.headers,
      bodyBase64: wire.body.toString("base64"),
      connections,
      warmupS: WARMUP_S,
      durationS: DURATION_S,
    }),
  );
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [script, specPath], { stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (text += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(text) : reject(new Error(`${script} exited ${code}:\n${text}`)),
    );
  });
  const r = JSON.parse(output.trim().split("\n").at(-1)!) as Omit<LoadFigure, "requestsPerSec">;
  return { ...r, requestsPerSec: r.requests / r.durationS };
}

async function main(): Promise<void> {
  const finishEnvironment = startEnvironment(options);
  const wrk = findWrk();
  if (wrk === undefined) {
    console.warn("wrk is not installed (Debian: apt-get install wrk): the benchmark runs without it");
  }
  const server = await startTbenchServer({ models: ["identity_fp32"], metrics: true });
  const work = await mkdtemp(join(tmpdir(), "tbench-vs-"));
  const levels: ConnectionsResult[] = [];
  let wire: WireRequest;
  let responseBytes: number;
  try {
    wire = await captureInferRequest(server.httpUrl, (proxyUrl) =>
      runTbenchCli(
        [...REQUEST_ARGS, "-u", proxyUrl, "--concurrency-range", "1", "-p", "200", "-r", "3", "-s", "100"],
        join(work, "capture.json"),
      ),
    );
    responseBytes = await checkRequest(server.httpUrl, wire);
    console.log(`request: ${describeRequest(wire)}`);
    const contenders: Contender[] =
      wrk === undefined ? ["tbench", "autocannon", "undici"] : ["tbench", "autocannon", "wrk", "undici"];
    for (const connections of CONNECTIONS) {
      const rounds: Round[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const order = rotate(contenders, round);
        const figures: Partial<Round["figures"]> = {};
        for (const contender of order) {
          if (contender === "tbench") figures.tbench = await runTbench(server.httpUrl, connections, work);
          else if (contender === "autocannon") {
            figures.autocannon = await runNodeTool(AUTOCANNON_RUN, server.httpUrl, wire, connections, work);
          } else if (contender === "undici") {
            figures.undici = await runNodeTool(UNDICI_RUN, server.httpUrl, wire, connections, work);
          } else {
            figures.wrk = await runWrk({
              serverUrl: server.httpUrl,
              wire,
              connections,
              threads: WRK_THREADS,
              warmupS: WARMUP_S,
              durationS: DURATION_S,
              workDir: work,
            });
          }
          console.log(
            `c=${connections} round ${round + 1}/${ROUNDS} ${contender}: ${figures[contender]!.requestsPerSec.toFixed(0)} req/s`,
          );
        }
        rounds.push({ order, figures: figures as Round["figures"] });
      }
      const rates = (c: Contender) => rounds.map((r) => r.figures[c]!.requestsPerSec);
      const tbench = rates("tbench");
      const ratio = (against: Ratio["against"], other: number[]): Ratio => {
        const m = medianRatio(tbench, other);
        return {
          against,
          perRound: tbench.map((t, i) => t / other[i]!),
          median: m,
          verdict: atLeast(m, TARGET),
        };
      };
      const ratios = [ratio("autocannon", rates("autocannon")), ratio("undici", rates("undici"))];
      if (wrk !== undefined) {
        ratios.push(ratio("wrk", rates("wrk")));
        const strongest = rounds.map((r) =>
          Math.max(r.figures.autocannon.requestsPerSec, r.figures.wrk!.requestsPerSec),
        );
        ratios.push(ratio("strongest", strongest));
      }
      levels.push({
        connections,
        rounds,
        rates: Object.fromEntries(contenders.map((c) => [c, spread(rates(c))])),
        ratios,
      });
      console.log(
        `c=${connections}: ${ratios.map((r) => `tbench / ${r.against} ${r.median.toFixed(2)}x (${r.verdict})`).join(", ")}` +
          ` (median tbench ${median(tbench).toFixed(0)} req/s)`,
      );
    }
  } finally {
    await server.close();
    await rm(work, { recursive: true, force: true });
  }
  const result: TbenchBenchResult = {
    benchmark: "the tbench command vs autocannon and wrk, same binary infer request, same connections",
    environment: finishEnvironment(),
    request: describeRequest(wire),
    responseBytes,
    tbenchArgs: tbenchArgs("<server>", "<connections>"),
    wrk: wrk ?? null,
    settings: {
      rounds: ROUNDS,
      tbenchWindowMs: WINDOW_MS,
      tbenchMaxTrials: MAX_TRIALS,
      warmupS: WARMUP_S,
      durationS: DURATION_S,
      wrkThreads: WRK_THREADS,
    },
    target: TARGET,
    levels,
  };
  const markdown = tbenchMarkdown(result);
  const paths = await writeResult(options, "tbench", result, markdown);
  process.stdout.write(`\n${markdown}\nwrote ${paths.join(", ")}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
