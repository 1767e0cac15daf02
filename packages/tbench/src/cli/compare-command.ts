import { readFile } from "node:fs/promises";
import {
  COMPARE_METRICS,
  type CompareMetric,
  compareResults,
  formatCompareTable,
} from "../report/compare-results.js";
import { parseResultJson, type ResultJson } from "../report/json-result.js";
import { UsageError } from "./usage-error.js";

/** Reads and validates a `--json` result, turning problems into usage errors (exit 2). */
export async function readResultFile(path: string): Promise<ResultJson> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new UsageError(`${path}: cannot read the file (${(error as Error).message})`);
  }
  try {
    return parseResultJson(text, path);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
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
