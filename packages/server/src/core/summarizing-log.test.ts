/**
 * The summarising log on a fake clock: a flood of one failure carrying a 10,000-character model name writes
 * lines no longer than the bound, no more of them than (lines per interval + 1) per interval, and summary
 * lines that account for every event folded.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createFakeClock } from "../testing/fake-clock.js";
import { createConsoleLogger } from "./logger.js";
import { clipForLog, createSummarizingLog, SUMMARIZED_LINE_MAX_CHARS } from "./summarizing-log.js";

const LONG_NAME = "m".repeat(10_000);
const SECONDS = 10;
const FAILURES = 10_000;

describe("summarizing log", () => {
  test("10,000 failures with a 10,000-char name: bounded lines, bounded total, every event counted", () => {
    const clock = createFakeClock();
    const lines: string[] = [];
    const log = createSummarizingLog({
      write: (line) => lines.push(line),
      clock,
      summary: (count, period, groups) => `${count} more errors in the last ${period}: ${groups}`,
    });
    // 1,000 a second for 10 s, the same failure each time.
    for (let i = 0; i < FAILURES; i++) {
      log.record(`HTTP POST /v2/repository/models/${LONG_NAME}/load: failed to load '${LONG_NAME}'`);
      clock.advanceUs((SECONDS * 1e6) / FAILURES);
    }
    log.close();
    assert.equal(clock.pendingTimers(), 0, "close() leaves no timer");
    for (const line of lines)
      assert.ok(line.length <= SUMMARIZED_LINE_MAX_CHARS, `a ${line.length}-char line`);
    // 10 in full (only one key here: 1) and 1 summary per interval, the last interval closed by close().
    assert.ok(lines.length <= (10 + 1) * (SECONDS + 1), `${lines.length} lines`);
    const total = lines.reduce((sum, line) => sum + line.length + 1, 0);
    assert.ok(total <= lines.length * (SUMMARIZED_LINE_MAX_CHARS + 1));
    const full = lines.filter((line) => line.startsWith("HTTP POST"));
    const summaries = lines.filter((line) => / more errors in the last second: /.test(line));
    assert.equal(full.length + summaries.length, lines.length);
    assert.match(full[0]!, /\.\.\.\(\d+ more chars\)$/, "the full line says how much was cut");
    const folded = summaries.map((line) => Number(/^(\d+) more errors/.exec(line)?.[1]));
    assert.equal(full.length + folded.reduce((a, b) => a + b, 0), FAILURES, "every failure is accounted for");
    assert.match(
      summaries[0]!,
      /^\d+ more errors in the last second: \d+ x 'HTTP POST \/v2\/repository\/models\/m+\.\.\.\(\d+ more chars\)'$/,
    );
  });

  test("distinct failures: linesPerInterval in full, the rest folded per key and as other messages", () => {
    const clock = createFakeClock();
    const lines: string[] = [];
    const log = createSummarizingLog({
      write: (line) => lines.push(line),
      clock,
      linesPerInterval: 2,
      maxGroups: 1,
      summary: (count, _period, groups) => `${count} folded: ${groups}`,
    });
    for (const name of ["a", "b", "c", "c", "d", "a"]) log.record(`failed '${name}'`);
    clock.advanceUs(1e6);
    assert.deepEqual(lines, ["failed 'a'", "failed 'b'", "4 folded: 2 x 'failed 'c'', 2 x other messages"]);
    // A new interval writes in full again.
    log.record("failed 'a'");
    log.close();
    assert.equal(lines.at(-1), "failed 'a'");
  });

  test("a line stays one line: control characters are escaped", () => {
    const lines: string[] = [];
    const log = createSummarizingLog({
      write: (line) => lines.push(line),
      clock: createFakeClock(),
      summary: String,
    });
    log.record("model 'a\nE forged line\r'");
    log.close();
    assert.deepEqual(lines, ["model 'a\\x0aE forged line\\x0d'"]);
  });

  test("clipForLog keeps short text and cuts long text to the bound", () => {
    assert.equal(clipForLog("short", 10), "short");
    const clipped = clipForLog("x".repeat(10_000), 100);
    assert.ok(clipped.length <= 100);
    assert.match(clipped, /^x+\.\.\.\(\d+ more chars\)$/);
    assert.equal(Number(/\((\d+) more/.exec(clipped)?.[1]) + clipped.indexOf("."), 10_000);
  });

  test("the console logger bounds every line it writes", () => {
    const lines: string[] = [];
    const logger = createConsoleLogger({ write: (line) => lines.push(line), maxLineChars: 100 });
    logger.error(`failed to load '${LONG_NAME}'\nsecond line`);
    assert.equal(lines.length, 1);
    assert.ok(lines[0]!.length <= 102);
    assert.match(lines[0]!, /^E failed to load 'm+\.\.\.\(\d+ more chars\)$/);
  });
});
