// Runs every *.test.ts under packages/*/src, examples and scripts with node:test, TypeScript through tsx.
// Node 20's --test takes no globs, so the files are collected here. Extra arguments are passed to node.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const skip = new Set(["node_modules", "dist", "gen", "models"]);

function collect(dir, found) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skip.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) collect(path, found);
    else if (entry.name.endsWith(".test.ts")) found.push(relative(root, path));
  }
  return found;
}

const filters = process.argv.slice(2).filter((arg) => !arg.startsWith("-"));
const nodeArgs = process.argv.slice(2).filter((arg) => arg.startsWith("-"));
const dirs = ["packages", "examples", "scripts"].map((d) => join(root, d));
let files = dirs.flatMap((dir) => collect(dir, [])).sort();
if (filters.length > 0) files = files.filter((file) => filters.some((f) => file.includes(f)));
if (files.length === 0) {
  console.error("run-tests: no test files matched");
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ["--conditions=source", "--import", "tsx", "--test", "--test-concurrency=2", ...nodeArgs, ...files],
  { cwd: root, stdio: "inherit" },
);
process.exit(result.status ?? 1);
