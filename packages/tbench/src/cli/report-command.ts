import { writeFile } from "node:fs/promises";
import { basename, extname } from "node:path";
import { type ChartRun, chartRunFromResult } from "../report/chart-data.js";
import { UsageError } from "../run/usage-error.js";
import { readResultRuns } from "./compare-command.js";

/** A run's label: its file name without `.json` (`batching-on.json` -> `batching-on`), made unique. */
function labels(inputs: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return inputs.map((input) => {
    const base = basename(input, extname(input));
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return n === 1 ? base : `${base} (${n})`;
  });
}

/**
 * `tbench report A.json [B.json...] -o report.html|report.svg`: charts the results. HTML holds every chart
 * (throughput against latency for all runs, then each run's percentiles and server-side breakdown); SVG
 * holds the throughput/latency chart alone, for a README. A `tbench tune --json` file charts each of its
 * measured configs. Returns the exit code.
 */
export async function runReport(
  inputs: readonly string[],
  options: Record<string, unknown>,
  write: (text: string) => void,
): Promise<number> {
  const output = options["output"];
  if (typeof output !== "string" || output === "") throw new UsageError("report: -o/--output is required");
  const kind = extname(output).toLowerCase();
  if (kind !== ".html" && kind !== ".svg") {
    throw new UsageError(`report: -o expects a file ending in .html or .svg, got '${output}'`);
  }
  if (inputs.length < 1) throw new UsageError("report: expected at least one result file");
  const files = await Promise.all(inputs.map(readResultRuns));
  const names = labels(inputs);
  // A tune result (tbench tune --json) brings one run per measured config, named by its config.
  const runs: ChartRun[] = files.flatMap((file, i) =>
    file.map((r) => chartRunFromResult(r.result, r.label ?? names[i] ?? `run ${i + 1}`)),
  );
  const empty = runs.filter((r) => r.points.length === 0).map((r) => r.label);
  if (empty.length > 0) {
    throw new UsageError(`report: no level with a successful request in ${empty.join(", ")}`);
  }
  // Loaded here, not at the top: the charts pull in echarts (about 600 modules, most of a second), which
  // every other tbench command would otherwise load at start-up.
  const { renderHtmlReport, renderThroughputSvg } = await import("../report/html-report.js");
  const text = kind === ".svg" ? renderThroughputSvg(runs) : renderHtmlReport(runs, { sources: [...inputs] });
  await writeFile(output, text);
  write(`Wrote ${kind === ".svg" ? "1 chart" : "the report"} of ${runs.length} run(s) to ${output}\n`);
  return 0;
}
