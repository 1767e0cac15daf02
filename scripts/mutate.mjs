// `npm run mutate [-- <area or path>...]`: StrykerJS over the areas of scripts/mutate-areas.mjs, one after
// another (smallest first), one Stryker worker each; a path (or part of one) picks the areas that mutate it.
// Reports: bench-results/mutation/<area>.json and .html (git-ignored: large), a summary of every area run
// in bench-results/mutation/summary.json, and survivors on stdout. Results are cached per area in
// .stryker-cache/ (incremental: an unchanged mutant with unchanged tests is not run again).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { MUTATION_AREAS } from "./mutate-areas.mjs";

const root = new URL("..", import.meta.url).pathname;
const reports = join(root, "bench-results", "mutation");
const filters = process.argv.slice(2);
const areas =
  filters.length === 0
    ? MUTATION_AREAS
    : MUTATION_AREAS.filter((area) =>
        filters.some((f) => area.name === f || area.mutate.some((file) => file.includes(f))),
      );
if (areas.length === 0) {
  console.error(
    `mutate: expected an area (${MUTATION_AREAS.map((a) => a.name).join(", ")}) or part of a mutated ` +
      `file's path, got ${filters.map((f) => `"${f}"`).join(" ")}`,
  );
  process.exit(2);
}

// The TypeScript checker compiles only the mutated files and what they import, so work in progress
// elsewhere in the tree cannot fail its first build.
const tsconfig = {
  extends: "./tsconfig.test.json",
  compilerOptions: { incremental: false, tsBuildInfoFile: null },
  files: MUTATION_AREAS.flatMap((area) => area.mutate),
  include: [],
};
const tsconfigText = `${JSON.stringify(tsconfig, null, 2)}\n`;
const tsconfigPath = join(root, "tsconfig.mutate.json");
if (!existsSync(tsconfigPath) || readFileSync(tsconfigPath, "utf8") !== tsconfigText)
  writeFileSync(tsconfigPath, tsconfigText);

/** Score and survivors of one area from Stryker's JSON report (mutation-testing-report-schema). */
function summarize(area) {
  const report = JSON.parse(readFileSync(join(reports, `${area.name}.json`), "utf8"));
  const counts = {};
  const survivors = [];
  for (const [file, { mutants }] of Object.entries(report.files)) {
    for (const m of mutants) {
      counts[m.status] = (counts[m.status] ?? 0) + 1;
      if (m.status === "Survived" || m.status === "NoCoverage") {
        survivors.push({
          at: `${relative(root, join(root, file))}:${m.location.start.line}`,
          status: m.status,
          mutator: m.mutatorName,
          replacement: m.replacement ?? "",
        });
      }
    }
  }
  const detected = (counts.Killed ?? 0) + (counts.Timeout ?? 0);
  const valid = detected + (counts.Survived ?? 0) + (counts.NoCoverage ?? 0);
  const score = valid === 0 ? 100 : Math.round((1000 * detected) / valid) / 10;
  return { area: area.name, score, counts, survivors };
}

mkdirSync(reports, { recursive: true });
const summaryPath = join(reports, "summary.json");
const summary = existsSync(summaryPath) ? JSON.parse(readFileSync(summaryPath, "utf8")) : {};
let failed = false;
for (const area of areas) {
  console.log(`\nmutate: ${area.name} (${area.mutate.length} files, ${area.tests.length} test files)`);
  const started = Date.now();
  const result = spawnSync(
    process.execPath,
    [join(root, "node_modules/@stryker-mutator/core/bin/stryker.js"), "run"],
    {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, TBENCH_MUTATE_AREA: area.name },
    },
  );
  if (result.status !== 0) {
    console.error(`mutate: ${area.name}: stryker exited with ${result.status}`);
    failed = true;
    continue;
  }
  const s = summarize(area);
  summary[area.name] = { ...s, seconds: Math.round((Date.now() - started) / 1000) };
  writeFileSync(summaryPath, `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`mutate: ${area.name}: score ${s.score}% ${JSON.stringify(s.counts)}`);
  for (const v of s.survivors)
    console.log(`  ${v.status} ${v.at} ${v.mutator}: ${v.replacement.split("\n")[0]}`);
}
process.exit(failed ? 1 : 0);
