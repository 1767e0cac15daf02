// What every benchmark program (packages/*/bench) shares: the --quick / BENCH_QUICK smoke mode and where
// results go, medians and spreads over interleaved rounds, ratios as the median of per-round ratios, the
// verdict words of bench-results/*.md, and the machine line with the load average at start and end.
// Kept free of I/O except writeResult, so the rules that decide a verdict are unit-tested
// (bench-kit.test.ts).
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** How a benchmark program was asked to run. */
export interface BenchOptions {
  /** A short smoke run (fewer, shorter rounds): proves the program works, its figures mean nothing. */
  quick: boolean;
  /** Where results are written. A quick run never writes into bench-results/ unless told to. */
  outDir: string;
}

/**
 * Reads `--quick` (or BENCH_QUICK=1) and `--out DIR` (or BENCH_RESULTS_DIR). Without a directory, a full
 * run writes bench-results/ and a quick run a folder under the system's temporary directory.
 */
export function benchOptions(
  argv: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): BenchOptions {
  const quick = argv.includes("--quick") || env["BENCH_QUICK"] === "1";
  const outFlag = argv.indexOf("--out");
  const outArg = outFlag >= 0 ? argv[outFlag + 1] : undefined;
  if (outFlag >= 0 && (outArg === undefined || outArg.startsWith("--"))) {
    throw new Error("--out: expected a directory after it, got nothing");
  }
  const outDir =
    outArg ??
    env["BENCH_RESULTS_DIR"] ??
    (quick ? join(tmpdir(), "tbench-bench-quick") : join(ROOT, "bench-results"));
  return { quick, outDir };
}

/** The median (the mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error("median: expected at least one value, got none");
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Lowest, median and highest of a figure over rounds. */
export interface Spread {
  min: number;
  median: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  return { min: Math.min(...values), median: median(values), max: Math.max(...values) };
}

/** numerator[i] / denominator[i] for each round i (both measured in the same round). */
export function perRoundRatios(numerator: readonly number[], denominator: readonly number[]): number[] {
  if (numerator.length !== denominator.length || numerator.length === 0) {
    throw new Error(
      `per-round ratios: expected two equal, non-empty lists of rounds, got ${numerator.length} and ${denominator.length}`,
    );
  }
  return numerator.map((n, i) => n / denominator[i]!);
}

/** The median of per-round ratios: a noisy round moves it less than a ratio of medians or of sums. */
export function medianRatio(numerator: readonly number[], denominator: readonly number[]): number {
  return median(perRoundRatios(numerator, denominator));
}

export const INVALID_ABOVE_LIMIT = "invalid: above the in-process limit";
/** The words every bench-results/*.md uses for a target. */
export type Verdict = "met" | "not met" | typeof INVALID_ABOVE_LIMIT;

/** A figure where more is better: met when `value >= target`. */
export function atLeast(value: number, target: number): Verdict {
  return value >= target ? "met" : "not met";
}

/** A figure where less is better (a latency ratio): met when `value <= target`. */
export function atMost(value: number, target: number): Verdict {
  return value <= target ? "met" : "not met";
}

/**
 * A server's share of an in-process limit. Above 1 the "limit" was not one (noise, or a limit measured
 * under different conditions), so the run is invalid rather than a success.
 */
export function shareOfLimit(fraction: number, target: number): Verdict {
  if (fraction > 1) return INVALID_ABOVE_LIMIT;
  return atLeast(fraction, target);
}

/** A verdict as the Markdown results show it. */
export function verdictMarkdown(verdict: Verdict): string {
  return `**${verdict}**`;
}

/** Round r's order of the contenders: rotated by r, so none always runs first or after the same one. */
export function rotate<T>(items: readonly T[], round: number): T[] {
  return items.map((_, i) => items[(i + round) % items.length]!);
}

/** The machine and what else ran on it (load average, 1/5/15 min) while a benchmark ran. */
export interface Environment {
  date: string;
  cpus: number;
  cpuModel: string;
  node: string;
  quick: boolean;
  loadAverageStart: number[];
  loadAverageEnd: number[];
}

/** Notes the load average at start; call the result at the end to get the whole environment. */
export function startEnvironment(options: BenchOptions): () => Environment {
  const date = new Date().toISOString();
  const loadAverageStart = loadavg();
  return () => ({
    date,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    node: process.version,
    quick: options.quick,
    loadAverageStart,
    loadAverageEnd: loadavg(),
  });
}

const loads = (values: readonly number[]) => values.map((v) => v.toFixed(2)).join(" / ");

/** One Markdown paragraph: date, machine, load average at start and end, and a warning for a quick run. */
export function environmentMarkdown(e: Environment): string {
  const quick = e.quick
    ? "**Quick smoke run (--quick / BENCH_QUICK=1): short rounds, the figures and verdicts mean nothing.** "
    : "";
  return (
    `${quick}${e.date}, ${e.cpus} CPUs (${e.cpuModel}), Node ${e.node}. Load average (1 / 5 / 15 min) at ` +
    `start ${loads(e.loadAverageStart)}, at end ${loads(e.loadAverageEnd)}: above ~1 per CPU, other work ` +
    "shared the machine and every figure is noisier."
  );
}

/** Writes `<name>.json` and `<name>.md` under the options' directory; returns their paths. */
export async function writeResult(
  options: BenchOptions,
  name: string,
  json: unknown,
  markdown: string,
): Promise<string[]> {
  await mkdir(options.outDir, { recursive: true });
  const paths = [join(options.outDir, `${name}.json`), join(options.outDir, `${name}.md`)];
  await writeFile(paths[0]!, `${JSON.stringify(json, null, 2)}\n`);
  await writeFile(paths[1]!, markdown.endsWith("\n") ? markdown : `${markdown}\n`);
  return paths;
}
