/**
 * A node:test reporter that writes one JSON document at the end of the run: per test file its wall time
 * (from its process's start to its end, loading included) and its counts, and every skipped
 * test with its reason. scripts/run-tests.ts reads it to print where the time went and what was skipped.
 */
import { relative } from "node:path";
import { bundledFile } from "./testing/ts-loader/test-bundles.mjs";

// (Plain JavaScript: node loads reporters before tsx's hooks. The shape it writes is TestRunSummary in
// scripts/run-tests.ts.)

const root = new URL("..", import.meta.url).pathname;
/** The skip reasons node:test gives a test that a name pattern or --test-only left out. */
const FILTER_REASONS = new Set(["test name does not match pattern", "'only' option not set"]);

export default async function* testRunReporter(source) {
  const files = new Map();
  const skipped = [];
  const failed = [];
  // Tests left out by --test-name-pattern or --test-only: node reports them as skipped, with
  // one of FILTER_REASONS.
  let filteredOut = 0;
  for await (const event of source) {
    const data = event.data;
    if (data?.file === undefined) continue;
    // run-tests.ts runs each test file as a bundle: the summary names the test file.
    const file = bundledFile(relative(root, data.file));
    let outcome = files.get(file);
    if (outcome === undefined) {
      outcome = { file, wallMs: 0, passed: 0, failed: 0, skipped: 0, cancelled: 0, startMs: 0 };
      files.set(file, outcome);
    }
    // The file's own entry (named by its path) is dequeued when its process starts and completes when it
    // ends; the events of its tests may be reported later.
    if (data.name === data.file) {
      if (event.type === "test:dequeue") outcome.startMs = performance.now();
      else if (event.type === "test:complete") outcome.wallMs = performance.now() - outcome.startMs;
      // A file that fails by itself (it crashed, or exited non-zero) has no failing test to count.
      else if (event.type === "test:fail" && data.details?.error?.failureType !== "subtestsFailed")
        outcome.failed += 1;
      continue;
    }
    const isSkip = data.skip !== undefined && data.skip !== false;
    if (event.type === "test:pass" && isSkip && FILTER_REASONS.has(String(data.skip))) filteredOut += 1;
    else if (event.type === "test:pass" && isSkip) {
      // A skipped suite stands for its tests, which are not reported one by one.
      outcome.skipped += 1;
      skipped.push({ file, name: data.name ?? "", reason: String(data.skip) });
    } else if (data.details?.type === "suite") {
      // A suite's own pass or fail repeats its tests', except a failed hook, which no test reports.
      if (event.type === "test:fail" && data.details.error?.failureType === "hookFailed") outcome.failed += 1;
    } else if (event.type === "test:pass") outcome.passed += 1;
    else if (event.type === "test:fail") {
      if (data.details?.error?.failureType === "cancelledByParent") outcome.cancelled += 1;
      else {
        outcome.failed += 1;
        const error = data.details?.error;
        const message = String(error?.cause?.message ?? error?.message ?? "")
          .split("\n")
          .slice(0, 6)
          .join("\n");
        failed.push({ file, name: data.name ?? "", message });
      }
    }
  }
  const summary = {
    files: [...files.values()].map(({ startMs: _, ...rest }) => ({
      ...rest,
      wallMs: Math.round(rest.wallMs),
    })),
    skipped,
    failed,
    filteredOut,
  };
  yield `${JSON.stringify(summary)}\n`;
}
