// Runs the `tbench` command as users run it: the package's bin (packages/tbench/bin/tbench.mjs, which runs
// the build in dist/) in a child process, with its profiler, statistics reads and overhead monitor, and
// reads back the one level it measured from its --json file. The benchmarks build first (`tsc -b` in their
// npm scripts), so dist/ is the code under test.
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ROOT } from "./bench-kit.js";
import type { LoadFigure } from "./wrk-run.js";

export const TBENCH_BIN = join(ROOT, "packages/tbench/bin/tbench.mjs");

/** The figures of one tbench level that the benchmarks report. */
export interface TbenchLevelFigures {
  inferPerSec: number;
  requestCount: number;
  errorCount: number;
  /** "ok", "unstable", "error_rate", ... as tbench reports the level. */
  status: string;
  stable: boolean;
  /** Length of the measured (merged) windows, ms. */
  durationMs: number;
  p50Us: number;
  p99Us: number;
  /** The server's inference count / execution count over the measured windows (its statistics API). */
  avgBatchSize: number | null;
  /** tbench's own CPU use, percent of one core, and its overhead warning, if it printed one. */
  cpuPercent: number | null;
  overheadWarning: string | null;
  exitCode: number | null;
}

/** A tbench level as the load figures wrk and autocannon report (rates, counts, p50/p99 in ms). */
export function loadFigureOf(level: TbenchLevelFigures): LoadFigure {
  return {
    requestsPerSec: level.inferPerSec,
    requests: level.requestCount,
    errors: level.errorCount,
    p50Ms: level.p50Us / 1000,
    p99Ms: level.p99Us / 1000,
    durationS: level.durationMs / 1000,
  };
}

interface LevelJson {
  inferPerSec: number;
  requestCount: number;
  errorCount: number;
  status: string;
  stable: boolean;
  durationMs: number;
  latency: { percentiles: Record<string, number> };
  server: { inferenceCount: number; executionCount: number } | null;
  overhead: { cpuPercent: number; warning?: string | undefined } | null;
}

/**
 * Runs `tbench <args> --json <jsonPath>` and returns its first level. Exit code 1 (a level failed on
 * errors) still has a result, reported with its error count; no result at all is an error carrying
 * tbench's output.
 */
export function runTbenchCli(args: readonly string[], jsonPath: string): Promise<TbenchLevelFigures> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TBENCH_BIN, ...args, "--json", jsonPath], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", async (code) => {
      try {
        const result = JSON.parse(await readFile(jsonPath, "utf8")) as { levels: LevelJson[] };
        const level = result.levels[0];
        if (level === undefined) throw new Error("its --json file holds no level");
        const server = level.server;
        resolve({
          inferPerSec: level.inferPerSec,
          requestCount: level.requestCount,
          errorCount: level.errorCount,
          status: level.status,
          stable: level.stable,
          durationMs: level.durationMs,
          p50Us: level.latency.percentiles["50"] ?? Number.NaN,
          p99Us: level.latency.percentiles["99"] ?? Number.NaN,
          avgBatchSize:
            server !== null && server.executionCount > 0
              ? server.inferenceCount / server.executionCount
              : null,
          cpuPercent: level.overhead?.cpuPercent ?? null,
          overheadWarning: level.overhead?.warning ?? null,
          exitCode: code,
        });
      } catch (error) {
        reject(
          new Error(
            `tbench ${args.join(" ")} exited ${code} without a result (${(error as Error).message}):\n${output}`,
          ),
        );
      }
    });
  });
}
