import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { sourceNodeArgs } from "../../../../scripts/testing/source-node.js";
import { toResultJson } from "../report/json-result.js";
import { syntheticLevel } from "../testing/synthetic-results.js";

const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the tbench command in a child process, TypeScript through tsx, as a user would from source. */
function tbench(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...sourceNodeArgs(MAIN), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function assertOneLineError(run: Run, code: number, pattern: RegExp): void {
  assert.equal(run.code, code, `exit code; stderr: ${run.stderr}`);
  const lines = run.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `one line on stderr, got: ${run.stderr}`);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(run.stderr, /\n\s+at /, "no stack trace");
}

describe("tbench command line (child process)", { timeout: 60_000 }, () => {
  let dir: string;
  // Every run starts at once in before(): node + tsx start-up dominates, and the runs are independent.
  let runs: Record<string, Run>;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tbench-cli-"));
    const base = join(dir, "base.json");
    const cand = join(dir, "cand.json");
    await writeFile(
      base,
      JSON.stringify(
        toResultJson([syntheticLevel({ value: 1, latenciesUs: Array(1000).fill(1000) })], {}, "t"),
      ),
    );
    await writeFile(
      cand,
      JSON.stringify(
        toResultJson([syntheticLevel({ value: 1, latenciesUs: Array(800).fill(1000) })], {}, "t"),
      ),
    );
    const commands: Record<string, string[]> = {
      noModel: [],
      streamingSync: ["-m", "simple", "-i", "grpc", "--streaming", "--sync"],
      unknown: ["-m", "simple", "--bogus"],
      notYet: ["-m", "simple", "--shared-memory", "system", "-i", "grpc"],
      help: ["--help"],
      unreachable: ["-m", "simple", "-u", "127.0.0.1:1"],
      unreachableGrpc: ["-m", "simple", "-i", "grpc", "-u", "127.0.0.1:1"],
      failing: ["compare", base, cand, "--metric", "throughput", "--max-regression", "10"],
      passing: ["compare", base, cand, "--metric", "throughput", "--min-ratio", "0.75"],
    };
    const names = Object.keys(commands);
    const results = await Promise.all(names.map((name) => tbench(commands[name]!)));
    runs = Object.fromEntries(names.map((name, i) => [name, results[i]!]));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("validates flags with one clear line and exit code 2", () => {
    assertOneLineError(runs["noModel"]!, 2, /^tbench: error: -m: the model name is required/);
    assertOneLineError(
      runs["streamingSync"]!,
      2,
      /^tbench: error: --streaming cannot be used with --sync \(streams are asynchronous\)$/,
    );
    assertOneLineError(runs["unknown"]!, 2, /^tbench: error: unknown option '--bogus'/);
    // A perf_analyzer flag tbench does not implement is named, before any other check.
    assertOneLineError(
      runs["notYet"]!,
      2,
      /^tbench: error: tbench does not support perf_analyzer's --shared-memory yet$/,
    );
  });

  it("prints help grouped like perf_analyzer's docs, and exits 0", () => {
    const help = runs["help"]!;
    assert.equal(help.code, 0);
    const headings = [
      "General Options:",
      "Measurement Options:",
      "Input Data Options:",
      "Request Options:",
      "Server Options:",
      "Prometheus Metrics Options:",
      "Report Options:",
    ];
    let last = -1;
    for (const heading of headings) {
      const at = help.stdout.indexOf(heading);
      assert.ok(at > last, `${heading} present and in order`);
      last = at;
    }
    assert.match(help.stdout, /--concurrency-range <start:end:step>/);
    assert.match(help.stdout, /compare .*<baseline> <candidate>/);
  });

  it("an unreachable server is one line and exit code 1", () => {
    assertOneLineError(runs["unreachable"]!, 1, /^tbench: error: /);
    assertOneLineError(runs["unreachableGrpc"]!, 1, /^tbench: error: .*127\.0\.0\.1:1/);
  });

  it("compare: side-by-side table, exit 1 when the gate fails, 0 when it passes", () => {
    const failing = runs["failing"]!;
    const passing = runs["passing"]!;
    assert.equal(failing.code, 1, failing.stderr);
    assert.match(
      failing.stdout,
      /concurrency 1.*throughput.*1000\.0 infer\/s.*800\.0 infer\/s.*0\.800x.*worse 20\.0%.*FAIL/,
    );
    assert.match(failing.stdout, /Gate failed: 1 of 1 comparisons/);
    assert.equal(passing.code, 0, passing.stderr);
    assert.match(passing.stdout, /PASS/);
  });
});
