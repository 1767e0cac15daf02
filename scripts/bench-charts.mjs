// node scripts/bench-charts.mjs: draws bench-results/batching.svg from bench-results/batching.json (the
// batching benchmark's medians: throughput against p99 latency, heavy with dynamic batching and
// heavy_nobatch without, one point per concurrency) with tbench's report renderer. Needs `npx tsc -b`.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderThroughputSvg } from "tbench";

const root = fileURLToPath(new URL("..", import.meta.url));
const bench = JSON.parse(readFileSync(`${root}bench-results/batching.json`, "utf8"));

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** One chart run per model: each concurrency's median throughput and median p50 / p99 over the rounds. */
function run(model, label) {
  const cases = bench.cases.filter((c) => c.model === model).sort((a, b) => a.concurrency - b.concurrency);
  if (cases.length === 0) throw new Error(`bench-results/batching.json: no case for model '${model}'`);
  return {
    label,
    mode: "concurrency",
    points: cases.map((c) => ({
      level: c.concurrency,
      inferPerSec: median(c.rounds.map((r) => r.inferPerSec)),
      latencyUs: {
        50: median(c.rounds.map((r) => r.p50Ms)) * 1000,
        99: median(c.rounds.map((r) => r.p99Ms)) * 1000,
      },
      breakdown: null,
    })),
  };
}

const svg = renderThroughputSvg([
  run("heavy", "heavy (batching on)"),
  run("heavy_nobatch", "heavy_nobatch (batching off)"),
]);
writeFileSync(`${root}bench-results/batching.svg`, svg);
console.log("Wrote bench-results/batching.svg");
