// Benchmark (a program, not a test) of issue 29's sequence batcher: 16 concurrent sequences (20 steps
// each, a new sequence when one ends, each step sent after the previous answer, as a client of a stateful
// model must) against the bundled sequence_accumulator served with the direct strategy (8 slots on one
// instance) and against the same model with one slot (max_batch_size 1: one sequence at a time, the rest
// in the backlog). Both models are in one server (the built tbench-server command in a child process);
// rounds interleave them, the order rotating; ratio = median of per-round ratios of steps per second.
// Target: direct >= 3x one slot. The average batch size comes from the server's statistics. The machine's
// own speed: one sequence alone (a round trip per step) in the same run. Every answer is checked against
// the running sum. perf_analyzer is not installed here, so tbench's sequence mode is not compared with it.
// A third model in the same rounds has a large state (64Ki INT32 per sequence, built in code here, not a
// bundled model) and the accumulator's 8 slots: its steps/s beside the small state's, and the server's
// main-thread CPU per step for each (from /proc), show what a state costs now that it stays in the
// instance's thread (the main thread copies none of it; it copied it three times per step before).
// Writes bench-results/sequences.{json,md}.
// Run: npm run bench:sequences   (quick smoke run: BENCH_QUICK=1 npm run bench:sequences, or --quick)
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  atLeast,
  benchOptions,
  environmentMarkdown,
  median,
  perRoundRatios,
  ROOT,
  rotate,
  spread,
  startEnvironment,
  startTbenchServer,
  verdictMarkdown,
  writeResult,
} from "@tbench/bench-kit";
import { createHttpClient, type InferenceClient } from "@tbench/client";
import { buildLargeStateAccumulatorModel } from "@tbench/model-builder";
import { readCpu } from "./process-cpu.js";

const options = benchOptions();
const QUICK = options.quick;
const CONCURRENCY = 16;
const LENGTH = 20;
const ROUNDS = QUICK ? 2 : 5;
const WARMUP_MS = QUICK ? 300 : 1500;
const WINDOW_MS = QUICK ? 1000 : 5000;
const TARGET_RATIO = 3;
const DIRECT = "sequence_accumulator";
const ONE_SLOT = "sequence_accumulator_one_slot";
const LARGE = "sequence_large_state";
/** INT32 elements of the large model's state per sequence: 256 KiB. */
const LARGE_STATE_ELEMENTS = 65_536;
const CONTENDERS = [DIRECT, ONE_SLOT, LARGE] as const;

interface Run {
  readonly stepsPerSec: number;
  readonly avgBatch: number;
  readonly wrong: number;
  readonly errors: number;
  /** The server's main-thread CPU per step answered in the window (µs; 10 ms ticks, so a few % exact). */
  readonly mainThreadCpuUsPerStep: number;
}

/**
 * A repository with the bundled accumulator, a one-slot copy of it (same file, max_batch_size 1) and the
 * large-state accumulator (the same config with its state's dims).
 */
function writeRepository(): string {
  const dir = mkdtempSync(join(tmpdir(), "tbench-sequences-"));
  const bundled = join(ROOT, "examples/models", DIRECT);
  cpSync(bundled, join(dir, DIRECT), { recursive: true });
  mkdirSync(join(dir, ONE_SLOT, "1"), { recursive: true });
  cpSync(join(bundled, "1", "model.onnx"), join(dir, ONE_SLOT, "1", "model.onnx"));
  const config = readFileSync(join(bundled, "config.pbtxt"), "utf8")
    .replace(`name: "${DIRECT}"`, `name: "${ONE_SLOT}"`)
    .replace("max_batch_size: 8", "max_batch_size: 1");
  writeFileSync(join(dir, ONE_SLOT, "config.pbtxt"), config);
  mkdirSync(join(dir, LARGE, "1"), { recursive: true });
  writeFileSync(join(dir, LARGE, "1", "model.onnx"), buildLargeStateAccumulatorModel(LARGE_STATE_ELEMENTS));
  const large = readFileSync(join(bundled, "config.pbtxt"), "utf8")
    .replace(`name: "${DIRECT}"`, `name: "${LARGE}"`)
    .replaceAll("dims: [ 1 ]\n      initial_state", `dims: [ ${LARGE_STATE_ELEMENTS} ]\n      initial_state`)
    .replace(
      "        dims: [ 1 ]\n        zero_data",
      `        dims: [ ${LARGE_STATE_ELEMENTS} ]\n        zero_data`,
    );
  if (!large.includes(`dims: [ ${LARGE_STATE_ELEMENTS} ]\n      initial_state`)) {
    throw new Error(`the bundled config of ${DIRECT} changed: update the large-state config`);
  }
  writeFileSync(join(dir, LARGE, "config.pbtxt"), large);
  return dir;
}

async function counts(client: InferenceClient, model: string) {
  const [stats] = await client.modelStatistics(model);
  return { inferences: Number(stats?.inferenceCount ?? 0), executions: Number(stats?.executionCount ?? 0) };
}

/**
 * `concurrency` clients, each running sequences of LENGTH steps back to back (ids unique per run), for a
 * warmup then a window; steps answered inside the window count. Ends every open sequence before returning.
 */
async function run(
  client: InferenceClient,
  model: string,
  concurrency: number,
  firstId: number,
  serverPid: number,
): Promise<Run> {
  let nextId = firstId;
  let counting = false;
  let stop = false;
  let steps = 0;
  let wrong = 0;
  let errors = 0;
  const worker = async () => {
    while (!stop) {
      const id = nextId++;
      let sum = 0;
      for (let step = 0; step < LENGTH; step++) {
        const value = (id * 7 + step) % 100;
        const last = step === LENGTH - 1 || stop;
        try {
          const result = await client.infer(model, {
            inputs: [{ name: "INPUT", datatype: "INT32", shape: [1, 1], data: [value] }],
            sequenceId: id,
            sequenceStart: step === 0,
            sequenceEnd: last,
          });
          sum += value;
          if (result.output("OUTPUT")?.as("INT32")[0] !== sum) wrong++;
          if (counting) steps++;
        } catch {
          errors++;
          break;
        }
        if (last) break;
      }
    }
  };
  const workers = Array.from({ length: concurrency }, worker);
  await new Promise((resolve) => setTimeout(resolve, WARMUP_MS));
  const before = await counts(client, model);
  const cpuBefore = readCpu(serverPid);
  const start = performance.now();
  counting = true;
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
  counting = false;
  const seconds = (performance.now() - start) / 1000;
  const cpuAfter = readCpu(serverPid);
  const after = await counts(client, model);
  stop = true;
  await Promise.all(workers);
  const executions = after.executions - before.executions;
  return {
    stepsPerSec: steps / seconds,
    avgBatch: executions > 0 ? (after.inferences - before.inferences) / executions : 0,
    wrong,
    errors,
    mainThreadCpuUsPerStep: steps > 0 ? ((cpuAfter.mainThreadS - cpuBefore.mainThreadS) * 1e6) / steps : 0,
  };
}

const environment = startEnvironment(options);
const repository = writeRepository();
const server = await startTbenchServer({ repository, models: [...CONTENDERS] });
const client = createHttpClient({ url: server.httpUrl, connections: CONCURRENCY });
const rounds: { order: string[]; runs: Record<string, Run> }[] = [];
let single: Run;
try {
  let id = 1;
  single = await run(client, DIRECT, 1, id, server.pid);
  id += 100_000;
  console.log(`one sequence alone: ${single.stepsPerSec.toFixed(0)} steps/s`);
  for (let round = 0; round < ROUNDS; round++) {
    const order = rotate(CONTENDERS, round);
    const runs: Record<string, Run> = {};
    for (const model of order) {
      runs[model] = await run(client, model, CONCURRENCY, id, server.pid);
      id += 100_000;
      const r = runs[model]!;
      console.log(
        `round ${round + 1}/${ROUNDS} ${model}: ${r.stepsPerSec.toFixed(0)} steps/s, avg batch ` +
          `${r.avgBatch.toFixed(2)}, ${r.mainThreadCpuUsPerStep.toFixed(0)} µs main-thread CPU/step, ` +
          `${r.wrong} wrong sums, ${r.errors} errors`,
      );
    }
    rounds.push({ order: [...order], runs });
  }
} finally {
  await client.close();
  await server.close();
  rmSync(repository, { recursive: true, force: true });
}

const direct = rounds.map((r) => r.runs[DIRECT]!.stepsPerSec);
const oneSlot = rounds.map((r) => r.runs[ONE_SLOT]!.stepsPerSec);
const ratio = median(perRoundRatios(direct, oneSlot));
const wrong = rounds.reduce((n, r) => n + r.runs[DIRECT]!.wrong + r.runs[ONE_SLOT]!.wrong, single.wrong);
const errors = rounds.reduce((n, r) => n + r.runs[DIRECT]!.errors + r.runs[ONE_SLOT]!.errors, single.errors);
const large = rounds.map((r) => r.runs[LARGE]!.stepsPerSec);
const largeRatio = median(perRoundRatios(large, direct));
const largeWrong = rounds.reduce((n, r) => n + r.runs[LARGE]!.wrong + r.runs[LARGE]!.errors, 0);
const cpuPerStep = (model: string) => median(rounds.map((r) => r.runs[model]!.mainThreadCpuUsPerStep));
const stateKiB = (LARGE_STATE_ELEMENTS * 4) / 1024;
const verdict = wrong + errors > 0 ? "not met" : atLeast(ratio, TARGET_RATIO);
const env = environment();
const avg = (model: string) => median(rounds.map((r) => r.runs[model]!.avgBatch));
const fmt = (s: { min: number; median: number; max: number }) =>
  `${s.median.toFixed(0)} (${s.min.toFixed(0)}-${s.max.toFixed(0)})`;
const markdown = `# Sequence batching: 16 concurrent sequences, direct strategy vs one slot

${environmentMarkdown(env)}

Program: \`packages/server/bench/sequences.ts\` (\`npm run bench:sequences\`). One tbench-server (the built
command, a child process) serves \`${DIRECT}\` (the bundled running-sum model: implicit state, direct
strategy, 8 slots on one instance) and \`${ONE_SLOT}\` (the same file with max_batch_size 1: one slot, so
one sequence runs at a time and the others wait in the backlog). ${CONCURRENCY} clients in this process
(@tbench/client over HTTP) each run sequences of ${LENGTH} steps back to back, each step after the previous
answer; ${ROUNDS} rounds, the order rotating, ${WARMUP_MS} ms warmup and a ${WINDOW_MS} ms window per run.
Every answer is checked against the running sum. The machine's own speed: one sequence alone,
${single.stepsPerSec.toFixed(0)} steps/s (a round trip per step). perf_analyzer is not installed on this
machine, so the comparison of tbench's sequence mode with it is not made.

| model | steps/s, median (min-max) | average batch size (median) |
| --- | --- | --- |
| \`${DIRECT}\` (direct, 8 slots) | ${fmt(spread(direct))} | ${avg(DIRECT).toFixed(2)} |
| \`${ONE_SLOT}\` (1 slot) | ${fmt(spread(oneSlot))} | ${avg(ONE_SLOT).toFixed(2)} |

| target | figure | verdict |
| --- | --- | --- |
| direct strategy >= ${TARGET_RATIO}x one slot (steps/s, median of per-round ratios), every sum right, no error | ${ratio.toFixed(2)}x; ${wrong} wrong sums, ${errors} errors | ${verdictMarkdown(verdict)} |

## A large state: where the state lives

\`${LARGE}\` is the accumulator with a state of ${LARGE_STATE_ELEMENTS} INT32 per sequence (${stateKiB} KiB;
built in code by the program, \`buildLargeStateAccumulatorModel\`, not a bundled model), the same 8 slots
and direct strategy, in the same rounds. The state stays in the instance's thread, per slot: a batch
carries each row's slot, START and END, and the state outputs are never sent back, so the main thread copies
no byte of it (it copied it three times per step when it kept the states: into the batch, through the
structured clone to the worker, and out of the state output). Main-thread CPU per step is the server
process's main thread (/proc, 10 ms ticks) over the window, divided by the steps answered in it.

| model | steps/s, median (min-max) | average batch size (median) | main-thread CPU per step (median) | state bytes the main thread copies per step |
| --- | --- | --- | --- | --- |
| \`${DIRECT}\` (4-byte state) | ${fmt(spread(direct))} | ${avg(DIRECT).toFixed(2)} | ${cpuPerStep(DIRECT).toFixed(0)} µs | 0 |
| \`${LARGE}\` (${stateKiB} KiB state) | ${fmt(spread(large))} | ${avg(LARGE).toFixed(2)} | ${cpuPerStep(LARGE).toFixed(0)} µs | 0 |

Large state / small state, steps/s (median of per-round ratios): ${largeRatio.toFixed(2)}x; ${largeWrong} wrong
sums or errors.
`;
const json = {
  environment: env,
  concurrency: CONCURRENCY,
  length: LENGTH,
  single,
  rounds,
  ratio,
  wrong,
  errors,
  verdict,
  largeStateElements: LARGE_STATE_ELEMENTS,
  largeRatio,
};
const paths = await writeResult(options, "sequences", json, markdown);
console.log(`ratio ${ratio.toFixed(2)}x: ${verdict}; wrote ${paths.join(", ")}`);
