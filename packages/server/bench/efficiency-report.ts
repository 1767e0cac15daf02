// The figures and verdicts of the server efficiency benchmark (server-efficiency.ts), from its rounds:
// medians with their spread, ratios as medians of per-round ratios (shares of the in-process limit as a
// ratio of medians, as the batching benchmark defines them), and the Markdown of
// bench-results/server-efficiency.md. Pure: no I/O.
import {
  atLeast,
  atMost,
  type Environment,
  environmentMarkdown,
  type LoadFigure,
  median,
  medianRatio,
  perRoundRatios,
  type Spread,
  shareOfLimit,
  spread,
  type Verdict,
  verdictMarkdown,
} from "@tbench/bench-kit";
import type { BatchingFigures } from "./server-statistics.js";

/** One run's figures: the load tool's, the server's CPU per request and its batching, where read. */
export interface RunFigure extends LoadFigure {
  cpuUsPerRequest?: number;
  mainThreadCpuUsPerRequest?: number;
  batching?: BatchingFigures;
}

/**
 * One round: its order, every run by case id, the in-process limits of `heavy` and `heavy_light` (rows/s)
 * by batch size, and the CPU of one in-process `session.run()` of `simple` at batch 1 (µs).
 */
export interface EfficiencyRound {
  order: string[];
  runs: Record<string, RunFigure>;
  limit: Record<number, number>;
  lightLimit: Record<number, number>;
  simpleRunCpuUs?: number;
}

/** A model with dynamic batching, its twin without, the naive server's run of it and its in-process limit. */
interface BatchingFamily {
  readonly batching: string;
  readonly noBatching: string;
  readonly naiveRun: string;
  readonly limitOf: (round: EfficiencyRound) => Record<number, number>;
}

const FAMILIES: readonly BatchingFamily[] = [
  { batching: "heavy", noBatching: "heavy_nobatch", naiveRun: "naive c=16 json", limitOf: (r) => r.limit },
  {
    batching: "heavy_light",
    noBatching: "heavy_light_nobatch",
    naiveRun: "naive light c=16 json",
    limitOf: (r) => r.lightLimit,
  },
];

/** One target's figure and verdict. */
export interface TargetRow {
  target: string;
  figure: string;
  value: number;
  /** How the value reads: a ratio (1.23x), a share (45%) or microseconds. */
  unit: "x" | "%" | "µs";
  threshold: string;
  verdict: Verdict;
  perRound: number[];
}

/** Where one kind of request's CPU goes (µs per request, medians over rounds). */
export interface OverheadRow {
  run: string;
  process: Spread;
  mainThread: Spread;
  /** The model's own CPU per request at the batches formed (in-process). */
  model: Spread;
  /** Process minus model. */
  overhead: Spread;
  /** The instance thread and every other thread, minus the model: process - main - model. */
  otherThreads: Spread;
  bare: Spread;
}

/** The batching the server did in one run (medians over rounds). */
export interface BatchingRow {
  run: string;
  averageBatch: Spread;
  busyFraction: Spread;
  queueUsPerRequest: Spread;
}

export interface EfficiencySummary {
  rates: Record<string, Spread>;
  /** In-process rows/s by model (`heavy`, `heavy_light`) and batch size. */
  limits: Record<string, Record<number, Spread>>;
  /** The in-process µs per row at batch 16 (1e6 / the limit) by model: target 2 needs <= 150. */
  usPerRowAt16: Record<string, Spread>;
  /** CPU µs of one in-process `simple` run at batch 1. */
  simpleRunCpu: Spread;
  /** CPU µs of one in-process `heavy` run, by batch size. */
  heavyCpuPerRunUs: Record<number, number>;
  overheads: OverheadRow[];
  batching: BatchingRow[];
  cpu: Record<string, { process: Spread; mainThread: Spread }>;
  targets: TargetRow[];
}

/** The most µs per row at batch 16 for which `heavy`'s run leaves the server's cost visible (issue 28). */
export const FAST_MODEL_US_PER_ROW = 150;

/** The runs of target 1: the server's run, its bare handler's run and the model it serves. */
const OVERHEAD_RUNS = [
  { run: "heavy c=16 json", bare: "bare heavy json", model: "heavy", threshold: 1.5 },
  { run: "heavy c=16 binary", bare: "bare heavy binary", model: "heavy", threshold: 1.5 },
  { run: "simple json", bare: "bare simple json", model: "simple", threshold: 2 },
  { run: "simple binary", bare: "bare simple binary", model: "simple", threshold: 2 },
] as const;

const BUSY_RUNS = [
  "heavy c=16 json",
  "heavy c=32 json",
  "heavy c=16 binary",
  "heavy c=32 binary",
  "heavy_light c=16 json",
  "heavy_light c=32 json",
];

function runsOf(rounds: readonly EfficiencyRound[], id: string): RunFigure[] {
  return rounds.map((r) => {
    const run = r.runs[id];
    if (run === undefined) throw new Error(`round without the run '${id}'`);
    return run;
  });
}
const ratesOf = (rounds: readonly EfficiencyRound[], id: string) =>
  runsOf(rounds, id).map((r) => r.requestsPerSec);
const cpuOf = (rounds: readonly EfficiencyRound[], id: string) =>
  runsOf(rounds, id).map((r) => r.cpuUsPerRequest ?? Number.NaN);
const mainOf = (rounds: readonly EfficiencyRound[], id: string) =>
  runsOf(rounds, id).map((r) => r.mainThreadCpuUsPerRequest ?? Number.NaN);

/**
 * The model's own CPU per request in one run: every batch the server ran, at the in-process CPU of its
 * size, over the requests answered. `simple` runs one request per batch (no dynamic batching).
 */
function modelCpuPerRequest(
  run: RunFigure,
  model: "heavy" | "simple",
  heavyCpuPerRunUs: Readonly<Record<number, number>>,
  simpleRunCpuUs: number,
): number {
  const batching = run.batching;
  if (batching === undefined || batching.requests === 0) return Number.NaN;
  let total = 0;
  for (const [size, executions] of Object.entries(batching.executionsBySize)) {
    const perRun = model === "heavy" ? heavyCpuPerRunUs[Number(size)] : simpleRunCpuUs;
    total += executions * (perRun ?? Number.NaN);
  }
  return total / batching.requests;
}

/** Every figure and verdict of the targets, from the rounds and the in-process CPU of `heavy` per size. */
export function summarize(
  rounds: readonly EfficiencyRound[],
  heavyCpuPerRunUs: Readonly<Record<number, number>>,
): EfficiencySummary {
  const ids = Object.keys(rounds[0]?.runs ?? {});
  const rates = Object.fromEntries(ids.map((id) => [id, spread(ratesOf(rounds, id))]));
  const limits: Record<string, Record<number, Spread>> = {};
  const usPerRowAt16: Record<string, Spread> = {};
  for (const family of FAMILIES) {
    limits[family.batching] = Object.fromEntries(
      [16, 32].map((b) => [b, spread(rounds.map((r) => family.limitOf(r)[b] ?? Number.NaN))]),
    );
    usPerRowAt16[family.batching] = spread(rounds.map((r) => 1e6 / (family.limitOf(r)[16] ?? Number.NaN)));
  }
  const simpleRun = rounds.map((r) => r.simpleRunCpuUs ?? Number.NaN);
  const cpu = Object.fromEntries(
    ids
      .filter((id) => runsOf(rounds, id).every((r) => r.cpuUsPerRequest !== undefined))
      .map((id) => [id, { process: spread(cpuOf(rounds, id)), mainThread: spread(mainOf(rounds, id)) }]),
  );
  const targets: TargetRow[] = [];
  const overheads: OverheadRow[] = [];

  for (const o of OVERHEAD_RUNS) {
    const process = cpuOf(rounds, o.run);
    const main = mainOf(rounds, o.run);
    const model = runsOf(rounds, o.run).map((run, i) =>
      modelCpuPerRequest(run, o.model, heavyCpuPerRunUs, simpleRun[i]!),
    );
    const overhead = process.map((p, i) => p - model[i]!);
    const bare = cpuOf(rounds, o.bare);
    overheads.push({
      run: o.run,
      process: spread(process),
      mainThread: spread(main),
      model: spread(model),
      overhead: spread(overhead),
      otherThreads: spread(overhead.map((v, i) => v - main[i]!)),
      bare: spread(bare),
    });
    const value = medianRatio(overhead, bare);
    targets.push({
      target: "1",
      figure: `${o.run}: server CPU per request minus the model's / bare node:http handler's`,
      value,
      unit: "x",
      threshold: `<= ${o.threshold}x`,
      verdict: atMost(value, o.threshold),
      perRound: perRoundRatios(overhead, bare),
    });
  }

  for (const family of FAMILIES) {
    const { batching: model } = family;
    const perRow = rounds.map((r) => 1e6 / (family.limitOf(r)[16] ?? Number.NaN));
    const fast = median(perRow);
    targets.push({
      target: "2 (condition)",
      figure: `${model} in-process µs per row at batch 16: its rows below count where it is <= ${FAST_MODEL_US_PER_ROW}`,
      value: fast,
      unit: "µs",
      threshold: `<= ${FAST_MODEL_US_PER_ROW} µs`,
      verdict: atMost(fast, FAST_MODEL_US_PER_ROW),
      perRound: perRow,
    });
    const naive = ratesOf(rounds, family.naiveRun);
    for (const [id, threshold] of [
      [`${family.noBatching} c=16 json`, 1],
      [`${model} c=16 json`, 4],
    ] as const) {
      const server = ratesOf(rounds, id);
      const value = medianRatio(server, naive);
      targets.push({
        target: "2",
        figure: `${id} / naive server c=16`,
        value,
        unit: "x",
        threshold: `>= ${threshold}x`,
        verdict: atLeast(value, threshold),
        perRound: perRoundRatios(server, naive),
      });
    }
    for (const encoding of model === "heavy" ? ["json", "binary"] : ["json"]) {
      const id = `${model} c=32 ${encoding}`;
      const server = ratesOf(rounds, id);
      const limit = rounds.map((r) => family.limitOf(r)[32] ?? Number.NaN);
      const value = median(server) / median(limit);
      targets.push({
        target: "2",
        figure: `${id} / in-process limit at batch 32`,
        value,
        unit: "%",
        threshold: ">= 80%",
        verdict: shareOfLimit(value, 0.8),
        perRound: perRoundRatios(server, limit),
      });
    }
  }

  for (const model of ["simple", "heavy"]) {
    for (const concurrency of [16, 64]) {
      const http = `tbench -i http ${model} c=${concurrency}`;
      const grpc = `tbench -i grpc ${model} c=${concurrency}`;
      const value = medianRatio(ratesOf(rounds, grpc), ratesOf(rounds, http));
      targets.push({
        target: "3",
        figure: `${model} c=${concurrency}: tbench -i grpc / tbench -i http, infer/s`,
        value,
        unit: "x",
        threshold: ">= 0.8x",
        verdict: atLeast(value, 0.8),
        perRound: perRoundRatios(ratesOf(rounds, grpc), ratesOf(rounds, http)),
      });
      const cpuValue = medianRatio(cpuOf(rounds, grpc), cpuOf(rounds, http));
      targets.push({
        target: "3",
        figure: `${model} c=${concurrency}: server CPU per request, gRPC / HTTP`,
        value: cpuValue,
        unit: "x",
        threshold: "<= 1.5x",
        verdict: atMost(cpuValue, 1.5),
        perRound: perRoundRatios(cpuOf(rounds, grpc), cpuOf(rounds, http)),
      });
    }
  }

  const batching: BatchingRow[] = [];
  for (const id of ids) {
    const figures = runsOf(rounds, id).map((r) => r.batching);
    if (figures.some((b) => b === undefined)) continue;
    const of = (pick: (b: BatchingFigures) => number) => spread(figures.map((b) => pick(b!)));
    batching.push({
      run: id,
      averageBatch: of((b) => b.averageBatch),
      busyFraction: of((b) => b.busyFraction),
      queueUsPerRequest: of((b) => b.queueUsPerRequest),
    });
  }
  for (const id of BUSY_RUNS) {
    const busy = runsOf(rounds, id).map((r) => r.batching?.busyFraction ?? Number.NaN);
    const value = median(busy);
    targets.push({
      target: "4",
      figure: `${id}: the instance's busy share of the wall time`,
      value,
      unit: "%",
      threshold: ">= 90%",
      verdict: atLeast(value, 0.9),
      perRound: busy,
    });
  }

  const on = ratesOf(rounds, "heavy c=16 json");
  const off = ratesOf(rounds, "heavy_nobatch c=16 json");
  const onOff = medianRatio(on, off);
  targets.push({
    target: "5",
    figure: "batching on/off at c=16 (heavy / heavy_nobatch, JSON)",
    value: onOff,
    unit: "x",
    threshold: ">= 3x (the batching target)",
    verdict: atLeast(onOff, 3),
    perRound: perRoundRatios(on, off),
  });
  return {
    rates,
    limits,
    usPerRowAt16,
    simpleRunCpu: spread(simpleRun),
    heavyCpuPerRunUs: { ...heavyCpuPerRunUs },
    overheads,
    batching,
    cpu,
    targets,
  };
}

const f0 = (n: number) => n.toFixed(0);
const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
const percent = (n: number) => `${(n * 100).toFixed(0)}%`;
const spreadText = (s: Spread, fmt = f0) => `${fmt(s.median)} (${fmt(s.min)}-${fmt(s.max)})`;
const formatOf = (unit: TargetRow["unit"]) =>
  unit === "%" ? percent : unit === "µs" ? (n: number) => `${f0(n)} µs` : (n: number) => `${f2(n)}x`;

/** What the Markdown shows. */
export interface EfficiencyReportInput {
  environment: Environment;
  wrk: string;
  measureS: number;
  summary: EfficiencySummary;
  rounds: readonly EfficiencyRound[];
}

export function efficiencyMarkdown(input: EfficiencyReportInput): string {
  const { summary, rounds } = input;
  const heavy16 = summary.limits["heavy"]![16]!;
  const light16 = summary.limits["heavy_light"]![16]!;
  const lines = [
    "# Server efficiency: tbench-server's own cost per request, against bare node:http, a naive server and its in-process limit",
    "",
    environmentMarkdown(input.environment),
    "",
    `**This machine runs \`heavy\` in-process at ${spreadText(heavy16)} rows/s at batch 16 ` +
      `(${f0(summary.usPerRowAt16["heavy"]!.median)} µs per row), \`heavy_light\` at ${spreadText(light16)} ` +
      `(${f0(summary.usPerRowAt16["heavy_light"]!.median)} µs per row; target 2 counts where it is <= ` +
      `${FAST_MODEL_US_PER_ROW} µs), and one \`simple\` run costs ${f0(summary.simpleRunCpu.median)} CPU µs.**`,
    "",
    `Load: ${input.wrk} (\`-t 1\`, closed loop), 1 s warm-up then ${input.measureS} s per run, and for target 3 ` +
      "the `tbench` bin (`-p` windows until stable), against child processes: tbench-server as users run it " +
      "(its bin; HTTP and gRPC; one instance of each model, one intra-op thread), the naive server " +
      "(`naive-server.mjs`: node:http, JSON.parse, one `session.run()` per request on the main thread) and " +
      "bare node:http handlers that read the body and write the bytes tbench-server answered " +
      `(\`bare-server.mjs\`). ${rounds.length} rounds, the order rotating. On this 2-core machine the load ` +
      "generator, the server's main thread and its model instance compete for the cores; the in-process " +
      "figures run alone.",
    "",
    "CPU per request: the server process's user + system time from /proc (every thread) over the run, warm-up " +
      "included, divided by the requests the server answered in that span (its statistics; for the bare and " +
      "naive servers, wrk's count with the warm-up at the measured rate). The model's own CPU per request is " +
      "what onnxruntime-node spends in this process on every batch the server ran, at its size (the server's " +
      "batch_stats), over the requests: overhead = process - model. Busy share: the time the instance's " +
      "session spent running batches (batch_stats' compute_infer) over the wall time of the run.",
    "",
    "| Target | Figure | Value | Per round | Threshold | Verdict |",
    "| --- | --- | --- | --- | --- | --- |",
    ...summary.targets.map((t) => {
      const fmt = formatOf(t.unit);
      return `| ${t.target} | ${t.figure} | ${fmt(t.value)} | ${t.perRound.map(fmt).join(", ")} | ${t.threshold} | ${verdictMarkdown(t.verdict)} |`;
    }),
    "",
    "## Where the CPU of a request goes (µs per request, median (min-max))",
    "",
    "| Run | server process | main thread | model (in-process, at the batches formed) | overhead (process - model) | instance and other threads, beyond the model | bare handler |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...summary.overheads.map(
      (o) =>
        `| ${o.run} | ${spreadText(o.process)} | ${spreadText(o.mainThread)} | ${spreadText(o.model)} | ` +
        `${spreadText(o.overhead)} | ${spreadText(o.otherThreads)} | ${spreadText(o.bare)} |`,
    ),
    "",
    "## Batching (the server's statistics over each run)",
    "",
    "| Run | average batch | instance busy | queue µs per request |",
    "| --- | --- | --- | --- |",
    ...summary.batching.map(
      (b) =>
        `| ${b.run} | ${spreadText(b.averageBatch, f1)} | ${spreadText(b.busyFraction, percent)} | ${spreadText(b.queueUsPerRequest)} |`,
    ),
    "",
    `In-process CPU µs of one \`heavy\` run by batch size: ${Object.entries(summary.heavyCpuPerRunUs)
      .map(([size, us]) => `${size}: ${f0(us)}`)
      .join(", ")}.`,
    "",
    "## Rates and CPU per request",
    "",
    "| Run | req/s, median (min-max) | p50 / p99 ms (median round) | errors | process CPU µs/request | main thread µs/request |",
    "| --- | --- | --- | --- | --- | --- |",
    ...Object.entries(summary.rates).map(([id, s]) => {
      const runs = rounds.map((r) => r.runs[id]!);
      const mid = [...runs].sort((a, b) => a.requestsPerSec - b.requestsPerSec)[Math.floor(runs.length / 2)]!;
      const errors = runs.reduce((sum, r) => sum + r.errors, 0);
      const c = summary.cpu[id];
      return (
        `| ${id} | ${spreadText(s)} | ${f2(mid.p50Ms)} / ${f2(mid.p99Ms)} | ${errors} | ` +
        `${c ? spreadText(c.process) : "-"} | ${c ? spreadText(c.mainThread) : "-"} |`
      );
    }),
    ...Object.entries(summary.limits).flatMap(([model, bySize]) =>
      [16, 32].map(
        (b) =>
          `| ${model} in-process limit, batch ${b} (rows/s) | ${spreadText(bySize[b]!)} | - | - | - | - |`,
      ),
    ),
    "",
    "## Every round (req/s)",
    "",
    `| Round | ${Object.keys(summary.rates).join(" | ")} | heavy limit b16 / b32 | heavy_light limit b16 / b32 |`,
    `| --- | ${Object.keys(summary.rates)
      .map(() => "---")
      .join(" | ")} | --- | --- |`,
    ...rounds.map(
      (r, i) =>
        `| ${i + 1} | ${Object.keys(summary.rates)
          .map((id) => f0(r.runs[id]!.requestsPerSec))
          .join(" | ")} | ${f0(r.limit[16] ?? Number.NaN)} / ${f0(r.limit[32] ?? Number.NaN)} | ` +
        `${f0(r.lightLimit[16] ?? Number.NaN)} / ${f0(r.lightLimit[32] ?? Number.NaN)} |`,
    ),
    "",
    "Orders: " + rounds.map((r, i) => `round ${i + 1}: ${r.order.join(", ")}`).join("; ") + ".",
    "",
  ];
  return lines.join("\n");
}
