import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticLevel } from "../testing/synthetic-results.js";
import { type ResultJson, toResultJson } from "./json-result.js";
import { formatOnOffTable, formatRunTable, levelWarnings, onOffVerdict } from "./on-off-summary.js";

/** A sweep with the given throughput and server queue time (us) per concurrency level. */
function sweep(levels: [value: number, inferPerSec: number, queueUs: number][]): ResultJson {
  const result = toResultJson(
    levels.map(([value]) => syntheticLevel({ value, latenciesUs: [2_000, 3_000, 40_000] })),
    { mode: "concurrency" },
    "t",
  );
  result.levels.forEach((level, i) => {
    const [, inferPerSec, queueUs] = levels[i] ?? [0, 0, 0];
    level.inferPerSec = inferPerSec;
    level.serverBreakdown = {
      requestUs: queueUs + 2_100,
      overheadUs: 0,
      queueUs,
      computeInputUs: 30,
      computeInferUs: 2_000,
      computeOutputUs: 70,
      avgBatchSize: 1,
    };
  });
  return result;
}

const runs = () => ({
  before: {
    label: "off",
    result: sweep([
      [1, 400, 10],
      [16, 380, 40_000],
      [32, 385, 80_000],
    ]),
  },
  after: {
    label: "on",
    result: sweep([
      [1, 340, 950],
      [16, 1_900, 3_000],
      [32, 2_300, 6_000],
    ]),
  },
});
const widest = (text: string) => Math.max(...text.split("\n").map((l) => l.length));

describe("batching on/off summary", () => {
  it("tables fit 100 columns", () => {
    const r = runs();
    const pair = formatOnOffTable(r);
    assert.ok(widest(pair) <= 100, `${widest(pair)} columns:\n${pair}`);
    assert.match(pair, /│ 16\s+│ 380\.0\s+│ 1900\.0\s+│ 5\.00x\s+│/);
    const one = formatRunTable(r.after.result);
    assert.ok(widest(one) <= 100, `${widest(one)} columns:\n${one}`);
    assert.equal(one.split("\n").filter((l) => /^│ \d/.test(l)).length, 3, "one row per level");
    assert.match(one, /│ 1\s+│ 340\.0\s+│ .*│ 0\.95\s+│ 2\.10\s+│/);
  });

  it("ends with a verdict: the ratio per level and the queue delay where batching is slower", () => {
    const verdict = onOffVerdict(runs());
    assert.equal(verdict.split("\n").length, 1);
    assert.match(verdict, /^Verdict: throughput on\/off 0\.85x at c=1, 5\.00x at c=16, 5\.97x at c=32; /);
    assert.match(
      verdict,
      /; on is slower at c=1 because a lone request .* \(queue 0\.95 ms on vs 0\.01 ms off per request\)\.$/,
    );
    // Faster at c=1 (noise) still names the queue delay; a loss elsewhere is named, not explained.
    const noisy = runs();
    noisy.after.result.levels[0]!.inferPerSec = 500;
    noisy.after.result.levels[1]!.inferPerSec = 300;
    const noisyVerdict = onOffVerdict(noisy);
    assert.doesNotMatch(noisyVerdict, /slower/);
    assert.match(
      noisyVerdict,
      /; at c=1 on adds queue delay, .*\(queue 0\.95 ms on vs 0\.01 ms off per request\), /,
    );
    assert.match(noisyVerdict, /; on also lost at c=16: see Status \(noise\?\)\.$/);
  });

  it("warnings name the run and the level", () => {
    const r = runs().before.result;
    r.levels[1]!.messages = [
      "Failed to obtain stable measurement within 5 measurement windows\nfor concurrency 16.",
      "Warning: tbench's event loop was delayed 22.1 ms at p99: it may be the bottleneck",
    ];
    assert.deepEqual(levelWarnings("heavy_nobatch", r), [
      "warning [heavy_nobatch, concurrency 16]: Failed to obtain stable measurement within 5 measurement windows for concurrency 16.",
      "warning [heavy_nobatch, concurrency 16]: tbench's event loop was delayed 22.1 ms at p99: it may be the bottleneck",
    ]);
  });
});
