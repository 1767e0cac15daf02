/**
 * Runs test files with node:test's run() in the order given (`node --test` sorts them by path), so that
 * scripts/run-tests.ts can start the longest files first: the ones that mostly wait (the docs' commands,
 * npm pack and install, servers in child processes) then overlap the busy ones instead of ending the run
 * alone. Each file still runs in its own process, which inherits this process's node flags (the
 * TypeScript loader, --conditions=source); the name filters go to run() as options.
 *
 *   node [node flags] test-file-runner.mjs --concurrency N --summary FILE --reporter tap|spec
 *        [--test-name-pattern P]... [--test-only] FILE...
 */
import { createWriteStream } from "node:fs";
import { PassThrough } from "node:stream";
import { run } from "node:test";
import { spec, tap } from "node:test/reporters";
import { parseArgs } from "node:util";
import testRunReporter from "../test-run-reporter.mjs";

const { values, positionals: files } = parseArgs({
  options: {
    concurrency: { type: "string" },
    summary: { type: "string" },
    reporter: { type: "string", default: "tap" },
    // Given to run(), not as this process's flags: here they would filter the files' own entries by name.
    "test-name-pattern": { type: "string", multiple: true },
    "test-only": { type: "boolean", default: false },
  },
  allowPositionals: true,
});

const events = run({
  files,
  concurrency: Number(values.concurrency),
  testNamePatterns: values["test-name-pattern"],
  only: values["test-only"],
});
// Two readers of one stream of events: the console's reporter and the summary's.
const toConsole = new PassThrough({ objectMode: true });
const toSummary = new PassThrough({ objectMode: true });
events.on("data", (event) => {
  toConsole.write(event);
  toSummary.write(event);
});
events.on("end", () => {
  toConsole.end();
  toSummary.end();
});
toConsole.compose(values.reporter === "spec" ? new spec() : tap).pipe(process.stdout);
toSummary.compose(testRunReporter).pipe(createWriteStream(values.summary));
