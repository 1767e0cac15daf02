import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import {
  COMPARE_METRICS,
  type CompareMetric,
  compareResults,
  formatCompareTable,
} from "../report/compare-results.js";
import { parseResultJson, type ResultJson } from "../report/json-result.js";
import { UsageError } from "../run/usage-error.js";
import { isTuneJson, selectTuneRun, tuneRuns } from "../tune/tune-json.js";

/** A result file's text; `FILE#LABEL` names one run of a `tbench tune --json` file. */
async function readSource(path: string): Promise<{ file: string; label: string | undefined; text: string }> {
  const hash = path.lastIndexOf("#");
  const split = hash > 0 && !existsSync(path);
  const file = split ? path.slice(0, hash) : path;
  const label = split ? path.slice(hash + 1) : undefined;
  try {
    return { file, label, text: await readFile(file, "utf8") };
  } catch (error) {
    throw new UsageError(`${file}: cannot read the file (${(error as Error).message})`);
  }
}

function parseSource(
  file: string,
  label: string | undefined,
  text: string,
): { label: string; result: ResultJson }[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  try {
    if (isTuneJson(json)) {
      return label === undefined
        ? tuneRuns(json, file)
        : [{ label, result: selectTuneRun(json, label, file) }];
    }
    if (label !== undefined)
      throw new Error(`${file}: #${label} selects a run of a tbench tune --json result, this is not one`);
    return [{ label: file, result: parseResultJson(text, file) }];
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * Reads and validates a `--json` result, turning problems into usage errors (exit 2). A `tbench tune
 * --json` file gives its winner, or the run named by `FILE#LABEL`.
 */
export async function readResultFile(path: string): Promise<ResultJson> {
  const { file, label, text } = await readSource(path);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (isTuneJson(json) && label === undefined) {
    try {
      return selectTuneRun(json, undefined, file);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  const [run] = parseSource(file, label, text);
  return run!.result;
}

/** Every run in a result file: one for a `tbench --json` file, each measured config of a tune result. */
export async function readResultRuns(
  path: string,
): Promise<{ label: string | undefined; result: ResultJson }[]> {
  const { file, label, text } = await readSource(path);
  const runs = parseSource(file, label, text);
  // A plain result keeps its file-name label (the caller's); tune runs are named by their candidate.
  return runs.map((r) => ({ label: r.label === file ? undefined : r.label, result: r.result }));
}

function positive(flag: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== "string" || value.trim() === "" || !Number.isFinite(n) || n < 0) {
    throw new UsageError(`${flag}: expected a non-negative number, got "${String(value)}"`);
  }
  return n;
}

/**
 * `tbench compare BASELINE CANDIDATE`: prints the side-by-side table; returns 1 when the gate fails,
 * 0 otherwise. Levels present in only one file are skipped; none in common is a usage error.
 */
export async function runCompare(
  baselinePath: string,
  candidatePath: string,
  options: Record<string, unknown>,
  write: (text: string) => void,
): Promise<number> {
  const metrics = ((options["metric"] as string[] | undefined) ?? ["throughput", "p99"]).flatMap((m) =>
    m.split(","),
  );
  for (const metric of metrics) {
    if (!(COMPARE_METRICS as readonly string[]).includes(metric)) {
      throw new UsageError(`--metric: expected one of ${COMPARE_METRICS.join("|")}, got "${metric}"`);
    }
  }
  const minRatio = positive("--min-ratio", options["minRatio"]);
  const maxRegressionPercent = positive("--max-regression", options["maxRegression"]);
  if (minRatio !== undefined && maxRegressionPercent !== undefined) {
    throw new UsageError("--min-ratio and --max-regression cannot be used together");
  }
  // One after the other, so that a problem with both files always names the baseline first.
  const baseline = await readResultFile(baselinePath);
  const candidate = await readResultFile(candidatePath);
  const rows = compareResults(baseline, candidate, metrics as CompareMetric[], {
    minRatio,
    maxRegressionPercent,
  });
  if (rows.length === 0) {
    throw new UsageError(`${baselinePath} and ${candidatePath} have no level (mode and value) in common`);
  }
  const gated = minRatio !== undefined || maxRegressionPercent !== undefined;
  write(formatCompareTable(rows, gated));
  const failed = rows.filter((r) => !r.pass);
  if (gated) {
    write(
      failed.length === 0
        ? "Gate passed.\n"
        : `Gate failed: ${failed.length} of ${rows.length} comparisons.\n`,
    );
  }
  return gated && failed.length > 0 ? 1 : 0;
}
