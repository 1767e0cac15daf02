// Test helper: runs the tbench command in-process and reads the first level of its --json result.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { type CliIo, runCli } from "../cli/run-cli.js";
import { type LevelJson, parseResultJson } from "../report/json-result.js";

/** A level as written with the server's statistics (`server`, `serverBreakdown`) and metrics. */
export type ServerLevel = LevelJson & {
  server: { inferenceCount: number; successCount: number } | null;
  serverBreakdown: { requestUs: number } | null;
  metrics: unknown;
};

/**
 * Runs `tbench <args>`; resolves with its exit code and what it wrote to stderr (stdout is dropped).
 * `io` adds to the streams (e.g. a `createClient` that fails when no server call is expected).
 */
export async function runTbench(
  args: readonly string[],
  io: Partial<CliIo> = {},
): Promise<{ code: number; stderr: string }> {
  let stderr = "";
  const code = await runCli(args, {
    ...io,
    stdout: { write: () => true },
    stderr: {
      write: (text: string) => {
        stderr += text;
        return true;
      },
    },
    signal: new AbortController().signal,
  });
  return { code, stderr };
}

/** The first level of a `--json` result file. */
export async function readFirstLevel(path: string): Promise<ServerLevel> {
  return parseResultJson(await readFile(path, "utf8"), path).levels[0] as ServerLevel;
}

/**
 * Statistics are read at each window boundary, so the client's and the server's counts of the same windows
 * differ by at most the requests in flight at either end: `inFlight` at each.
 */
export function assertCountsAgree(l: ServerLevel, inFlight: number): void {
  assert.ok(l.server !== null, "the level carries the server-side statistics");
  const difference = Math.abs(l.server.inferenceCount - l.requestCount);
  assert.ok(
    difference <= 2 * inFlight,
    `client ${l.requestCount} vs server ${l.server.inferenceCount} inferences (${inFlight} in flight)`,
  );
}
