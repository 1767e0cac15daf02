// Runs the shell commands of the README and the guides in docs/, so the docs cannot rot.
//
// The convention: every ```sh block in these files is preceded by a marker line, either
//   <!-- ci: run -->                    run the block (bash -e) against the server this test starts, or
//   <!-- ci: not-run: <the reason> -->  not run (needs Docker, a GPU, starts a long-lived server, ...).
// A block without a marker fails the first test. Blocks marked run are executed in the order they appear,
// one file after the other, in a scratch folder that looks like the repository root (package.json,
// node_modules and examples linked), so `npx tbench`, `npx tsx examples/...` resolve as on a clone and the
// files commands write land there, not in the repository. The documented ports are those of a default
// tbench-server (localhost:8000 HTTP, :8001 gRPC, :8002 metrics); the test serves examples/models on free
// ports and rewrites those addresses, and gives `-u` to tbench runs that rely on its default URL. `npx tbench`
// and `npx tsx` run the same bins straight from node_modules/.bin (on the PATH), without npm's start-up. `tbench` and `tbench-server` are the built bins (npm test builds
// before it tests).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type RunningServer, silentLogger, startServer } from "@tbench/server";
import { skipWithout } from "./testing/system-tools.js";

const root = new URL("..", import.meta.url).pathname;
/** The docs whose commands are checked (docs/reliability.md and docs/deploy.md hold no runnable tour). */
const DOC_FILES = ["README.md", "docs/client.md", "docs/tbench.md", "docs/server.md"];

interface ShellBlock {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly marker: { run: true } | { run: false; reason: string } | undefined;
  readonly script: string;
}

const MARKER = /^<!--\s*ci:\s*(run|not-run:\s*(.+?))\s*-->$/;

/** The ```sh blocks of one Markdown file, each with the marker on the nearest non-empty line above it. */
function shellBlocks(file: string, text: string): ShellBlock[] {
  const lines = text.split("\n");
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if ((lines[i] ?? "").trim() !== "```sh") continue;
    let j = i - 1;
    while (j >= 0 && (lines[j] ?? "").trim() === "") j--;
    const match = MARKER.exec((lines[j] ?? "").trim());
    const end = lines.findIndex((l, k) => k > i && l.trim() === "```");
    assert.ok(end > i, `${file}:${i + 1}: a \`\`\`sh block that is never closed`);
    const marker =
      match === null
        ? undefined
        : match[1] === "run"
          ? ({ run: true } as const)
          : ({ run: false, reason: match[2] ?? "" } as const);
    blocks.push({ file, line: i + 1, marker, script: lines.slice(i + 1, end).join("\n") });
    i = end;
  }
  return blocks;
}

const blocks = DOC_FILES.flatMap((file) => shellBlocks(file, readFileSync(join(root, file), "utf8")));

test("every sh block in the docs is marked run or not-run with a reason", () => {
  const unmarked = blocks.filter((b) => b.marker === undefined).map((b) => `${b.file}:${b.line}`);
  assert.deepEqual(unmarked, [], "add <!-- ci: run --> or <!-- ci: not-run: why --> before these blocks");
  const noReason = blocks.filter((b) => b.marker?.run === false && b.marker.reason.length < 5);
  assert.deepEqual(
    noReason.map((b) => `${b.file}:${b.line}`),
    [],
    "a not-run block needs its reason",
  );
  assert.ok(
    blocks.filter((b) => b.marker?.run === true).length >= 5,
    "the docs should carry runnable commands",
  );
});

let server: RunningServer;
let scratch: string;

before(async () => {
  server = await startServer({
    modelRepository: join(root, "examples/models"),
    httpPort: 0,
    grpcPort: 0,
    metricsPort: 0,
    modelControlMode: "explicit",
    loadModels: [
      "simple",
      "heavy",
      "heavy_nobatch",
      "identity_fp32",
      "sequence_accumulator",
      "char_generator",
    ],
    logger: silentLogger,
  });
  scratch = mkdtempSync(join(tmpdir(), "tbench-docs-"));
  for (const entry of ["package.json", "node_modules", "examples"])
    symlinkSync(join(root, entry), join(scratch, entry));
});

after(async () => {
  await server?.close();
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
});

/** The block with the documented default ports replaced by the ports of the server under test. */
function localise(script: string): string {
  const hostPort = (url: string) => new URL(url).host;
  const grpc = server.grpcAddress;
  const metrics = server.metricsUrl;
  assert.ok(grpc !== undefined && metrics !== undefined);
  return (
    script
      .split("\n")
      .map((line) => {
        // `npx tbench -m simple` relies on tbench's default URL (localhost:8000, or :8001 with -i grpc):
        // point it at the server under test. compare and merge talk to no server.
        if (!/\bnpx tbench -/.test(line) || /\s-u\s/.test(line)) return line;
        const target = /\s-i\s+grpc\b/i.test(line) ? grpc : hostPort(server.httpUrl);
        return line.replace(/\bnpx tbench -/, `npx tbench -u ${target} -`);
      })
      .join("\n")
      // The same bins without npm exec's start-up (most of a second each, on a busy 2-core machine).
      .replaceAll(/\bnpx (tbench|tbench-server|tsx) /g, "$1 ")
      .replaceAll("localhost:8000", hostPort(server.httpUrl))
      .replaceAll("localhost:8001", grpc)
      .replaceAll("localhost:8002", hostPort(metrics))
  );
}

/** Runs a script with bash, asynchronously: the server under test lives in this process's event loop. */
function runBash(script: string): Promise<{ status: number | null; signal: string | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-euo", "pipefail", "-c", script], {
      cwd: scratch,
      timeout: 90_000,
      env: {
        ...process.env,
        PATH: `${join(root, "node_modules/.bin")}:${process.env.PATH ?? ""}`,
        // npx must never reach the registry: every command resolves to this repository's bins.
        npm_config_offline: "true",
        NODE_OPTIONS: "",
      },
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (status, signal) => resolve({ status, signal, out }));
  });
}

for (const block of blocks) {
  if (block.marker?.run !== true) continue;
  // A block that uses curl is skipped without it, except under .ci/run (scripts/system-tools.ts).
  const skip = /\bcurl\b/.test(block.script) ? skipWithout("curl") : false;
  test(`${block.file}:${block.line} runs`, { timeout: 120_000, skip }, async () => {
    const result = await runBash(localise(block.script));
    const tail = result.out.split("\n").slice(-40).join("\n");
    assert.equal(
      result.status,
      0,
      `${block.file}:${block.line} failed (exit ${result.status}, signal ${result.signal}):\n` +
        `${block.script}\n--- output ---\n${tail}`,
    );
  });
}
