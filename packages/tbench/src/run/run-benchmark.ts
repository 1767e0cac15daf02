// tbench's benchmark engine, under both `tbench` and `tbench tune`, kept to a composition so a run's order
// reads in one place. Each phase is a file of its own, as perf_analyzer keeps its load managers, inference
// profiler and report writer apart: prepare-run.ts (connect, model, requests, load driver), drive-load.ts
// (warmup, the driver's lifetime), profile-levels.ts (the level profiler over the sweep), and the report
// (console-report.ts as the run goes, result-files.ts at its end).
import type { LevelResult } from "../measure/level-profiler.js";
import { firstLevel } from "../measure/sweep.js";
import type { BenchConfig } from "./bench-config.js";
import { createConsoleReport } from "./console-report.js";
import { driveLoad } from "./drive-load.js";
import { prepareRun } from "./prepare-run.js";
import { profileLevels } from "./profile-levels.js";
import { writeResultFiles } from "./result-files.js";
import type { RunIo } from "./run-io.js";

/** The result of a run: every level, and the exit code tbench should end with. */
export interface RunOutcome {
  results: LevelResult[];
  exitCode: number;
}

/** 130 after Ctrl-C (128 + SIGINT), 1 when a level failed on errors or got no answer, else 0. */
function exitCodeOf(results: readonly LevelResult[], interrupted: boolean): number {
  if (interrupted) return 130;
  return results.some((r) => r.status === "error_rate" || r.status === "no_data") ? 1 : 0;
}

/**
 * Runs a benchmark as configured: reads the model's metadata and config, builds inputs, generates load
 * level by level, measures, prints perf_analyzer's summaries and the sweep table, and writes the files
 * asked for. Never throws for failed requests; throws for setup problems (unreachable server, bad input).
 */
export async function runBenchmark(asked: BenchConfig, io: RunIo): Promise<RunOutcome> {
  const run = await prepareRun(asked, io);
  // From here on, the config as the model makes it (a sequence model's calls are asynchronous).
  const config = run.config;
  try {
    const report = createConsoleReport(config, io);
    report.settings(run);
    const results = await driveLoad(
      run.driver,
      {
        warmupLevel: firstLevel(run.levels),
        warmupRequestCount: config.warmupRequestCount,
        signal: io.signal,
      },
      () => profileLevels(run, config, io, report),
    );
    report.runEnds(results, io.signal.aborted);
    await writeResultFiles(results, config, {
      serverStats: run.serverStats.read !== undefined,
      version: io.version,
    });
    return { results, exitCode: exitCodeOf(results, io.signal.aborted) };
  } finally {
    await run.close();
  }
}
