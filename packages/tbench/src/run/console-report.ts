// What a run prints, in perf_analyzer's order: the settings block before any load; per level its heading,
// the verbose pass lines, its summary and messages; at the end the closing summary and tbench's sweep
// table. The phases call it as they go; report/ formats each block, this decides where each one goes.
import type { LoadLevel } from "../load/load-driver.js";
import type { LevelResult } from "../measure/level-profiler.js";
import type { Measurement } from "../measure/measurement.js";
import { highestLevel } from "../measure/sweep.js";
import {
  formatFinalSummary,
  formatLevelSummary,
  formatPassLine,
  formatSettings,
  levelHeading,
} from "../report/console-summary.js";
import { formatSweepTable } from "../report/sweep-table.js";
import type { BenchConfig } from "./bench-config.js";
import type { PreparedRun } from "./prepare-run.js";
import type { RunIo } from "./run-io.js";

/** The run's console output, block by block. */
export interface ConsoleReport {
  /** perf_analyzer's "*** Measurement Settings ***" block. */
  settings(run: PreparedRun): void;
  levelStarts(level: LoadLevel): void;
  /** perf_analyzer's "Pass [n]" line after a window (the profile phase asks for it at `-v`). */
  window(index: number, window: Measurement): void;
  levelEnds(result: LevelResult): void;
  runEnds(results: readonly LevelResult[], interrupted: boolean): void;
}

/** Creates the report: results on stdout, their messages and warnings on stderr. */
export function createConsoleReport(
  config: BenchConfig,
  io: Pick<RunIo, "stdout" | "stderr">,
): ConsoleReport {
  const print = (text: string) => io.stdout.write(text);
  const warn = (text: string) => io.stderr.write(`${text}\n`);
  return {
    settings(run) {
      print(
        formatSettings({
          batchSize: config.batchSize,
          measurementMode: config.measurementMode,
          measurementIntervalMs: config.measurementIntervalMs,
          measurementRequestCount: config.measurementRequestCount,
          percentile: config.percentile,
          latencyThresholdMs: config.latencyThresholdMs,
          mode: config.mode,
          limit: highestLevel(run.levels),
          async: config.async,
          distribution: run.requestIntervals !== undefined ? "custom" : config.requestDistribution,
          workers: config.workers,
        }),
      );
      print("\n");
    },
    levelStarts(level) {
      print(`${levelHeading(level)}\n`);
    },
    window(index, window) {
      print(formatPassLine(index, window, config.percentile));
    },
    levelEnds(result) {
      print(formatLevelSummary(result, config.percentile, config.verbosity > 0));
      for (const message of result.messages) warn(message);
      print("\n");
    },
    runEnds(results, interrupted) {
      if (interrupted) warn("Interrupted: reporting what was measured so far.");
      print(formatFinalSummary(results, config.percentile));
      print("\n");
      print(formatSweepTable(results));
    },
  };
}
