/**
 * A log that cannot be flooded. A request that fails writes a line that can carry what the client sent (a
 * 10,000-character model name in the URL and again in the message), and a client that repeats it thousands
 * of times a second turned one line each into gigabytes of log (issue 36: 1.68 GB in 10 s). Here each line
 * is clipped to `maxLineChars` (`...(N more chars)` says how much was cut, control characters are escaped so
 * one event stays one line), at most `linesPerInterval` events are written in full per interval, and the
 * rest are folded into one summary line per interval that says how many there were, grouped by key:
 * `E 83780 more errors in the last second, not written one by one: 83779 x 'HTTP POST ...'`. So a flood
 * writes at most (linesPerInterval + 1) lines of at most maxLineChars each per interval.
 *
 * Both front ends use it (HTTP's error and rejection logs, gRPC's error log); the clock is injected so
 * tests run it on a fake one. (core/echo-text.ts gets a shared `truncateEcho` helper in another change;
 * this module keeps its own small clip so it stands alone.)
 */
import type { Clock, TimerHandle } from "./clock.js";

/** Most characters of one summarised or folded log line (its level letter and newline aside). */
export const SUMMARIZED_LINE_MAX_CHARS = 1024;
/** Most characters one group's sample takes in a summary line. */
const SAMPLE_MAX_CHARS = 200;
/** Most characters of a key kept for grouping (keys come from requests: their memory is bounded too). */
const KEY_MAX_CHARS = 256;

/** Options of createSummarizingLog. */
export interface SummarizingLogOptions {
  /** Writes one line (the logger's error or warn). */
  readonly write: (line: string) => void;
  /** Runs the summary timer (tests pass a fake clock). */
  readonly clock: Clock;
  /** Length of one interval. Default 1 s. */
  readonly intervalMs?: number;
  /** Events written in full per interval; the rest are folded into the summary. Default 10. */
  readonly linesPerInterval?: number;
  /** Distinct keys named in a summary; the rest are counted as "other". Default 8. */
  readonly maxGroups?: number;
  /** Most characters of one line. Default SUMMARIZED_LINE_MAX_CHARS. */
  readonly maxLineChars?: number;
  /** The summary line's words: `(count, period, groups) => line`. */
  readonly summary: (folded: number, period: string, groups: string) => string;
}

/** Writes events, a bounded number in full, the rest as one summary per interval. */
export interface SummarizingLog {
  /** Records one event; `key` groups repeats (defaults to the line itself). */
  record(line: string, key?: string): void;
  /** Writes the pending summary now and stops the timer. Idempotent. */
  close(): void;
}

/** `text` cut to at most `maxChars` characters, saying how many were left out. */
export function clipForLog(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  // The suffix is at most 26 characters for any string length JavaScript allows.
  const keep = Math.max(0, maxChars - 26);
  return `${text.slice(0, keep)}...(${text.length - keep} more chars)`;
}

const CONTROL = /[\u0000-\u001f\u007f]/g;

/** `text` on one line: control characters (newlines included) written as `\xNN`. */
export function oneLine(text: string): string {
  return text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** Creates a summarising log; its timer runs only while events are pending. */
export function createSummarizingLog(options: SummarizingLogOptions): SummarizingLog {
  const { write, clock } = options;
  const intervalMs = options.intervalMs ?? 1000;
  const linesPerInterval = options.linesPerInterval ?? 10;
  const maxGroups = options.maxGroups ?? 8;
  const maxLineChars = options.maxLineChars ?? SUMMARIZED_LINE_MAX_CHARS;
  const period = intervalMs === 1000 ? "second" : `${intervalMs} ms`;
  /** Keys written in full this interval. */
  let written = new Set<string>();
  /** Folded events by key: how many, and the first one's line as a sample. */
  let groups = new Map<string, { count: number; sample: string }>();
  let folded = 0;
  let timer: TimerHandle | undefined;

  const flush = () => {
    timer = undefined;
    if (folded > 0) {
      const parts = [...groups.values()].map(({ count, sample }) => `${count} x '${sample}'`);
      const grouped = [...groups.values()].reduce((sum, group) => sum + group.count, 0);
      if (grouped < folded) parts.push(`${folded - grouped} x other messages`);
      write(clipForLog(options.summary(folded, period, parts.join(", ")), maxLineChars));
    }
    written = new Set();
    groups = new Map();
    folded = 0;
  };

  return {
    record(line, key = line) {
      const groupKey = key.length > KEY_MAX_CHARS ? key.slice(0, KEY_MAX_CHARS) : key;
      // The first event of a quiet period starts the interval; its flush ends it.
      timer ??= clock.setTimer(flush, intervalMs * 1000);
      if (written.size < linesPerInterval && !written.has(groupKey)) {
        written.add(groupKey);
        write(clipForLog(oneLine(line), maxLineChars));
        return;
      }
      folded++;
      const group = groups.get(groupKey);
      if (group !== undefined) group.count++;
      else if (groups.size < maxGroups)
        groups.set(groupKey, { count: 1, sample: clipForLog(oneLine(line), SAMPLE_MAX_CHARS) });
    },
    close() {
      timer?.cancel();
      flush();
    },
  };
}
