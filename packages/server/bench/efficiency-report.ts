// The figures and verdicts of the server efficiency benchmark (server-efficiency.ts), from its rounds:
// medians with their spread, ratios as medians of per-round ratios (shares of the in-process limit as a
// ratio of medians, as the batching benchmark defines them), and the Markdown of
// bench-results/server-efficiency.md. Pure: no I/O.
import {
  atLeast,
  atMost,
  type Environment,
  environmentMarkdown,
  median,
  medianRatio,
  perRoundRatios,
  type Spread,
  shareOfLimit,
  spread,
  type Verdict,
  verdictMarkdown,
} from "../../../scripts/bench/bench-kit.js";
import type { LoadFigure } from "../../tbench/bench/wrk-run.js";

/** One run's figures: wrk's, plus the server's CPU per request where it was read. */
export interface RunFigure extends LoadFigure {
  cpuUsPerRequest?: number;
  mainThreadCpuUsPerRequest?: number;
}

/**
 * One round: its order, every run by case id, the in-process limit (rows/s) by batch size, and the CPU of
 * one in-process `session.run()` of `simple` at batch 1 (µs), the floor of target 3.
 */
export interface EfficiencyRound {
  order: string[];
  runs: Record<string, RunFigure>;
  limit: Record<number, number>;
  simpleRunCpuUs?: number;
}

/** One target's figure and verdict. */
export interface TargetRow {
  target: string;
  figure: string;
  value: number;
  threshold: string;
  verdict: Verdict;
  perRound: number[];
}

/** One load at --http-thread-count 1 and 2: rates, their per-round ratio, CPU per request when read. */
export interface HttpThreadsRow {
  run: string;
  one: Spread;
  two: Spread;
  ratio: number;
  perRound: number[];
  cpuOne?: Spread;
  cpuTwo?: Spread;
}

/** The runs measured at 2 HTTP threads, by the id of the same run at 1 thread. */
export const TWO_THREAD_RUNS: Readonly<Record<string, string>> = {
  "simple json": "simple json, 2 HTTP threads",
  "heavy c=32 json": "heavy c=32 json, 2 HTTP threads",
};

export interface EfficiencySummary {
  rates: Record<string, Spread>;
  limits: Record<number, Spread>;
  cpu: Record<string, { process: Spread; mainThread: Spread }>;
  /** CPU µs of one in-process `simple` run at batch 1. */
  simpleRunCpu: Spread;
  /** The same load against the front end in 1 and in 2 HTTP threads (no target: the issue asks for both). */
  httpThreads: HttpThreadsRow[];
  targets: TargetRow[];
}

const runsOf = (rounds: readonly EfficiencyRound[], id: string) =>
  rounds.map((r) => {
    const run = r.runs[id];
    if (run === undefined) throw new Error(`round without the run '${id}'`);
    return run;
  });
const ratesOf = (rounds: readonly EfficiencyRound[], id: string) =>
  runsOf(rounds, id).map((r) => r.requestsPerSec);
const cpuOf = (rounds: readonly EfficiencyRound[], id: string) =>
  runsOf(rounds, id).map((r) => r.cpuUsPerRequest ?? Number.NaN);

/** Every figure and verdict of the targets, from the rounds. */
export function summarize(rounds: readonly EfficiencyRound[]): EfficiencySummary {
  const ids = Object.keys(rounds[0]?.runs ?? {});
  const rates = Object.fromEntries(ids.map((id) => [id, spread(ratesOf(rounds, id))]));
  const limits = Object.fromEntries(
    [16, 32].map((b) => [b, spread(rounds.map((r) => r.limit[b] ?? Number.NaN))]),
  ) as Record<number, Spread>;
  const cpu = Object.fromEntries(
    ids
      .filter((id) => runsOf(rounds, id).every((r) => r.cpuUsPerRequest !== undefined))
      .map((id) => [
        id,
        {
          process: spread(cpuOf(rounds, id)),
          mainThread: spread(runsOf(rounds, id).map((r) => r.mainThreadCpuUsPerRequest ?? Number.NaN)),
        },
      ]),
  );
  const targets: TargetRow[] = [];
  for (const [connections, share] of [
    [32, 0.8],
    [16, 0.7],
  ] as const) {
    for (const encoding of ["json", "binary"]) {
      const id = `heavy c=${connections} ${encoding}`;
      const server = ratesOf(rounds, id);
      const limit = rounds.map((r) => r.limit[connections] ?? Number.NaN);
      const value = median(server) / median(limit);
      targets.push({
        target: "1",
        figure: `${id} / in-process limit at batch ${connections}`,
        value,
        threshold: `>= ${share * 100}%`,
        verdict: shareOfLimit(value, share),
        perRound: perRoundRatios(server, limit),
      });
    }
  }
  const naive = ratesOf(rounds, "naive c=16 json");
  for (const [id, threshold] of [
    ["heavy_nobatch c=16 json", 1],
    ["heavy c=16 json", 4],
  ] as const) {
    const server = ratesOf(rounds, id);
    const value = medianRatio(server, naive);
    targets.push({
      target: "2",
      figure: `${id} / naive server c=16`,
      value,
      threshold: `>= ${threshold}x`,
      verdict: atLeast(value, threshold),
      perRound: perRoundRatios(server, naive),
    });
  }
  for (const encoding of ["json", "binary"]) {
    const ours = cpuOf(rounds, `simple ${encoding}`);
    const bare = cpuOf(rounds, `bare ${encoding}`);
    const value = medianRatio(ours, bare);
    targets.push({
      target: "3",
      figure: `CPU per simple request, ${encoding} / bare node:http handler`,
      value,
      threshold: "<= 1.5x",
      verdict: atMost(value, 1.5),
      perRound: perRoundRatios(ours, bare),
    });
    // The best any server could do: the bare handler's CPU plus the model's own run, nothing between.
    const run = rounds.map((r) => r.simpleRunCpuUs ?? Number.NaN);
    const floor = bare.map((b, i) => b + run[i]!);
    const floorValue = medianRatio(floor, bare);
    targets.push({
      target: "3 (floor)",
      figure: `bare handler + one in-process simple run(), ${encoding} / bare handler: what a server with no overhead would reach`,
      value: floorValue,
      threshold: "<= 1.5x",
      verdict: atMost(floorValue, 1.5),
      perRound: perRoundRatios(floor, bare),
    });
  }
  const on = ratesOf(rounds, "heavy c=16 json");
  const off = ratesOf(rounds, "heavy_nobatch c=16 json");
  const onOff = medianRatio(on, off);
  targets.push({
    target: "5",
    figure: "batching on/off at c=16 (heavy / heavy_nobatch, JSON)",
    value: onOff,
    threshold: ">= 3x (the batching target)",
    verdict: atLeast(onOff, 3),
    perRound: perRoundRatios(on, off),
  });
  const simpleRunCpu = spread(rounds.map((r) => r.simpleRunCpuUs ?? Number.NaN));
  const httpThreads = Object.entries(TWO_THREAD_RUNS)
    .filter(([, two]) => ids.includes(two))
    .map(([one, two]): HttpThreadsRow => {
      const oneRates = ratesOf(rounds, one);
      const twoRates = ratesOf(rounds, two);
      return {
        run: one,
        one: spread(oneRates),
        two: spread(twoRates),
        ratio: medianRatio(twoRates, oneRates),
        perRound: perRoundRatios(twoRates, oneRates),
        ...(cpu[one] && cpu[two] ? { cpuOne: cpu[one].process, cpuTwo: cpu[two].process } : {}),
      };
    });
  return { rates, limits, cpu, simpleRunCpu, httpThreads, targets };
}

const f0 = (n: number) => n.toFixed(0);
const f2 = (n: number) => n.toFixed(2);
const spreadText = (s: Spread, fmt = f0) => `${fmt(s.median)} (${fmt(s.min)}-${fmt(s.max)})`;
const valueText = (row: TargetRow) =>
  row.threshold.includes("%") ? `${(row.value * 100).toFixed(0)}%` : `${f2(row.value)}x`;
const perRoundText = (row: TargetRow) =>
  row.perRound
    .map((v) => (row.threshold.includes("%") ? `${(v * 100).toFixed(0)}%` : `${f2(v)}x`))
    .join(", ");

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
  const lines = [
    "# Server efficiency: tbench-server against its in-process limit, a naive server and bare node:http",
    "",
    environmentMarkdown(input.environment),
    "",
    `Load: ${input.wrk} (\`-t 1\`, closed loop), 1 s warm-up then ${input.measureS} s per run, against child processes: ` +
      "tbench-server as users run it (its bin; HTTP only; one instance of each model, one intra-op thread), " +
      "the naive server (`packages/server/bench/naive-server.mjs`: node:http, JSON.parse, one `session.run()` " +
      "per request on the main thread) and a bare node:http handler that reads the body and writes the bytes " +
      "tbench-server answered (`bare-server.mjs`). The in-process limit is onnxruntime-node running the same " +
      "model file in the benchmark's process, back to back, at batch 16 and 32. " +
      `${rounds.length} rounds, the order rotating. On this 2-core machine wrk, the server's main thread and ` +
      "its model instance compete for the cores; the in-process limit runs alone.",
    "",
    "CPU per request: the server process's user + system time from /proc (every thread: HTTP front end and " +
      "model worker) over the run, warm-up included, divided by the requests of the run and its warm-up " +
      "(warm-up counted at the measured rate); `simple` at 8 connections. " +
      "The main thread's share is shown beside it.",
    "",
    "| Target | Figure | Value | Per round | Threshold | Verdict |",
    "| --- | --- | --- | --- | --- | --- |",
    ...summary.targets.map(
      (t) =>
        `| ${t.target} | ${t.figure} | ${valueText(t)} | ${perRoundText(t)} | ${t.threshold} | ${verdictMarkdown(t.verdict)} |`,
    ),
    "",
    "Target 4 (tbench >= 0.95x wrk; the client >= 0.95x raw undici `dispatch`) is measured by `npm run " +
      "bench:tbench` (bench-results/tbench.md) and `npm run bench:client` (bench-results/client.md).",
    "",
    "## Rates",
    "",
    "| Run | req/s, median (min-max) | p50 / p99 ms (median round) | errors |",
    "| --- | --- | --- | --- |",
    ...Object.entries(summary.rates).map(([id, s]) => {
      const runs = rounds.map((r) => r.runs[id]!);
      const mid = [...runs].sort((a, b) => a.requestsPerSec - b.requestsPerSec)[Math.floor(runs.length / 2)]!;
      const errors = runs.reduce((sum, r) => sum + r.errors, 0);
      return `| ${id} | ${spreadText(s)} | ${f2(mid.p50Ms)} / ${f2(mid.p99Ms)} | ${errors} |`;
    }),
    ...[16, 32].map(
      (b) => `| in-process limit, batch ${b} (rows/s) | ${spreadText(summary.limits[b]!)} | - | - |`,
    ),
    "",
    "## CPU per request",
    "",
    "| Run | process µs/request, median (min-max) | main thread µs/request |",
    "| --- | --- | --- |",
    ...Object.entries(summary.cpu).map(
      ([id, c]) => `| ${id} | ${spreadText(c.process)} | ${spreadText(c.mainThread)} |`,
    ),
    `| one in-process \`session.run()\` of simple, batch 1 (the benchmark's process, no server) | ${spreadText(summary.simpleRunCpu)} | - |`,
    "",
    "## The HTTP front end in 2 threads",
    "",
    "`--http-thread-count 2`: a second thread runs the same front end on its own descriptor of the listening " +
      "socket and reaches the one core (scheduler, instances, statistics) in the main thread by message. No " +
      "target; the issue asks for the figures at 1 and 2 threads. On this 2-core machine wrk, both front-end " +
      "threads and the model instance share the two cores, so the second thread has no core of its own.",
    "",
    "| Run | 1 thread req/s | 2 threads req/s | 2 / 1, median (per round) | process CPU µs/request, 1 / 2 threads |",
    "| --- | --- | --- | --- | --- |",
    ...summary.httpThreads.map(
      (t) =>
        `| ${t.run} | ${spreadText(t.one)} | ${spreadText(t.two)} | ${f2(t.ratio)}x (${t.perRound.map(f2).join(", ")}) | ` +
        `${t.cpuOne && t.cpuTwo ? `${spreadText(t.cpuOne)} / ${spreadText(t.cpuTwo)}` : "-"} |`,
    ),
    "",
    "## Every round (req/s)",
    "",
    `| Round | Order | ${Object.keys(summary.rates).join(" | ")} | limit b16 | limit b32 |`,
    `| --- | --- | ${Object.keys(summary.rates)
      .map(() => "---")
      .join(" | ")} | --- | --- |`,
    ...rounds.map(
      (r, i) =>
        `| ${i + 1} | ${r.order.join(", ")} | ${Object.keys(summary.rates)
          .map((id) => f0(r.runs[id]!.requestsPerSec))
          .join(" | ")} | ${f0(r.limit[16] ?? Number.NaN)} | ${f0(r.limit[32] ?? Number.NaN)} |`,
    ),
    "",
  ];
  return lines.join("\n");
}
