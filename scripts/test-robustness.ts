/**
 * Runs the whole suite (`npm test`) the ways a machine other than ours would, and reports each run: its
 * outcome, the counts of its closing line, how long it took and the load average while it ran.
 *
 *   node --import tsx scripts/test-robustness.ts [--runs N] [--burners N|auto] [--hide-system-tools] [--fresh-clone]
 *
 * --burners N          N busy-looping processes beside the suite (auto: one per core), started before and
 *                      stopped after each run: the suite must pass on a machine kept busy (npm run test:stress)
 * --hide-system-tools  the suite runs with a PATH from which the optional system tools are removed, and
 *                      without TBENCH_REQUIRE_SYSTEM_TOOLS: it must pass with Node alone, skipping what needs them
 * --fresh-clone        each run is on a fresh `git clone` of HEAD with `npm ci` (committed work only)
 *
 * Prints one Markdown table row per run (bench-results/test-robustness.md collects them) and exits non-zero
 * when any run failed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { parseArgs } from "node:util";
import { PYTHON_ENV, REQUIRE_TOOLS_ENV, SYSTEM_TOOLS } from "./testing/system-tools.js";

const root = new URL("..", import.meta.url).pathname;
const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "1" },
    burners: { type: "string", default: "0" },
    "hide-system-tools": { type: "boolean", default: false },
    "fresh-clone": { type: "boolean", default: false },
  },
});
const runs = Number(values.runs);
const burners = values.burners === "auto" ? availableParallelism() : Number(values.burners);
if (!Number.isInteger(runs) || runs < 1) fail(`--runs must be a whole number >= 1, got ${values.runs}`);
if (!Number.isInteger(burners) || burners < 0)
  fail(`--burners must be a whole number >= 0 or auto, got ${values.burners}`);

function fail(message: string): never {
  console.error(`test-robustness: ${message}`);
  process.exit(2);
}

/** A folder of links to every command on PATH except the optional system tools' commands. */
function pathWithoutSystemTools(): string {
  // Commands by name (the Python client's interpreter is a path, hidden through TBENCH_PYTHON; the Vulkan
  // device is not a command).
  const hidden = new Set<string>(
    Object.entries(SYSTEM_TOOLS)
      .filter(([name]) => name !== "vulkan")
      .map(([, tool]) => tool.probe[0]),
  );
  const dir = mkdtempSync(join(tmpdir(), "tbench-path-"));
  for (const from of (process.env["PATH"] ?? "").split(delimiter)) {
    let names: string[];
    try {
      names = readdirSync(from);
    } catch {
      continue;
    }
    for (const name of names) {
      if (hidden.has(name)) continue;
      try {
        if (!statSync(join(from, name)).isFile()) continue;
        symlinkSync(join(from, name), join(dir, name));
      } catch {
        // An earlier PATH entry already gave this name, as the shell would take it.
      }
    }
  }
  return dir;
}

/**
 * A busy loop that ends itself once its parent is gone (checked every 10^8 turns, well under a second): a
 * burner must never outlive the run that started it, even when that run is killed.
 */
const BURNER =
  "const parent = process.ppid; for (let i = 1; ; i++) if (i % 1e8 === 0 && process.ppid !== parent) process.exit();";

function startBurners(count: number): ChildProcess[] {
  const burners = Array.from({ length: count }, () =>
    spawn(process.execPath, ["-e", BURNER], { stdio: "ignore" }),
  );
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => {
      for (const burner of burners) burner.kill("SIGKILL");
      process.exit(130);
    });
  return burners;
}

function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const keep = (chunk: Buffer) => {
      out = (out + chunk.toString("utf8")).slice(-200_000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("close", (code) => resolve({ code: code ?? 1, out }));
  });
}

interface RunRecord {
  outcome: string;
  counts: string;
  minutes: number;
  loadMin: number;
  loadMean: number;
  loadMax: number;
}

async function oneRun(index: number): Promise<RunRecord> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  let cwd = root;
  let scratch: string | undefined;
  if (values["hide-system-tools"]) {
    env["PATH"] = pathWithoutSystemTools();
    delete env[REQUIRE_TOOLS_ENV];
    env[PYTHON_ENV] = "/nonexistent/python3";
  }
  if (values["fresh-clone"]) {
    scratch = mkdtempSync(join(tmpdir(), "tbench-clone-"));
    cwd = join(scratch, "repo");
    mkdirSync(cwd);
    const clone = await run("git", ["clone", "--quiet", root, cwd], scratch, process.env);
    if (clone.code !== 0) fail(`git clone failed: ${clone.out}`);
    const install = await run("npm", ["ci", "--no-audit", "--no-fund"], cwd, process.env);
    if (install.code !== 0) fail(`npm ci failed: ${install.out.slice(-2000)}`);
  }
  const burning = startBurners(burners);
  const loads: number[] = [];
  const sampler = setInterval(() => loads.push(loadavg()[0]!), 5_000);
  const startedMs = performance.now();
  const result = await run("npm", ["test"], cwd, env);
  const minutes = (performance.now() - startedMs) / 60_000;
  clearInterval(sampler);
  for (const burner of burning) burner.kill("SIGKILL");
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  if (values["hide-system-tools"]) rmSync(env["PATH"]!, { recursive: true, force: true });
  const counts =
    result.out.match(/^tests: (\d+ passed, \d+ failed, \d+ skipped)$/m)?.[1] ?? "no closing line";
  // The runner's closing block: the slowest files, what was skipped, the failed tests. Without one (a step
  // before the tests failed), the end of the output says why.
  const closing = result.out.lastIndexOf("Slowest test files");
  const tail = closing >= 0 ? result.out.slice(closing) : result.out.slice(-6000);
  console.error(`run ${index}: npm test exited ${result.code}:\n${tail}`);
  const samples = loads.length > 0 ? loads : [loadavg()[0]!];
  return {
    outcome: result.code === 0 ? "passed" : `failed (exit ${result.code})`,
    counts,
    minutes,
    loadMin: Math.min(...samples),
    loadMean: samples.reduce((a, b) => a + b, 0) / samples.length,
    loadMax: Math.max(...samples),
  };
}

const mode = [
  burners > 0 ? `${burners} CPU burners` : "no burners",
  values["hide-system-tools"] ? "system tools hidden" : "system tools as installed",
  values["fresh-clone"] ? "fresh clone" : "working tree",
].join(", ");
console.log(`| run | mode | outcome | tests | minutes | load average (1 min) min / mean / max |`);
console.log(`| --- | --- | --- | --- | --- | --- |`);
let failed = 0;
for (let i = 1; i <= runs; i++) {
  const r = await oneRun(i);
  if (!r.outcome.startsWith("passed")) failed += 1;
  console.log(
    `| ${i} | ${mode} | ${r.outcome} | ${r.counts} | ${r.minutes.toFixed(1)} | ` +
      `${r.loadMin.toFixed(1)} / ${r.loadMean.toFixed(1)} / ${r.loadMax.toFixed(1)} |`,
  );
}
process.exit(failed > 0 ? 1 : 0);
