// The fetch client in Bun and Deno, where they are installed: the conformance run (testing/fetch-conformance.ts)
// bundled as each runtime resolves @tbench/client (its own export condition: "bun", "deno"), run by that
// runtime against a real tbench-server on 127.0.0.1:0 in this process, and its report compared with the
// one every runtime must give. Both install from the npm registry (`npm install -g bun deno`, which brings
// the platform's binary); a runtime that is not found is skipped with the reason.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import type { RunningServer } from "@tbench/server";
import { build } from "esbuild";
import { startBundledServer } from "../testing/bundled-server.js";
import {
  FETCH_CONFORMANCE_EXPECTED,
  FETCH_CONFORMANCE_MODELS,
  GZIP_VALUES,
} from "../testing/fetch-conformance.js";

const run = promisify(execFile);
const SRC = new URL("..", import.meta.url).pathname;
const ROOT = new URL("../../../..", import.meta.url).pathname;

interface Runtime {
  readonly name: "bun" | "deno";
  /** Environment variable naming the executable. */
  readonly env: string;
  /** The command line that runs an ES module file with arguments. */
  readonly args: (file: string, url: string) => string[];
}

const RUNTIMES: readonly Runtime[] = [
  { name: "bun", env: "TBENCH_BUN", args: (file, url) => [file, url] },
  { name: "deno", env: "TBENCH_DENO", args: (file, url) => ["run", "--allow-net=127.0.0.1", file, url] },
];

/** The runtime's executable: $TBENCH_BUN / $TBENCH_DENO, else on PATH, else in the repository's node_modules. */
function find(runtime: Runtime): string | undefined {
  const candidates = [process.env[runtime.env], runtime.name, join(ROOT, "node_modules/.bin", runtime.name)];
  for (const candidate of candidates) {
    if (candidate === undefined || candidate === "") continue;
    const probe = spawnSync(candidate, ["--version"], { stdio: "ignore", timeout: 30_000 });
    if (probe.status === 0) return candidate;
  }
  return undefined;
}

/** The conformance run as one ES module for `condition`, printing its report (JSON) for the URL argument. */
const ENTRY = `
import * as client from "@tbench/client";
import { fetchConformance } from "./testing/fetch-conformance.js";
const url = globalThis.Deno?.args[0] ?? globalThis.process?.argv[2];
console.log(JSON.stringify(await fetchConformance(client, url)));
`;

let server: RunningServer;
let dir: string;
before(async () => {
  server = await startBundledServer([...FETCH_CONFORMANCE_MODELS]);
  dir = mkdtempSync(join(tmpdir(), "tbench-fetch-runtimes-"));
});
after(async () => {
  await server?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

for (const runtime of RUNTIMES) {
  const executable = find(runtime);
  const skip =
    executable === undefined
      ? `needs ${runtime.name}: not on PATH, in node_modules/.bin or $${runtime.env} (npm install -g ${runtime.name})`
      : false;
  describe(runtime.name, { skip }, () => {
    test(`the "${runtime.name}" condition's entry answers the conformance run as Node's fetch does`, async () => {
      const bundled = await build({
        stdin: { contents: ENTRY, resolveDir: SRC, loader: "ts", sourcefile: "entry.ts" },
        bundle: true,
        platform: "neutral",
        format: "esm",
        conditions: [runtime.name, "source"],
        write: false,
        logLevel: "silent",
      });
      const file = join(dir, `conformance-${runtime.name}.mjs`);
      writeFileSync(file, bundled.outputFiles[0]!.contents);
      const { stdout } = await run(executable!, runtime.args(file, server.httpUrl), {
        timeout: 120_000,
        env: { ...process.env, NO_COLOR: "1" },
      });
      const report = JSON.parse(stdout.trim().split("\n").at(-1)!);
      const gzip = typeof report.gzip === "string" ? "no CompressionStream" : GZIP_VALUES;
      assert.deepEqual(report, JSON.parse(JSON.stringify({ ...FETCH_CONFORMANCE_EXPECTED, gzip })));
    });
  });
}
