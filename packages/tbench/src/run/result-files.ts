// The files a run writes when asked, after the sweep and from the same results the console shows:
// perf_analyzer's CSV (`-f`, plus one per composing model of an ensemble), its profile export
// (`--profile-export-file`), and tbench's own `--json`.
import { writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { LevelResult } from "../measure/level-profiler.js";
import { formatComposingCsvs, formatCsv } from "../report/csv-report.js";
import { toResultJson } from "../report/json-result.js";
import { formatProfileExport } from "../report/profile-export.js";
import type { BenchConfig } from "./bench-config.js";

/** What the files say besides the results and the config. */
export interface ResultFileContext {
  /** Whether the server had statistics: the CSV has its server columns only then. */
  serverStats: boolean;
  /** tbench's version, recorded in the profile export and the JSON. */
  version: string;
}

/** Writes every file the config names (none when it names none). */
export async function writeResultFiles(
  results: readonly LevelResult[],
  config: BenchConfig,
  context: ResultFileContext,
): Promise<void> {
  if (config.csvFile !== undefined) {
    const csv = formatCsv(results, {
      mode: config.mode,
      percentile: config.percentile,
      verbose: config.verboseCsv,
      includeServerStats: context.serverStats,
      includeMetrics: config.collectMetrics,
    });
    await writeFile(config.csvFile, csv);
    // A composing model's CSV is <name>_v<version>.<csv file name>, beside the main one (perf_analyzer's naming).
    for (const [prefix, text] of formatComposingCsvs(results, config.mode)) {
      await writeFile(join(dirname(config.csvFile), `${prefix}.${basename(config.csvFile)}`), text);
    }
  }
  if (config.profileExportFile !== undefined) {
    await writeFile(config.profileExportFile, formatProfileExport(results, context.version));
  }
  if (config.jsonFile !== undefined) {
    const run = { ...config, startedBy: "tbench", version: context.version };
    await writeFile(
      config.jsonFile,
      `${JSON.stringify(toResultJson(results, run, context.version), null, 2)}\n`,
    );
  }
}
