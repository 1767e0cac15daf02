// Benchmark (a program, not a test) of issue 12's model management, in two parts:
//   1. ensemble_pipeline (IMAGE -> resnet_like -> label_head -> LABEL inside the server) against a client
//      that calls resnet_like and then label_head itself, at 16 concurrent chains through @tbench/client;
//      rounds interleaved, the order rotating; ratio = median of per-round ratios; target: the ensemble is
//      faster (ratio > 1), since it saves a round trip and EMBED's trip over the wire both ways;
//   2. poll mode: the time from a new version directory appearing on disk to its first answer, with
//      --repository-poll-secs 1, over several rounds (median, min, max); target: every round within the
//      poll interval + 1 s.
// The server is the built tbench-server command in a child process (its own event loop and CPU time).
// Writes bench-results/model-management.{json,md}.
// Run: npm run bench:models   (quick smoke run: BENCH_QUICK=1 npm run bench:models, or --quick; it writes
// under the system's temporary folder unless BENCH_RESULTS_DIR or --out says where)
import {
  benchOptions,
  median,
  perRoundRatios,
  rotate,
  spread,
  startEnvironment,
  startTbenchServer,
  writeResult,
} from "@tbench/bench-kit";
import { CONTENDERS, type Contender, createPipelineDriver } from "./model-management-chain.js";
import { ASK_EVERY_MS, measurePollRound, POLL_MODEL, type PollRound } from "./model-management-poll.js";
import {
  ensembleFasterVerdict,
  type ModelManagementResult,
  modelManagementMarkdown,
  type PipelineRound,
  pollVerdict,
} from "./model-management-report.js";

const options = benchOptions();
const QUICK = options.quick;
const CONCURRENCY = 16;
const ROUNDS = QUICK ? 2 : 5;
const WARMUP_MS = QUICK ? 500 : 2000;
const WINDOW_MS = QUICK ? 1000 : 5000;
const POLL_SECS = 1;
const POLL_ROUNDS = QUICK ? 2 : 7;
/** Target of the poll part: the poll interval plus 1 s for the load. */
const POLL_TARGET_MS = POLL_SECS * 1000 + 1000;
/** A round gives up well after the target, so a slow load is still timed rather than lost. */
const POLL_TIMEOUT_MS = POLL_SECS * 1000 + 15_000;

async function measurePipeline(): Promise<ModelManagementResult["pipeline"]> {
  const server = await startTbenchServer({ models: ["ensemble_pipeline"] });
  const driver = createPipelineDriver({ url: server.httpUrl, concurrency: CONCURRENCY });
  const rounds: PipelineRound[] = [];
  try {
    const answers = await driver.checkAnswers();
    if (answers.agreeing !== answers.checked) {
      throw new Error(
        `ensemble_pipeline vs client chain: expected the same LABEL for every image, got ` +
          `${answers.agreeing} of ${answers.checked} agreeing`,
      );
    }
    for (let round = 0; round < ROUNDS; round++) {
      const order = rotate(CONTENDERS, round);
      const runs = new Map<Contender, Awaited<ReturnType<typeof driver.run>>>();
      for (const contender of order) {
        const run = await driver.run(contender, WARMUP_MS, WINDOW_MS);
        runs.set(contender, run);
        console.log(
          `round ${round + 1}/${ROUNDS} ${contender}: ${run.chainsPerSec.toFixed(1)} chains/s, ` +
            `p50 ${run.p50Ms.toFixed(1)} ms, resnet_like avg batch ${run.resnetAvgBatch?.toFixed(2) ?? "-"}, ` +
            `${run.errors} failed`,
        );
      }
      const ensemble = runs.get("ensemble")!;
      const clientChain = runs.get("client chain")!;
      rounds.push({ order, ensemble, clientChain, ratio: ensemble.chainsPerSec / clientChain.chainsPerSec });
    }
    const ensembleRates = rounds.map((r) => r.ensemble.chainsPerSec);
    const chainRates = rounds.map((r) => r.clientChain.chainsPerSec);
    const ratio = median(perRoundRatios(ensembleRates, chainRates));
    return {
      answers,
      rounds,
      ensemble: spread(ensembleRates),
      clientChain: spread(chainRates),
      ratio,
      target: "> 1x (the ensemble is faster)",
      verdict: ensembleFasterVerdict(ratio),
    };
  } finally {
    await driver.close();
    await server.close();
  }
}

async function measurePoll(): Promise<ModelManagementResult["poll"]> {
  const rounds: PollRound[] = [];
  for (let round = 0; round < POLL_ROUNDS; round++) {
    // Stagger by a fraction of the interval, so the rounds do not all land at one phase of the scan.
    const staggerMs = Math.round((round / POLL_ROUNDS) * POLL_SECS * 1000);
    const result = await measurePollRound({ pollSecs: POLL_SECS, staggerMs, timeoutMs: POLL_TIMEOUT_MS });
    rounds.push(result);
    console.log(
      `poll round ${round + 1}/${POLL_ROUNDS} (stagger ${staggerMs} ms): ` +
        (result.firstAnswerMs !== null
          ? `first answer from version 2 after ${result.firstAnswerMs.toFixed(0)} ms, ${result.tries} tries`
          : `no answer: ${result.failure}`),
    );
  }
  const times = rounds.flatMap((r) => (r.firstAnswerMs === null ? [] : [r.firstAnswerMs]));
  return {
    model: POLL_MODEL,
    rounds,
    firstAnswerMs: times.length > 0 ? spread(times) : null,
    targetMs: POLL_TARGET_MS,
    verdict: pollVerdict(rounds, POLL_TARGET_MS),
  };
}

async function main(): Promise<void> {
  const finishEnvironment = startEnvironment(options);
  const pipeline = await measurePipeline();
  const poll = await measurePoll();
  const result: ModelManagementResult = {
    benchmark:
      "ensemble_pipeline vs resnet_like then label_head from the client (concurrency 16), and poll mode's " +
      "time from a new version directory to its first answer",
    environment: finishEnvironment(),
    settings: {
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      warmupMs: WARMUP_MS,
      windowMs: WINDOW_MS,
      pollSecs: POLL_SECS,
      pollRounds: POLL_ROUNDS,
      askEveryMs: ASK_EVERY_MS,
      pollTimeoutMs: POLL_TIMEOUT_MS,
    },
    pipeline,
    poll,
  };
  const markdown = modelManagementMarkdown(result);
  const paths = await writeResult(options, "model-management", result, markdown);
  console.log(`\n${markdown}\nwrote ${paths.join(", ")}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
