// StrykerJS for `npm run mutate` (scripts/mutate.mjs), one area at a time: TBENCH_MUTATE_AREA names it
// (scripts/mutate-areas.mjs). Tests are node:test files run by the tap runner, TypeScript through tsx with
// the `source` condition, as scripts/run-tests.ts runs them; each test file counts as one test, so per-test
// coverage runs only the files that reach a mutant. One worker: the machine is shared.
import { MUTATION_AREAS } from "./scripts/mutate-areas.mjs";

const name = process.env.TBENCH_MUTATE_AREA ?? MUTATION_AREAS[0].name;
const area = MUTATION_AREAS.find((a) => a.name === name);
if (area === undefined) {
  throw new Error(
    `stryker.config.mjs: TBENCH_MUTATE_AREA: expected one of ${MUTATION_AREAS.map((a) => a.name).join(", ")}, got "${name}"`,
  );
}
const out = `bench-results/mutation/${area.name}`;

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  packageManager: "npm",
  testRunner: "tap",
  tap: {
    testFiles: area.tests,
    nodeArgs: ["--conditions=source", "--import", "tsx", "--test-reporter=tap"],
    forceBail: true,
  },
  checkers: ["typescript"],
  tsconfigFile: "tsconfig.mutate.json",
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  mutate: area.mutate,
  coverageAnalysis: "perTest",
  concurrency: 1,
  incremental: true,
  incrementalFile: `.stryker-cache/${area.name}.json`,
  reporters: ["clear-text", "html", "json", "progress"],
  htmlReporter: { fileName: `${out}.html` },
  jsonReporter: { fileName: `${out}.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  thresholds: { high: 90, low: 85, break: null },
  // The sandbox needs the repository's own files; not the git history, reports or generated outputs.
  ignorePatterns: ["bench-results", "demo-output", "docs", "deploy", "**/dist", ".stryker-cache"],
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
  timeoutMS: 20_000,
};
