import Table from "cli-table3";
import type { LevelJson, ResultJson } from "./json-result.js";

/** Two runs of the same sweep to set side by side: `before` is the baseline (e.g. batching off). */
export interface OnOffRuns {
  before: { label: string; result: ResultJson };
  after: { label: string; result: ResultJson };
}

const msText = (us: number | undefined) => (us === undefined ? "-" : (us / 1000).toFixed(2));
const ratioText = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}x` : "-");
const p99 = (level: LevelJson) => level.latency.percentiles["99"];
const compute = (level: LevelJson) => {
  const b = level.serverBreakdown;
  return b == null ? undefined : b.computeInputUs + b.computeInferUs + b.computeOutputUs;
};
const table = (head: string[]) => new Table({ head, style: { head: [], border: [] } });

/**
 * One run's levels in a table under 80 columns (the full sweep table is wider than a terminal): throughput,
 * p50 / p99 and the server's queue and compute time per request in milliseconds, the batch it formed.
 */
export function formatRunTable(result: ResultJson): string {
  const rate = result.levels.some((l) => l.mode === "request_rate");
  const t = table([
    rate ? "Rate" : "Conc.",
    "Infer/s",
    "p50 ms",
    "p99 ms",
    "Queue ms",
    "Compute ms",
    "Batch",
    "Status",
  ]);
  for (const l of result.levels) {
    t.push([
      String(l.value),
      l.inferPerSec.toFixed(1),
      msText(l.latency.percentiles["50"]),
      msText(p99(l)),
      msText(l.serverBreakdown?.queueUs),
      msText(compute(l)),
      l.serverBreakdown == null ? "-" : l.serverBreakdown.avgBatchSize.toFixed(2),
      l.status,
    ]);
  }
  return `${t.toString()}\n`;
}

/** Levels measured in both runs, in the baseline's order. */
function pairs(runs: OnOffRuns): { value: number; before: LevelJson; after: LevelJson }[] {
  const out: { value: number; before: LevelJson; after: LevelJson }[] = [];
  for (const before of runs.before.result.levels) {
    const after = runs.after.result.levels.find((l) => l.value === before.value && l.mode === before.mode);
    if (after !== undefined && before.requestCount > 0 && after.requestCount > 0) {
      out.push({ value: before.value, before, after });
    }
  }
  return out;
}

/** Both runs per level in a table under 100 columns (labels under the headings): throughput, p99, ratios, queue. */
export function formatOnOffTable(runs: OnOffRuns): string {
  const [b, a] = [runs.before.label, runs.after.label];
  const t = table([
    "Conc.",
    `Infer/s\n${b}`,
    `Infer/s\n${a}`,
    `${a}/\n${b}`,
    `p99 ms\n${b}`,
    `p99 ms\n${a}`,
    `${a}/\n${b}`,
    `Queue ms\n${b}`,
    `Queue ms\n${a}`,
  ]);
  for (const { value, before, after } of pairs(runs)) {
    t.push([
      String(value),
      before.inferPerSec.toFixed(1),
      after.inferPerSec.toFixed(1),
      ratioText(after.inferPerSec, before.inferPerSec),
      msText(p99(before)),
      msText(p99(after)),
      ratioText(p99(after) ?? 0, p99(before) ?? 0),
      msText(before.serverBreakdown?.queueUs),
      msText(after.serverBreakdown?.queueUs),
    ]);
  }
  return `${t.toString()}\n`;
}

/**
 * The batching demo's one-line verdict: the throughput ratio (after / before) at each level, then the
 * lowest level's queue delay, which is why batching is slower there: a lone request waits up to
 * max_queue_delay for company that never comes. Other levels where batching lost are named, not explained
 * (on a busy machine that is noise: the tables' Status column says which levels were unstable).
 */
export function onOffVerdict(runs: OnOffRuns): string {
  const [b, a] = [runs.before.label, runs.after.label];
  const levels = pairs(runs);
  const lowest = levels[0];
  if (lowest === undefined) return `Verdict: no level was measured in both runs (${a}, ${b}).`;
  const ratios = levels.map(
    ({ value, before, after }) => `${ratioText(after.inferPerSec, before.inferPerSec)} at c=${value}`,
  );
  const slower = (l: (typeof levels)[number]) => l.after.inferPerSec < l.before.inferPerSec;
  const parts = [`Verdict: throughput ${a}/${b} ${ratios.join(", ")}`];
  const queueAfter = lowest.after.serverBreakdown?.queueUs;
  const queueBefore = lowest.before.serverBreakdown?.queueUs;
  if (queueAfter !== undefined && queueBefore !== undefined && queueAfter > queueBefore) {
    const queued = `queue ${msText(queueAfter)} ms ${a} vs ${msText(queueBefore)} ms ${b} per request`;
    parts.push(
      slower(lowest)
        ? `${a} is slower at c=${lowest.value} because a lone request waits in the queue for a batch that ` +
            `does not fill (${queued})`
        : `at c=${lowest.value} ${a} adds queue delay, a lone request waiting for a batch that does not ` +
            `fill (${queued}), though this run's throughput did not show it`,
    );
  }
  const others = levels.slice(1).filter(slower);
  if (others.length > 0) {
    parts.push(`${a} also lost at c=${others.map((l) => l.value).join(", c=")}: see Status (noise?)`);
  }
  return `${parts.join("; ")}.`;
}

/** A result's level messages (warnings) prefixed with the run and the level they belong to. */
export function levelWarnings(label: string, result: ResultJson): string[] {
  const prefix = (l: LevelJson) =>
    l.mode === "request_rate" ? `rate ${l.value}/s` : `concurrency ${l.value}`;
  return result.levels.flatMap((l) =>
    l.messages.map(
      // tbench's own "Warning: " prefix is dropped: the line already says it is one.
      (m) =>
        `warning [${label}, ${prefix(l)}]: ${m
          .trim()
          .replace(/^Warning:\s*/, "")
          .replace(/\s*\n\s*/g, " ")}`,
    ),
  );
}
