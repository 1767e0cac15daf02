// The batching benchmark's result (bench-results/batching.json) and its Markdown (batching.md): every
// figure with its spread over rounds, every target with its verdict, every round listed.
import {
  type Environment,
  environmentMarkdown,
  INVALID_ABOVE_LIMIT,
  type Spread,
  type Verdict,
  verdictMarkdown,
} from "@tbench/bench-kit";

/** One tbench run against the server. */
export interface ServerRound {
  inferPerSec: number;
  p50Ms: number;
  p99Ms: number;
  avgBatchSize: number | null;
  status: string;
  errors: number;
  overheadWarning: string | null;
}

/** One model at one concurrency, over all rounds, against its limit. */
export interface CaseResult {
  model: string;
  concurrency: number;
  dynamicBatching: boolean;
  /** min(concurrency, max_batch_size) with dynamic batching, else 1. */
  limitBatchSize: number;
  rounds: ServerRound[];
  /** infer/s over rounds. */
  server: Spread;
  /** In-process infer/s at limitBatchSize over rounds. */
  limit: Spread;
  /** median(server) / median(limit). */
  shareOfLimit: number;
  target: number | null;
  verdict: Verdict | null;
}

export interface BatchingResult {
  benchmark: string;
  environment: Environment;
  settings: { rounds: number; windowMs: number; limitMs: number; concurrencies: number[] };
  targets: { onOffAtConcurrency16: number; shareOfLimit: number };
  cases: CaseResult[];
  limits: (Spread & { batchSize: number; rounds: number[] })[];
  onOff: {
    concurrency: number;
    perRound: number[];
    ratio: number;
    target: number | null;
    verdict: Verdict | null;
  }[];
  /** The order the runs took in each round. */
  orders: string[][];
}

const n0 = (x: number) => x.toFixed(0);
const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
const range = (s: Spread) => `${n0(s.median)} (${n0(s.min)}-${n0(s.max)})`;

/** The round whose throughput is nearest the median: its latencies stand for the case. */
function medianRound(c: CaseResult): ServerRound {
  return c.rounds.reduce((best, r) =>
    Math.abs(r.inferPerSec - c.server.median) < Math.abs(best.inferPerSec - c.server.median) ? r : best,
  );
}

export function batchingMarkdown(r: BatchingResult): string {
  const { settings } = r;
  const anyInvalid = r.cases.some((c) => c.verdict === INVALID_ABOVE_LIMIT);
  const warnings = r.cases.flatMap((c) =>
    c.rounds
      .filter((round) => round.errors > 0 || round.status !== "ok" || round.overheadWarning !== null)
      .map(
        (round) =>
          `${c.model} c=${c.concurrency}: ${round.status}, ${round.errors} errors` +
          (round.overheadWarning !== null ? `, tbench: ${round.overheadWarning}` : ""),
      ),
  );
  return [
    "# Dynamic batching: heavy (on) vs heavy_nobatch (off), and the in-process limit",
    "",
    environmentMarkdown(r.environment),
    "",
    "Server in the benchmark's process (HTTP on the main thread, one model instance in a worker thread, one " +
      "intra-op thread); load from the `tbench` command (built, child process), closed loop, binary tensors, " +
      `batch 1 per request, ${settings.windowMs / 1000} s windows (3 per run, \`-s 50 -r 3\`). ` +
      `${settings.rounds} rounds; in each, every run and the in-process limit once, the order rotating.`,
    "",
    "The in-process limit is onnxruntime-node running the same model file in the benchmark's process (one " +
      "session, the instance's threads), back to back for " +
      `${settings.limitMs / 1000} s per batch size per round, at the largest batch the server may form: ` +
      "min(concurrency, max_batch_size) with dynamic batching, 1 without. Share of the limit = median(server " +
      "infer/s) / median(limit infer/s). A share above 100% means the limit was not one (noise, or a " +
      "machine busier during the limit's turn): such a run is **invalid**, not a success.",
    "",
    "| Model | Concurrency | infer/s, median (min-max) | p50 / p99 ms | avg batch | limit batch | limit infer/s, median (min-max) | share of limit | target | verdict |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...r.cases.map((c) => {
      const m = medianRound(c);
      return (
        `| ${c.model} | ${c.concurrency} | ${range(c.server)} | ${m.p50Ms.toFixed(2)} / ${m.p99Ms.toFixed(2)} | ` +
        `${m.avgBatchSize?.toFixed(2) ?? "-"} | ${c.limitBatchSize} | ${range(c.limit)} | ${pct(c.shareOfLimit)} | ` +
        `${c.target !== null ? `>= ${pct(c.target)}` : "-"} | ${c.verdict !== null ? verdictMarkdown(c.verdict) : "- (no target)"} |`
      );
    }),
    "",
    "| Concurrency | batching on/off, median of per-round ratios | per round | target | verdict |",
    "| --- | --- | --- | --- | --- |",
    ...r.onOff.map(
      (o) =>
        `| ${o.concurrency} | ${o.ratio.toFixed(2)}x | ${o.perRound.map((x) => `${x.toFixed(2)}x`).join(", ")} | ` +
        `${o.target !== null ? `>= ${o.target}x` : "-"} | ${o.verdict !== null ? verdictMarkdown(o.verdict) : "- (no target)"} |`,
    ),
    "",
    ...(anyInvalid
      ? [
          "At least one run is above its in-process limit: its share is not a result. Rerun on a quiet machine.",
          "",
        ]
      : []),
    "Every round (infer/s):",
    "",
    `| Round | Order | ${r.cases.map((c) => `${c.model} c=${c.concurrency}`).join(" | ")} | ${r.limits.map((l) => `limit batch ${l.batchSize}`).join(" | ")} |`,
    `| --- | --- | ${r.cases.map(() => "---").join(" | ")} | ${r.limits.map(() => "---").join(" | ")} |`,
    ...r.orders.map(
      (order, i) =>
        `| ${i + 1} | ${order.join(", ")} | ${r.cases.map((c) => n0(c.rounds[i]?.inferPerSec ?? Number.NaN)).join(" | ")} | ` +
        `${r.limits.map((l) => n0(l.rounds[i] ?? Number.NaN)).join(" | ")} |`,
    ),
    "",
    ...(warnings.length > 0 ? ["Runs that were not clean:", "", ...warnings.map((w) => `- ${w}`), ""] : []),
  ].join("\n");
}
