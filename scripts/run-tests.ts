/**
 * Runs the *.test.ts files under packages/, examples/ and scripts/ with node:test, several files at a time,
 * then prints where the time went (the slowest files) and what was skipped for a missing system tool, with
 * the commands that install them all. TypeScript runs through scripts/testing/ts-loader, which transpiles
 * each file once and caches it: tsx costs about 0.5 CPU-s more in every process and worker thread, and the
 * suite starts them by the hundred.
 *
 *   node --import tsx scripts/run-tests.ts [path-substring ...] [--node-flag ...]
 *
 * --test-name-pattern=P and --test-only filter tests by name; other arguments that start with "-" are node
 * flags for every test process. The files are collected here and run longest first through
 * scripts/testing/test-file-runner.mjs (node --test would sort them by path). TBENCH_TEST_CONCURRENCY sets
 * how many files run at once: by default one more than the cores (3 on 2 cores; at most 8), since most files spend part of their time waiting on
 * sockets, child processes and timers.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, relative } from "node:path";
import {
  SYSTEM_TOOLS,
  type SystemTool,
  type SystemToolName,
  systemToolsRequired,
  toolsInSkipReason,
} from "./testing/system-tools.js";
import { loaderEnvironment, testEntries } from "./testing/ts-loader/test-bundles.mjs";
import { warmCache } from "./testing/ts-loader/warm-cache.mjs";

/** What scripts/test-run-reporter.mjs writes. */
interface TestRunSummary {
  files: {
    file: string;
    wallMs: number;
    passed: number;
    failed: number;
    skipped: number;
    cancelled: number;
  }[];
  skipped: { file: string; name: string; reason: string }[];
  failed: { file: string; name: string; message: string }[];
  /** Tests that --test-name-pattern or --test-only left out (not counted as skipped). */
  filteredOut: number;
}

const root = new URL("..", import.meta.url).pathname;
const skipDirs = new Set(["node_modules", "dist", "gen", "models"]);
const SLOWEST_SHOWN = 20;
const CACHE_DIR = join(root, "node_modules/.cache/tbench");
/** Wall time per test file (ms) measured on this machine, updated after every run. */
const DURATIONS_CACHE = join(CACHE_DIR, "test-durations.json");
/** The same from a reference run (2 cores), for a fresh clone: `npm run test:unit` then copy the cache. */
const REFERENCE_DURATIONS = join(root, "scripts/testing/test-durations.json");
/** The commands tests start from source in child processes (scripts/testing/source-node.ts). */
const CHILD_ENTRIES = [
  "packages/server/src/cli/main.ts",
  "packages/tbench/src/cli/main.ts",
  "examples/model-builder/generate-models.ts",
];

/** Paths (relative to the root) of the files under `dir` whose names end with `suffix`. */
function collect(dir: string, suffix: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skipDirs.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) collect(path, suffix, found);
    else if (entry.name.endsWith(suffix) && !entry.name.endsWith(".d.ts")) found.push(relative(root, path));
  }
  return found;
}

const args = process.argv.slice(2);
const filters = args.filter((arg) => !arg.startsWith("-"));
const dashed = args.filter((arg) => arg.startsWith("-"));
// node:test's own filters go to the runner; the rest are node flags every test process gets.
const isRunnerFilter = (arg: string) => arg.startsWith("--test-name-pattern=") || arg === "--test-only";
const runnerFilters = dashed.filter(isRunnerFilter);
const nodeArgs = dashed.filter((arg) => !isRunnerFilter(arg));
const sourceDirs = ["packages", "examples", "scripts"];
const allFiles = sourceDirs.flatMap((dir) => collect(join(root, dir), ".test.ts")).sort();
let files = allFiles;
if (filters.length > 0) files = files.filter((file) => filters.some((f) => file.includes(f)));
if (files.length === 0) {
  console.error(`run-tests: no test files matched ${filters.join(", ")}`);
  process.exit(1);
}

const concurrency = Number(
  process.env["TBENCH_TEST_CONCURRENCY"] ?? Math.min(8, Math.max(2, availableParallelism() + 1)),
);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`run-tests: TBENCH_TEST_CONCURRENCY must be a whole number >= 1, got ${concurrency}`);
  process.exit(1);
}

// The longest files start first, so that those that mostly wait (npm pack and install, the docs' commands,
// servers in child processes) overlap the busy ones instead of ending the run alone. The durations are this
// machine's from earlier runs, else the reference ones committed beside the suite.
const durations = knownDurations();
const typical = median(Object.values(durations));
files.sort((a, b) => (durations[b] ?? typical) - (durations[a] ?? typical) || a.localeCompare(b));

// Measured on a fresh clone: with an empty cache, the run's first files and their child servers and threads
// each transpiled what they loaded, about a minute of CPU more than a run on a full cache. Test files are not
// among them: they run bundled (below).
await warmCache(
  sourceDirs
    .flatMap((dir) => collect(join(root, dir), ".ts"))
    .filter((file) => !file.endsWith(".test.ts"))
    .map((file) => join(root, file)),
  collect(join(root, "packages"), "-worker.ts").map((file) => join(root, file)),
);

// Each test file runs as one bundled JavaScript file, without loader hooks in its process (test-bundles.mjs),
// and so do the commands tests start from source (sourceNodeArgs() finds them in TBENCH_SOURCE_BUNDLES);
// worker threads and anything else started from source find the loader through loaderEnvironment().
const entries = await testEntries(root, [...allFiles, ...CHILD_ENTRIES]);
const entryOf = (file: string): string => {
  const entry = entries.get(file);
  if (entry === undefined) throw new Error(`run-tests: no bundle was made for ${file}`);
  return entry;
};
const sourceBundles = Object.fromEntries(CHILD_ENTRIES.map((file) => [join(root, file), entryOf(file)]));

const workDir = mkdtempSync(join(tmpdir(), "tbench-run-tests-"));
const summaryFile = join(workDir, "summary.json");
const result = spawnSync(
  process.execPath,
  [
    "--conditions=source",
    // Stack traces name the TypeScript files, as they did under the loader's hooks.
    "--enable-source-maps",
    ...nodeArgs,
    join(root, "scripts/testing/test-file-runner.mjs"),
    `--concurrency=${concurrency}`,
    `--summary=${summaryFile}`,
    `--reporter=${process.stdout.isTTY ? "spec" : "tap"}`,
    ...runnerFilters,
    // Absolute: node:test then names each file's own entry by the path the reporter matches it with.
    ...files.map((file) => entryOf(file)),
  ],
  // onnxruntime-node's telemetry stays off in tests that load it themselves (tbench-server turns it off for
  // its own threads): no uploads and no mat-debug-<pid>.log left in the temporary directory per process.
  {
    cwd: root,
    stdio: "inherit",
    env: {
      ORT_DISABLE_TELEMETRY: "1",
      ...process.env,
      ...loaderEnvironment(),
      TBENCH_SOURCE_BUNDLES: JSON.stringify(sourceBundles),
    },
  },
);

let summary: TestRunSummary | undefined;
try {
  const text = readFileSync(summaryFile, "utf8");
  summary = JSON.parse(text) as TestRunSummary;
  // The last run's per-file figures, kept for a look afterwards, and its durations for the next run's order.
  mkdirSync(CACHE_DIR, { recursive: true });
  writeFileSync(join(CACHE_DIR, "last-test-run.json"), text);
  // A run filtered by test name times only part of each file.
  if (runnerFilters.length === 0) {
    const measured = Object.fromEntries(summary.files.map(({ file, wallMs }) => [file, wallMs]));
    writeFileSync(DURATIONS_CACHE, JSON.stringify({ ...readDurations(DURATIONS_CACHE), ...measured }));
  }
} catch {
  // The run died before the reporter wrote; node's own output says why.
}
rmSync(workDir, { recursive: true, force: true });
if (summary !== undefined) printSummary(summary);
const anyFailed = summary === undefined || summary.files.some((f) => f.failed + f.cancelled > 0);
process.exit(result.status !== 0 ? (result.status ?? 1) : anyFailed ? 1 : 0);

function readDurations(path: string): Record<string, number> {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Record<string, number>;
  } catch {
    return {};
  }
}

function knownDurations(): Record<string, number> {
  return { ...readDurations(REFERENCE_DURATIONS), ...readDurations(DURATIONS_CACHE) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function printSummary({ files: outcomes, skipped, failed, filteredOut }: TestRunSummary): void {
  const lines: string[] = [""];
  const slowest = [...outcomes].sort((a, b) => b.wallMs - a.wallMs).slice(0, SLOWEST_SHOWN);
  lines.push(`Slowest test files (wall time, ${concurrency} files at a time):`);
  for (const { file, wallMs } of slowest)
    lines.push(`  ${(wallMs / 1000).toFixed(1).padStart(6)} s  ${file}`);

  const missing = new Map<SystemToolName, Set<string>>();
  const otherSkips: string[] = [];
  for (const skip of skipped) {
    const tools = toolsInSkipReason(skip.reason);
    for (const tool of tools) missing.set(tool, (missing.get(tool) ?? new Set()).add(skip.file));
    if (tools.length === 0) otherSkips.push(`  ${skip.file}: ${skip.name}: ${skip.reason}`);
  }
  if (missing.size > 0) {
    lines.push(
      "",
      "Skipped: these tests need system tools that are not installed here (.ci/run installs them all):",
    );
    for (const [tool, inFiles] of missing) {
      const entry: SystemTool = SYSTEM_TOOLS[tool];
      lines.push(`  ${tool}: ${entry.adds}`);
      if (entry.debianNote !== undefined) lines.push(`    (${entry.debianNote})`);
      for (const file of inFiles) lines.push(`      ${file}`);
    }
    const tools = [...missing.keys()];
    const debian = [...new Set(tools.flatMap((tool) => SYSTEM_TOOLS[tool].debian))];
    // Entries in brackets say there is nothing to install there.
    const macos = [...new Set(tools.map((tool) => SYSTEM_TOOLS[tool].macos))].filter(
      (m) => !m.startsWith("("),
    );
    lines.push("  Install them all:");
    lines.push(`    Debian/Ubuntu: sudo apt-get install ${debian.join(" ")}`);
    lines.push(`    macOS:         ${macos.join(" && ")}`);
  }
  if (otherSkips.length > 0) lines.push("", "Skipped for other reasons:", ...otherSkips);
  if (systemToolsRequired() && missing.size > 0)
    lines.push("", "(TBENCH_REQUIRE_SYSTEM_TOOLS is set, yet tests skipped for missing tools: a bug)");

  if (failed.length > 0) {
    lines.push("", "Failed:");
    for (const { file, name, message } of failed)
      lines.push(`  ${file}: ${name}`, ...message.split("\n").map((line) => `      ${line}`));
  }

  const total = (key: "passed" | "failed" | "skipped" | "cancelled") =>
    outcomes.reduce((sum, outcome) => sum + outcome[key], 0);
  const cancelled = total("cancelled");
  const leftOut = filteredOut > 0 ? ` (${filteredOut} left out by the name filter)` : "";
  lines.push(
    "",
    `tests: ${total("passed")} passed, ${total("failed") + cancelled} failed, ${total("skipped")} skipped${leftOut}`,
  );
  console.log(lines.join("\n"));
}
