// Benchmark (a program, not a test): what Triton's dynamic batcher buys on CPU, and how close the server
// comes to the limit that onnxruntime-node itself sets. Starts tbench-server on examples/models with
// `heavy` (dynamic batching) and `heavy_nobatch` (the same model, batching off) and drives each at
// concurrency 16 and 64 with the `tbench` command (built, in a child process). The limit of a run is the
// in-process onnxruntime-node throughput at the largest batch the server may form there:
// min(concurrency, max_batch_size) with dynamic batching, 1 without (each request then runs alone). It is
// defined by the model and the load, never by the batches the batcher happened to form, and measured in
// every round, interleaved with the server runs, the order rotating. Ratios: on/off is the median of
// per-round ratios; share of the limit is median(server) / median(limit); a share above 100% is flagged
// invalid. Writes bench-results/batching.{json,md}.
// Run: npm run bench:batching   (quick smoke run: BENCH_QUICK=1 npm run bench:batching, or --quick;
// it writes under the system's temporary folder unless BENCH_RESULTS_DIR or --out says where)
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  atLeast,
  benchOptions,
  median,
  perRoundRatios,
  ROOT,
  rotate,
  runTbenchCli,
  shareOfLimit,
  spread,
  startEnvironment,
  writeResult,
} from "@tbench/bench-kit";
import { silentLogger, startServer } from "../src/index.js";
import {
  type BatchingResult,
  batchingMarkdown,
  type CaseResult,
  type ServerRound,
} from "./batching-report.js";
import { createInProcessLimit } from "./in-process-limit.js";

const options = benchOptions();
const QUICK = options.quick;
const REPOSITORY = join(ROOT, "examples/models");
const CONCURRENCIES = [16, 64];
const MODELS = ["heavy", "heavy_nobatch"] as const;
const ROUNDS = QUICK ? 2 : 5;
const WINDOW_MS = QUICK ? 500 : 3000;
/** How long each limit batch size runs per round: one tbench window. */
const LIMIT_MS = WINDOW_MS;
/** Targets (issue 3, 2-core machine). */
const TARGET_ON_OFF_AT_16 = 3;
const TARGET_SHARE_OF_LIMIT = 0.7;

interface Case {
  model: (typeof MODELS)[number];
  concurrency: number;
  dynamicBatching: boolean;
  limitBatchSize: number;
}

function tbenchArgs(url: string, c: Case): string[] {
  return [
    ...["-m", c.model, "-u", url.replace(/^http:\/\//, "")],
    ...["--concurrency-range", String(c.concurrency), "-p", String(WINDOW_MS), "-r", "3", "-s", "50"],
    ...["--warmup-request-count", String(c.concurrency * 8), "--input-data", "random"],
  ];
}

async function main(): Promise<void> {
  const finishEnvironment = startEnvironment(options);
  const server = await startServer({
    modelRepository: REPOSITORY,
    httpPort: 0,
    metricsPort: false,
    modelControlMode: "explicit",
    loadModels: [...MODELS],
    logger: silentLogger,
  });
  const work = await mkdtemp(join(tmpdir(), "tbench-batching-"));
  const heavy = server.core.modelConfig("heavy");
  const input = heavy.input?.[0];
  if (input?.name === undefined || input.dims === undefined) throw new Error("heavy: no input in its config");
  const limit = await createInProcessLimit({
    path: join(REPOSITORY, "heavy/1/model.onnx"),
    inputName: input.name,
    width: Number(input.dims[0]),
    intraOpThreads: Number(heavy.parameters?.["intra_op_thread_count"]?.string_value || "1"),
    interOpThreads: 1,
  });
  const cases: Case[] = CONCURRENCIES.flatMap((concurrency) =>
    MODELS.map((model) => {
      const config = server.core.modelConfig(model);
      const dynamicBatching = config.dynamic_batching !== undefined;
      const maxBatchSize = Number(config.max_batch_size ?? 0);
      return {
        model,
        concurrency,
        dynamicBatching,
        limitBatchSize: dynamicBatching ? Math.min(concurrency, Math.max(1, maxBatchSize)) : 1,
      };
    }),
  );
  const limitSizes = [...new Set(cases.map((c) => c.limitBatchSize))].sort((a, b) => a - b);
  const serverRounds = new Map<Case, ServerRound[]>(cases.map((c) => [c, []]));
  const limitRounds = new Map<number, number[]>(limitSizes.map((size) => [size, []]));
  const orders: string[][] = [];
  const label = (c: Case) => `${c.model} c=${c.concurrency}`;
  try {
    type Task = { name: string; run: () => Promise<void> };
    const tasks: Task[] = [
      ...cases.map((c) => ({
        name: label(c),
        run: async () => {
          const level = await runTbenchCli(
            tbenchArgs(server.httpUrl, c),
            join(work, `${c.model}-${c.concurrency}.json`),
          );
          serverRounds.get(c)!.push({
            inferPerSec: level.inferPerSec,
            p50Ms: level.p50Us / 1000,
            p99Ms: level.p99Us / 1000,
            avgBatchSize: level.avgBatchSize,
            status: level.status,
            errors: level.errorCount,
            overheadWarning: level.overheadWarning,
          });
          console.log(
            `${label(c)}: ${level.inferPerSec.toFixed(0)} infer/s, avg batch ${level.avgBatchSize?.toFixed(2)}, ` +
              `${level.status}`,
          );
        },
      })),
      {
        name: "in-process limit",
        run: async () => {
          for (const size of limitSizes) {
            const rate = await limit.measure(size, LIMIT_MS);
            limitRounds.get(size)!.push(rate);
            console.log(`in-process batch ${size}: ${rate.toFixed(0)} infer/s`);
          }
        },
      },
    ];
    for (let round = 0; round < ROUNDS; round++) {
      const order = rotate(tasks, round);
      orders.push(order.map((t) => t.name));
      console.log(`round ${round + 1}/${ROUNDS}: ${orders[round]!.join(", ")}`);
      for (const task of order) await task.run();
    }
  } finally {
    await limit.close();
    await server.close();
    await rm(work, { recursive: true, force: true });
  }

  const caseResults: CaseResult[] = cases.map((c) => {
    const rounds = serverRounds.get(c)!;
    const limitRates = limitRounds.get(c.limitBatchSize)!;
    const share = median(rounds.map((r) => r.inferPerSec)) / median(limitRates);
    const target = c.dynamicBatching ? TARGET_SHARE_OF_LIMIT : null;
    return {
      ...c,
      rounds,
      server: spread(rounds.map((r) => r.inferPerSec)),
      limit: spread(limitRates),
      shareOfLimit: share,
      target,
      // Without a target, only a share above 100% earns a verdict: the run is then invalid.
      verdict: target !== null ? shareOfLimit(share, target) : share > 1 ? shareOfLimit(share, 0) : null,
    };
  });
  const onOff = CONCURRENCIES.map((concurrency) => {
    const rates = (model: string) =>
      caseResults
        .find((c) => c.model === model && c.concurrency === concurrency)!
        .rounds.map((r) => r.inferPerSec);
    const perRound = perRoundRatios(rates("heavy"), rates("heavy_nobatch"));
    const ratio = median(perRound);
    const target = concurrency === 16 ? TARGET_ON_OFF_AT_16 : null;
    return { concurrency, perRound, ratio, target, verdict: target === null ? null : atLeast(ratio, target) };
  });
  const result: BatchingResult = {
    benchmark:
      "dynamic batching on (heavy) vs off (heavy_nobatch) through tbench-server, and each against the in-process limit",
    environment: finishEnvironment(),
    settings: { rounds: ROUNDS, windowMs: WINDOW_MS, limitMs: LIMIT_MS, concurrencies: CONCURRENCIES },
    targets: { onOffAtConcurrency16: TARGET_ON_OFF_AT_16, shareOfLimit: TARGET_SHARE_OF_LIMIT },
    cases: caseResults,
    limits: limitSizes.map((batchSize) => ({
      batchSize,
      rounds: limitRounds.get(batchSize)!,
      ...spread(limitRounds.get(batchSize)!),
    })),
    onOff,
    orders,
  };
  const markdown = batchingMarkdown(result);
  const paths = await writeResult(options, "batching", result, markdown);
  console.log(`\n${markdown}\nwrote ${paths.join(", ")}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
