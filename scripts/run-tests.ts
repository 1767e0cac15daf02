/**
 * Runs the *.test.ts files under packages/, examples/ and scripts/ with node:test (TypeScript through tsx),
 * two files at a time, then prints where the time went (the slowest files) and what was skipped for a
 * missing system tool, with the commands that install them all.
 *
 *   node --import tsx scripts/run-tests.ts [path-substring ...] [--node-flag ...]
 *
 * Arguments that start with "-" go to node (e.g. --test-name-pattern=...). Node 20's --test takes no globs,
 * so the files are collected here. TBENCH_TEST_CONCURRENCY sets how many files run at once (default 2).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import {
  SYSTEM_TOOLS,
  type SystemTool,
  type SystemToolName,
  systemToolsRequired,
  toolsInSkipReason,
} from "./testing/system-tools.js";

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
}

const root = new URL("..", import.meta.url).pathname;
const skipDirs = new Set(["node_modules", "dist", "gen", "models"]);
const SLOWEST_SHOWN = 20;

function collect(dir: string, found: string[]): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skipDirs.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) collect(path, found);
    else if (entry.name.endsWith(".test.ts")) found.push(relative(root, path));
  }
  return found;
}

const args = process.argv.slice(2);
const filters = args.filter((arg) => !arg.startsWith("-"));
const nodeArgs = args.filter((arg) => arg.startsWith("-"));
let files = ["packages", "examples", "scripts"].flatMap((dir) => collect(join(root, dir), [])).sort();
if (filters.length > 0) files = files.filter((file) => filters.some((f) => file.includes(f)));
if (files.length === 0) {
  console.error(`run-tests: no test files matched ${filters.join(", ")}`);
  process.exit(1);
}

const concurrency = Number(process.env["TBENCH_TEST_CONCURRENCY"] ?? 2);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`run-tests: TBENCH_TEST_CONCURRENCY must be a whole number >= 1, got ${concurrency}`);
  process.exit(1);
}

const workDir = mkdtempSync(join(tmpdir(), "tbench-run-tests-"));
const summaryFile = join(workDir, "summary.json");
const result = spawnSync(
  process.execPath,
  [
    "--conditions=source",
    "--import",
    "tsx",
    "--test",
    `--test-concurrency=${concurrency}`,
    `--test-reporter=${process.stdout.isTTY ? "spec" : "tap"}`,
    "--test-reporter-destination=stdout",
    `--test-reporter=${join(root, "scripts/test-run-reporter.mjs")}`,
    `--test-reporter-destination=${summaryFile}`,
    ...nodeArgs,
    ...files,
  ],
  { cwd: root, stdio: "inherit" },
);

let summary: TestRunSummary | undefined;
try {
  const text = readFileSync(summaryFile, "utf8");
  summary = JSON.parse(text) as TestRunSummary;
  // The last run's per-file figures, kept for a look afterwards.
  mkdirSync(join(root, "node_modules/.cache/tbench"), { recursive: true });
  writeFileSync(join(root, "node_modules/.cache/tbench/last-test-run.json"), text);
} catch {
  // The run died before the reporter wrote; node's own output says why.
}
rmSync(workDir, { recursive: true, force: true });
// (Node 20 sorts the files itself, so the order they are given in changes nothing.)
if (summary !== undefined) printSummary(summary);
process.exit(result.status ?? 1);

function printSummary({ files: outcomes, skipped, failed }: TestRunSummary): void {
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
  lines.push(
    "",
    `tests: ${total("passed")} passed, ${total("failed") + cancelled} failed, ${total("skipped")} skipped`,
  );
  console.log(lines.join("\n"));
}
