// bench:models' result (bench-results/model-management.json) and its Markdown (model-management.md):
// every figure with its spread over rounds, every target with its verdict, every round listed.
import {
  type Environment,
  environmentMarkdown,
  type Spread,
  type Verdict,
  verdictMarkdown,
} from "@tbench/bench-kit";
import type { ChainRun, Contender } from "./model-management-chain.js";
import type { PollRound } from "./model-management-poll.js";

/** One round of the pipeline comparison: both contenders, in the order they ran. */
export interface PipelineRound {
  order: Contender[];
  ensemble: ChainRun;
  clientChain: ChainRun;
  /** ensemble chains/s / client chain chains/s, this round. */
  ratio: number;
}

export interface ModelManagementResult {
  benchmark: string;
  environment: Environment;
  settings: {
    concurrency: number;
    rounds: number;
    warmupMs: number;
    windowMs: number;
    pollSecs: number;
    pollRounds: number;
    askEveryMs: number;
    pollTimeoutMs: number;
  };
  pipeline: {
    /** Each chain's image sent both ways before measuring: LABELs that agree. */
    answers: { agreeing: number; checked: number };
    rounds: PipelineRound[];
    /** chains/s over rounds. */
    ensemble: Spread;
    clientChain: Spread;
    /** The median of per-round ratios (ensemble / client chain). */
    ratio: number;
    target: string;
    verdict: Verdict;
  };
  poll: {
    model: string;
    rounds: PollRound[];
    /** Over the rounds that got an answer; null when none did. */
    firstAnswerMs: Spread | null;
    /** poll interval + 1 s: every round must be answered within it. */
    targetMs: number;
    verdict: Verdict;
  };
}

/** The pipeline's verdict: met when the ensemble is faster (ratio > 1); a tie is not met. */
export function ensembleFasterVerdict(ratio: number): Verdict {
  return ratio > 1 ? "met" : "not met";
}

/**
 * The poll part's verdict: met when every round got its answer and the slowest came within `targetMs`. A
 * round without an answer is not left out: it fails the target, whatever the others did.
 */
export function pollVerdict(rounds: readonly PollRound[], targetMs: number): Verdict {
  if (rounds.length === 0) return "not met";
  return rounds.every((r) => r.firstAnswerMs !== null && r.firstAnswerMs <= targetMs) ? "met" : "not met";
}

const f0 = (x: number) => x.toFixed(0);
const f1 = (x: number) => x.toFixed(1);
const f2 = (x: number) => x.toFixed(2);
const range = (s: Spread, f: (x: number) => string) => `${f(s.median)} (${f(s.min)}-${f(s.max)})`;

/** The round whose throughput is nearest the median: its latencies stand for the contender. */
function medianRun(runs: readonly ChainRun[], s: Spread): ChainRun {
  return runs.reduce((best, r) =>
    Math.abs(r.chainsPerSec - s.median) < Math.abs(best.chainsPerSec - s.median) ? r : best,
  );
}

function contenderRow(name: string, runs: readonly ChainRun[], s: Spread): string {
  const m = medianRun(runs, s);
  const errors = runs.reduce((n, r) => n + r.errors, 0);
  const batch = m.resnetAvgBatch === null ? "-" : f2(m.resnetAvgBatch);
  return `| ${name} | ${range(s, f1)} | ${f1(m.p50Ms)} / ${f1(m.p99Ms)} | ${batch} | ${errors} |`;
}

function refusalsText(refusals: Record<string, number>): string {
  const entries = Object.entries(refusals);
  return entries.length === 0 ? "none" : entries.map(([k, n]) => `${n} x ${k}`).join(", ");
}

export function modelManagementMarkdown(r: ModelManagementResult): string {
  const { settings, pipeline, poll } = r;
  const ensembleRuns = pipeline.rounds.map((x) => x.ensemble);
  const chainRuns = pipeline.rounds.map((x) => x.clientChain);
  const failedRuns = pipeline.rounds
    .flatMap((x) => [x.ensemble, x.clientChain])
    .filter((run) => run.errors > 0)
    .map((run) => `${run.contender}: ${run.errors} failed chains, first: ${run.firstError}`);
  const pollSecs = settings.pollSecs;
  const answered = poll.rounds.filter((x) => x.firstAnswerMs !== null).length;
  return [
    "# Model management: ensemble_pipeline vs chaining from the client, and poll mode's time to first answer",
    "",
    environmentMarkdown(r.environment),
    "",
    "## ensemble_pipeline vs resnet_like then label_head from the client",
    "",
    "tbench-server (the built `tbench-server` command, a child process) on `examples/models`, explicit " +
      "mode with `--load-model ensemble_pipeline` (which loads resnet_like and label_head), their configs " +
      "as bundled (one instance each; resnet_like batches dynamically, label_head does not). " +
      `Load from this process through @tbench/client: ${settings.concurrency} concurrent chains in a closed ` +
      `loop (one keep-alive connection each), binary tensors both ways, each chain with its own fixed ` +
      "[1, 3, 224, 224] FP32 image (encoded once, on both sides). The ensemble is one request " +
      "(IMAGE -> LABEL); the client chain calls resnet_like, then label_head with the 1000-float EMBED it " +
      `got back. ${settings.rounds} rounds; in each, both contenders once, the order rotating; each run ` +
      `${settings.warmupMs / 1000} s of warmup, then chains answered in ${settings.windowMs / 1000} s. ` +
      "Ratio = median of per-round ratios (ensemble / client chain). Before measuring, every image went " +
      `both ways: ${pipeline.answers.agreeing} of ${pipeline.answers.checked} LABELs agree.`,
    "",
    "| Contender | chains/s, median (min-max) | p50 / p99 ms (median round) | resnet_like avg batch (median round) | failed chains |",
    "| --- | --- | --- | --- | --- |",
    contenderRow("ensemble_pipeline", ensembleRuns, pipeline.ensemble),
    contenderRow("client chain", chainRuns, pipeline.clientChain),
    "",
    "| ensemble / client chain, median of per-round ratios | per round | target | verdict |",
    "| --- | --- | --- | --- |",
    `| ${f2(pipeline.ratio)}x | ${pipeline.rounds.map((x) => `${f2(x.ratio)}x`).join(", ")} | ` +
      `${pipeline.target} | ${verdictMarkdown(pipeline.verdict)} |`,
    "",
    "Every round (chains/s):",
    "",
    "| Round | Order | ensemble_pipeline | client chain | ratio |",
    "| --- | --- | --- | --- | --- |",
    ...pipeline.rounds.map(
      (x, i) =>
        `| ${i + 1} | ${x.order.join(", ")} | ${f1(x.ensemble.chainsPerSec)} | ${f1(x.clientChain.chainsPerSec)} | ` +
        `${f2(x.ratio)}x |`,
    ),
    "",
    ...(failedRuns.length > 0
      ? ["Runs with failed chains:", "", ...failedRuns.map((w) => `- ${w}`), ""]
      : []),
    `## Poll mode: a new version's time to first answer (\`--repository-poll-secs ${pollSecs}\`)`,
    "",
    `Each round starts tbench-server with \`--model-control-mode poll --repository-poll-secs ${pollSecs}\` ` +
      `on a temporary copy of \`${poll.model}\` (version 1). Once version 1 is ready, the round waits its ` +
      "stagger (spreading the rounds over the scan's phase), writes `2/model.onnx` (a copy of version 1's " +
      "file) beside the repository and renames the directory into the model's, so it appears whole at one " +
      `instant; then it asks \`/v2/models/${poll.model}/versions/2/infer\` every ${settings.askEveryMs} ms ` +
      "and times the first correct answer from version 2 (OUTPUT0 = INPUT0 + INPUT1, model_version 2).",
    "",
    "The figure is bounded by the poll interval: nothing looks at the repository between scans, so a " +
      `version that appears just after a scan waits up to ${pollSecs} s for the next one, and then loads ` +
      "(a worker thread and an onnxruntime session; with the default version policy, latest 1, version 2 " +
      "replaces version 1). The target is that bound plus 1 s for the load, for every round.",
    "",
    "| first answer from version 2, ms: median (min-max) | rounds answered | target | verdict |",
    "| --- | --- | --- | --- |",
    `| ${poll.firstAnswerMs === null ? "-" : range(poll.firstAnswerMs, f0)} | ${answered} of ${poll.rounds.length} | ` +
      `<= ${f0(poll.targetMs)} ms (poll interval + 1 s), every round | ${verdictMarkdown(poll.verdict)} |`,
    "",
    "Every round:",
    "",
    "| Round | stagger ms | first answer ms | tries | refused on the way |",
    "| --- | --- | --- | --- | --- |",
    ...poll.rounds.map(
      (x, i) =>
        `| ${i + 1} | ${f0(x.staggerMs)} | ${x.firstAnswerMs === null ? `none: ${x.failure?.split("\n")[0]}` : f0(x.firstAnswerMs)} | ` +
        `${x.tries} | ${refusalsText(x.refusals)} |`,
    ),
    "",
  ].join("\n");
}
