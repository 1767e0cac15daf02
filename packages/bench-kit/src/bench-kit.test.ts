import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  atLeast,
  atMost,
  benchOptions,
  environmentMarkdown,
  INVALID_ABOVE_LIMIT,
  median,
  medianRatio,
  perRoundRatios,
  ROOT,
  rotate,
  shareOfLimit,
  spread,
} from "./bench-kit.js";

describe("bench kit: figures over rounds", () => {
  it("median of odd and even counts, and none refused", () => {
    assert.equal(median([5, 1, 3]), 3);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.throws(() => median([]), /expected at least one value, got none/);
    assert.deepEqual(spread([3, 9, 1]), { min: 1, median: 3, max: 9 });
  });

  it("a ratio is the median of per-round ratios, not the ratio of medians", () => {
    // Round 2 ran on a slower machine for both: per round the ratio is 0.9, 0.9, 1.2.
    const tool = [90, 45, 120];
    const baseline = [100, 50, 100];
    assert.deepEqual(
      perRoundRatios(tool, baseline).map((r) => r.toFixed(2)),
      ["0.90", "0.90", "1.20"],
    );
    assert.equal(medianRatio(tool, baseline).toFixed(2), "0.90");
    assert.equal((median(tool) / median(baseline)).toFixed(2), "0.90");
    assert.equal(medianRatio([10, 30, 20], [10, 10, 40]), 1); // ratios 1, 3, 0.5
    assert.notEqual(median([10, 30, 20]) / median([10, 10, 40]), 1); // 20 / 10 = 2
    assert.throws(() => perRoundRatios([1, 2], [1]), /two equal, non-empty lists of rounds, got 2 and 1/);
  });

  it("rotates the order of contenders round by round", () => {
    assert.deepEqual(rotate(["a", "b", "c"], 0), ["a", "b", "c"]);
    assert.deepEqual(rotate(["a", "b", "c"], 1), ["b", "c", "a"]);
    assert.deepEqual(rotate(["a", "b", "c"], 5), ["c", "a", "b"]);
  });
});

describe("bench kit: verdicts", () => {
  it("met / not met at the target's edge", () => {
    assert.equal(atLeast(0.9, 0.9), "met");
    assert.equal(atLeast(0.899, 0.9), "not met");
    assert.equal(atMost(1.1, 1.1), "met");
    assert.equal(atMost(1.11, 1.1), "not met");
  });

  it("a server above its in-process limit is invalid, never a success", () => {
    assert.equal(shareOfLimit(1.17, 0.7), INVALID_ABOVE_LIMIT);
    assert.equal(shareOfLimit(1.001, 0.7), "invalid: above the in-process limit");
    assert.equal(shareOfLimit(1, 0.7), "met");
    assert.equal(shareOfLimit(0.71, 0.7), "met");
    assert.equal(shareOfLimit(0.69, 0.7), "not met");
  });
});

describe("bench kit: options and environment", () => {
  it("ROOT is the repository root", () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string };
    assert.equal(manifest.name, "tbench-monorepo");
  });

  it("a full run writes bench-results/; a quick run a temporary folder unless told where", () => {
    assert.deepEqual(benchOptions([], {}), { quick: false, outDir: join(ROOT, "bench-results") });
    assert.deepEqual(benchOptions(["--quick"], {}), {
      quick: true,
      outDir: join(tmpdir(), "tbench-bench-quick"),
    });
    assert.equal(benchOptions([], { BENCH_QUICK: "1" }).quick, true);
    assert.equal(benchOptions([], { BENCH_QUICK: "0" }).quick, false);
    assert.equal(benchOptions(["--quick"], { BENCH_RESULTS_DIR: "/x" }).outDir, "/x");
    assert.equal(benchOptions(["--out", "/y"], { BENCH_RESULTS_DIR: "/x" }).outDir, "/y");
    assert.throws(() => benchOptions(["--out"], {}), /--out: expected a directory after it, got nothing/);
  });

  it("states the load average at start and end, and marks a quick run", () => {
    const environment = {
      date: "2026-12-03T00:00:00.000Z",
      cpus: 2,
      cpuModel: "cpu",
      node: "v20.20.2",
      quick: false,
      loadAverageStart: [0.5, 0.25, 0.125],
      loadAverageEnd: [1, 2, 3],
    };
    const full = environmentMarkdown(environment);
    assert.match(full, /at start 0\.50 \/ 0\.25 \/ 0\.13, at end 1\.00 \/ 2\.00 \/ 3\.00/);
    assert.doesNotMatch(full, /Quick/);
    assert.match(environmentMarkdown({ ...environment, quick: true }), /^\*\*Quick smoke run/);
  });
});
