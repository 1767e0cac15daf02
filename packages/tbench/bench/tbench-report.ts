// The tbench benchmark's result (bench-results/tbench.json) and its Markdown (tbench.md): per connection
// count, each contender's rate over rounds, tbench's ratio to each (median of per-round ratios) with its
// verdict, and every round.
import {
  type Environment,
  environmentMarkdown,
  type LoadFigure,
  type Spread,
  type Verdict,
  verdictMarkdown,
} from "@tbench/bench-kit";

export const CONTENDERS = ["tbench", "autocannon", "wrk", "undici"] as const;
export type Contender = (typeof CONTENDERS)[number];

/** A tbench run also says how its level ended and whether it suspected itself. */
export interface TbenchFigure extends LoadFigure {
  status: string;
  cpuPercent: number | null;
  overheadWarning: string | null;
}

export interface Round {
  order: Contender[];
  figures: { tbench: TbenchFigure; autocannon: LoadFigure; wrk?: LoadFigure; undici?: LoadFigure };
}

export interface Ratio {
  /**
   * tbench / this contender; "strongest": tbench / the faster of autocannon and wrk in the same round;
   * "undici": tbench / raw undici dispatch (tbench's transport), what tbench adds over it.
   */
  against: "autocannon" | "wrk" | "strongest" | "undici";
  perRound: number[];
  median: number;
  verdict: Verdict;
}

export interface ConnectionsResult {
  connections: number;
  rounds: Round[];
  rates: Partial<Record<Contender, Spread>>;
  ratios: Ratio[];
}

export interface TbenchBenchResult {
  benchmark: string;
  environment: Environment;
  request: string;
  responseBytes: number;
  tbenchArgs: string[];
  wrk: string | null;
  settings: {
    rounds: number;
    tbenchWindowMs: number;
    tbenchMaxTrials: number;
    warmupS: number;
    durationS: number;
    wrkThreads: number;
  };
  target: number;
  levels: ConnectionsResult[];
}

const n0 = (x: number) => x.toFixed(0);
const rate = (s: Spread | undefined) =>
  s === undefined ? "-" : `${n0(s.median)} (${n0(s.min)}-${n0(s.max)})`;

export function tbenchMarkdown(r: TbenchBenchResult): string {
  const s = r.settings;
  const withWrk = r.wrk !== null;
  const contenders = CONTENDERS.filter((c) => c !== "wrk" || withWrk);
  const warnings = r.levels.flatMap((level) =>
    level.rounds.flatMap((round, i) => {
      const t = round.figures.tbench;
      const lines: string[] = [];
      if (t.status !== "ok" || t.overheadWarning !== null) {
        lines.push(
          `c=${level.connections} round ${i + 1}: tbench level ${t.status}` +
            (t.overheadWarning !== null ? `; ${t.overheadWarning}` : ""),
        );
      }
      for (const c of contenders) {
        const errors = round.figures[c]?.errors ?? 0;
        if (errors > 0) lines.push(`c=${level.connections} round ${i + 1}: ${c} counted ${errors} errors`);
      }
      return lines;
    }),
  );
  return [
    "# tbench vs autocannon and wrk",
    "",
    environmentMarkdown(r.environment),
    "",
    `The same request from every tool: ${r.request} (answer: ${r.responseBytes} bytes), captured from ` +
      "tbench through a recording proxy and replayed byte for byte by the others. tbench-server in a child " +
      "process, `identity_fp32`. Each load generator in its own process with one event loop or thread: " +
      `the \`tbench\` command as users run it (\`tbench ${r.tbenchArgs.join(" ")}\`, built, with its profiler, ` +
      "statistics reads and overhead monitor; its figure is the rate it reports, over its last 3 windows), autocannon " +
      `(its API in a child process: its CLI reads a body file as text) with ${s.warmupS} s warm-up then ` +
      `${s.durationS} s, ` +
      (withWrk
        ? `${r.wrk} (\`-t ${s.wrkThreads}\`) with ${s.warmupS} s warm-up then ${s.durationS} s, `
        : "**wrk: not installed here, skipped** (Debian: `apt-get install wrk`), ") +
      "and raw undici `Pool.dispatch()` (undici-run.mjs in a child process: the transport under " +
      "`@tbench/client`'s default engine, one request in flight per connection, a handler that keeps nothing) " +
      "with the same warm-up and run. tbench sends through the client's own HTTP/1.1 engine (`engine: " +
      '"wire"`), so tbench / undici is the whole tbench command against the fastest undici use there is.',
    "",
    `${s.rounds} rounds per connection count, the order rotating each round. Ratios are medians of per-round ` +
      (withWrk
        ? "ratios; tbench / strongest divides by the faster of autocannon and wrk in each round."
        : "ratios."),
    "",
    "| Connections | " +
      contenders.map((c) => `${c} req/s, median (min-max)`).join(" | ") +
      " | tbench / autocannon | tbench / undici | " +
      (withWrk ? "tbench / wrk | tbench / strongest | " : "") +
      `target | verdict (vs ${withWrk ? "wrk" : "autocannon"}) |`,
    `| --- | ${contenders.map(() => "---").join(" | ")} | --- | --- | ${withWrk ? "--- | --- | " : ""}--- | --- |`,
    ...r.levels.map((level) => {
      const ratio = (against: Ratio["against"]) => level.ratios.find((x) => x.against === against);
      const shown = (against: Ratio["against"]) => {
        const x = ratio(against);
        return x === undefined ? "-" : `${x.median.toFixed(2)}x (${verdictMarkdown(x.verdict)})`;
      };
      const headline = ratio(withWrk ? "wrk" : "autocannon")!;
      return (
        `| ${level.connections} | ${contenders.map((c) => rate(level.rates[c])).join(" | ")} | ${shown("autocannon")} | ` +
        `${shown("undici")} | ` +
        (withWrk ? `${shown("wrk")} | ${shown("strongest")} | ` : "") +
        `>= ${r.target}x | ${verdictMarkdown(headline.verdict)} |`
      );
    }),
    "",
    `Target (issue 16): tbench >= ${r.target}x ${withWrk ? "wrk's" : "autocannon's"} rate at the same ` +
      "connection count (the verdict column); the marks beside the other ratios apply the same bar to them.",
    "",
    "Every round (req/s; p50 / p99 ms):",
    "",
    `| Connections | Round | Order | ${contenders.join(" | ")} |`,
    `| --- | --- | --- | ${contenders.map(() => "---").join(" | ")} |`,
    ...r.levels.flatMap((level) =>
      level.rounds.map(
        (round, i) =>
          `| ${level.connections} | ${i + 1} | ${round.order.join(", ")} | ` +
          contenders
            .map((c) => {
              const f = round.figures[c];
              return f === undefined
                ? "-"
                : `${n0(f.requestsPerSec)}; ${f.p50Ms.toFixed(2)} / ${f.p99Ms.toFixed(2)}`;
            })
            .join(" | ") +
          " |",
      ),
    ),
    "",
    ...(warnings.length > 0 ? ["Not clean:", "", ...warnings.map((w) => `- ${w}`), ""] : []),
  ].join("\n");
}
