// Benchmark (a program, not a test): what Triton's dynamic batcher buys on CPU. Starts tbench-server on
// examples/models with `heavy` (dynamic batching) and `heavy_nobatch` (same model, batching off), drives each
// at concurrency 16 and 64 with tbench (the project's load generator, in a child process), reads the batch
// sizes the batcher formed from the statistics API, then measures in-process onnxruntime-node throughput at
// exactly those batch sizes (the limit a server could reach). Prints and writes bench-results/batching.{json,md}.
// Run: npm run bench:batching
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as ort from "onnxruntime-node";
import { silentLogger } from "../src/core/logger.js";
import type { ModelStatistics } from "../src/core/types.js";
import { startServer } from "../src/server.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const REPOSITORY = join(ROOT, "examples/models");
const OUT = join(ROOT, "bench-results");
const TBENCH = join(ROOT, "packages/bench/src/cli/main.ts");
const CONCURRENCIES = [16, 64];
const MODELS = ["heavy", "heavy_nobatch"] as const;
const WINDOW_MS = 3000;
const INPUT_WIDTH = 256;
/** Targets from the issue (2-core machine). */
const TARGET_RATIO = 3;
const TARGET_FRACTION_OF_LIMIT = 0.7;

interface LoadFigures {
  model: string;
  concurrency: number;
  inferPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  stable: boolean;
  avgBatchSize: number;
  /** Executions per batch size in this run (from batch_stats deltas). */
  batches: Record<string, number>;
}

interface TbenchLevel {
  stable: boolean;
  requestCount: number;
  errorCount: number;
  inferPerSec: number;
  latency: { percentiles: Record<string, number> };
}

function runTbench(url: string, model: string, concurrency: number, jsonPath: string): Promise<TbenchLevel> {
  const args = [
    "--conditions=source",
    "--import",
    "tsx",
    TBENCH,
    "-m",
    model,
    "-u",
    url.replace(/^http:\/\//, ""),
    "--concurrency-range",
    String(concurrency),
    "-p",
    String(WINDOW_MS),
    "-r",
    "3",
    "-s",
    "50",
    "--warmup-request-count",
    String(concurrency * 8),
    "--input-data",
    "random",
    "--json",
    jsonPath,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("exit", async (code) => {
      try {
        const result = JSON.parse(await readFile(jsonPath, "utf8")) as { levels: TbenchLevel[] };
        const level = result.levels[0];
        if (level === undefined) throw new Error("no level measured");
        resolve(level);
      } catch (error) {
        reject(new Error(`tbench exited ${code}: ${(error as Error).message}\n${output}`));
      }
    });
  });
}

function statsOf(stats: readonly ModelStatistics[]): ModelStatistics {
  const s = stats[0];
  if (s === undefined) throw new Error("no statistics");
  return s;
}

function batchDelta(before: ModelStatistics, after: ModelStatistics): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const b of after.batch_stats) {
    const previous = before.batch_stats.find((p) => p.batch_size === b.batch_size)?.compute_infer.count ?? 0;
    const delta = b.compute_infer.count - previous;
    if (delta > 0) counts[String(b.batch_size)] = delta;
  }
  return counts;
}

/** How many interleaved rounds the in-process limit takes, and timed runs per batch size per round. */
const LIMIT_ROUNDS = 5;
const LIMIT_RUNS_PER_ROUND = 8;
/** Percentile of the in-process run times taken as a batch size's cost: the median, what a run typically
 * costs here (a low percentile would credit the limit with only its luckiest runs). */
const LIMIT_PERCENTILE = 0.5;

/**
 * In-process run time per batch size, ms: every size is timed in each of several interleaved rounds (so a
 * burst of load from elsewhere hits all sizes alike), one session with one intra-op thread.
 */
async function inProcessRunMs(
  session: ort.InferenceSession,
  sizes: readonly number[],
): Promise<Map<number, number>> {
  const feeds = new Map<number, Record<string, ort.Tensor>>();
  for (const size of sizes) {
    const data = new Float32Array(size * INPUT_WIDTH);
    for (let i = 0; i < data.length; i++) data[i] = Math.sin(i);
    feeds.set(size, { input: new ort.Tensor("float32", data, [size, INPUT_WIDTH]) });
    for (let i = 0; i < 3; i++) await session.run(feeds.get(size)!);
  }
  const times = new Map<number, number[]>(sizes.map((size) => [size, []]));
  for (let round = 0; round < LIMIT_ROUNDS; round++) {
    for (const size of sizes) {
      for (let i = 0; i < LIMIT_RUNS_PER_ROUND; i++) {
        const start = performance.now();
        await session.run(feeds.get(size)!);
        times.get(size)!.push(performance.now() - start);
      }
    }
  }
  const result = new Map<number, number>();
  for (const [size, list] of times) {
    list.sort((a, b) => a - b);
    result.set(size, list[Math.floor(list.length * LIMIT_PERCENTILE)]!);
  }
  return result;
}

async function main(): Promise<void> {
  const loadBefore = loadavg()[0]!;
  const server = await startServer({
    modelRepository: REPOSITORY,
    httpPort: 0,
    metricsPort: false,
    modelControlMode: "explicit",
    loadModels: [...MODELS],
    logger: silentLogger,
  });
  const work = await mkdtemp(join(tmpdir(), "tbench-batching-"));
  const figures: LoadFigures[] = [];
  try {
    for (const concurrency of CONCURRENCIES) {
      for (const model of MODELS) {
        const before = statsOf(server.core.modelStatistics(model));
        const level = await runTbench(
          server.httpUrl,
          model,
          concurrency,
          join(work, `${model}-${concurrency}.json`),
        );
        const after = statsOf(server.core.modelStatistics(model));
        const executions = after.execution_count - before.execution_count;
        const figure: LoadFigures = {
          model,
          concurrency,
          inferPerSec: level.inferPerSec,
          p50Ms: (level.latency.percentiles["50"] ?? Number.NaN) / 1000,
          p99Ms: (level.latency.percentiles["99"] ?? Number.NaN) / 1000,
          requests: level.requestCount,
          errors: level.errorCount,
          stable: level.stable,
          avgBatchSize: executions > 0 ? (after.inference_count - before.inference_count) / executions : 0,
          batches: batchDelta(before, after),
        };
        figures.push(figure);
        console.log(
          `${model} c=${concurrency}: ${figure.inferPerSec.toFixed(0)} infer/s, p50 ${figure.p50Ms.toFixed(2)} ms, ` +
            `p99 ${figure.p99Ms.toFixed(2)} ms, avg batch ${figure.avgBatchSize.toFixed(2)}${figure.stable ? "" : " (unstable)"}`,
        );
      }
    }
  } finally {
    await server.close();
    await rm(work, { recursive: true, force: true });
  }

  // The limit: the same model in-process, one session, one intra-op thread (as the config's instance), at
  // the batch sizes the batcher formed, weighted by how many batches of each size ran.
  const session = await ort.InferenceSession.create(join(REPOSITORY, "heavy/1/model.onnx"), {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  const sizes = [...new Set(figures.flatMap((f) => Object.keys(f.batches).map(Number)))].sort(
    (a, b) => a - b,
  );
  const runMs = await inProcessRunMs(session, sizes);
  const limits: { concurrency: number; model: string; limitInferPerSec: number; fraction: number }[] = [];
  for (const figure of figures) {
    let rows = 0;
    let ms = 0;
    for (const [size, count] of Object.entries(figure.batches)) {
      rows += Number(size) * count;
      ms += runMs.get(Number(size))! * count;
    }
    const limitInferPerSec = ms > 0 ? (rows / ms) * 1000 : 0;
    limits.push({
      concurrency: figure.concurrency,
      model: figure.model,
      limitInferPerSec,
      fraction: limitInferPerSec > 0 ? figure.inferPerSec / limitInferPerSec : 0,
    });
  }
  await session.release();

  const find = (model: string, concurrency: number) =>
    figures.find((f) => f.model === model && f.concurrency === concurrency)!;
  const limitOf = (model: string, concurrency: number) =>
    limits.find((l) => l.model === model && l.concurrency === concurrency)!;
  const comparisons = CONCURRENCIES.map((concurrency) => {
    const on = find("heavy", concurrency);
    const off = find("heavy_nobatch", concurrency);
    return {
      concurrency,
      ratioOnOff: on.inferPerSec / off.inferPerSec,
      fractionOfLimit: limitOf("heavy", concurrency).fraction,
      limitInferPerSec: limitOf("heavy", concurrency).limitInferPerSec,
    };
  });
  const loadAfter = loadavg()[0]!;
  const environment = {
    date: new Date().toISOString(),
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    node: process.version,
    loadAverageBefore: loadBefore,
    loadAverageAfter: loadAfter,
    note: "one run on a shared machine: the load averages tell what else was running; ratios are what to compare.",
  };
  const result = {
    benchmark: "dynamic batching on (heavy) vs off (heavy_nobatch), tbench closed loop, one run",
    environment,
    targets: { ratioOnOffAtConcurrency16: TARGET_RATIO, fractionOfLimit: TARGET_FRACTION_OF_LIMIT },
    runs: figures,
    inProcessRunMsByBatchSize: Object.fromEntries([...runMs].sort((a, b) => a[0] - b[0])),
    limits,
    comparisons,
  };
  const lines = [
    "# Dynamic batching: heavy (on) vs heavy_nobatch (off)",
    "",
    `${environment.date}, ${environment.cpus} CPUs (${environment.cpuModel}), Node ${environment.node}. ` +
      `Load average ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after (anything above ~1 means other ` +
      "work shared the CPU and the figures are noisier). Server in-process (HTTP on the main " +
      `thread, one model instance in a worker thread, one intra-op thread); load from tbench in a child process, ` +
      `closed loop, ${WINDOW_MS / 1000} s windows (up to 3), binary tensors, batch 1 per request.`,
    "",
    "| Model | Concurrency | infer/s | p50 ms | p99 ms | avg batch | in-process limit infer/s | fraction of limit |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...figures.map((f) => {
      const l = limitOf(f.model, f.concurrency);
      return (
        `| ${f.model} | ${f.concurrency} | ${f.inferPerSec.toFixed(0)} | ${f.p50Ms.toFixed(2)} | ${f.p99Ms.toFixed(2)} | ` +
        `${f.avgBatchSize.toFixed(2)} | ${l.limitInferPerSec.toFixed(0)} | ${(l.fraction * 100).toFixed(0)}%${f.stable ? "" : " (unstable)"} |`
      );
    }),
    "",
    "| Concurrency | batching on/off | target | heavy vs in-process limit | target |",
    "| --- | --- | --- | --- | --- |",
    ...comparisons.map(
      (c) =>
        `| ${c.concurrency} | ${c.ratioOnOff.toFixed(2)}x | ${c.concurrency === 16 ? `>= ${TARGET_RATIO}x` : "-"} | ` +
        `${(c.fractionOfLimit * 100).toFixed(0)}% | >= ${TARGET_FRACTION_OF_LIMIT * 100}% |`,
    ),
    "",
    "The in-process limit runs the same model file in this process (onnxruntime-node, one session, one intra-op " +
      "thread) at every batch size the batcher formed, weighted by how many batches of each size ran; each size's " +
      `cost is the ${LIMIT_PERCENTILE * 100}th percentile of ${LIMIT_ROUNDS * LIMIT_RUNS_PER_ROUND} runs in ` +
      `${LIMIT_ROUNDS} interleaved rounds: ` +
      Object.entries(result.inProcessRunMsByBatchSize)
        .map(([size, ms]) => `batch ${size}: ${(ms as number).toFixed(2)} ms`)
        .join(", ") +
      ".",
    "",
  ];
  await mkdir(OUT, { recursive: true });
  await writeFile(join(OUT, "batching.json"), `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(join(OUT, "batching.md"), lines.join("\n"));
  console.log(`\n${lines.join("\n")}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
