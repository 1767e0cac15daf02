import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  diffServerStats,
  type ModelStatisticsLike,
  serverBreakdown,
  snapshotFromStatistics,
} from "./server-stats.js";

function stats(name: string, version: string, n: number, batch = 1): ModelStatisticsLike {
  const d = (count: number, ns: number) => ({ count, ns });
  return {
    name,
    version,
    inferenceCount: n * batch,
    executionCount: n,
    inferenceStats: {
      success: d(n * batch, n * batch * 1_000_000),
      fail: d(0, 0),
      queue: d(n * batch, n * batch * 200_000),
      computeInput: d(n * batch, n * batch * 10_000),
      computeInfer: d(n * batch, n * batch * 600_000),
      computeOutput: d(n * batch, n * batch * 20_000),
    },
  };
}

describe("server statistics per window", () => {
  it("diffs two snapshots and breaks the time down like perf_analyzer", () => {
    const before = snapshotFromStatistics([stats("m", "1", 100)]);
    const after = snapshotFromStatistics([stats("m", "1", 300, 4)]);
    const diff = diffServerStats(before, after, { name: "m", version: "", composing: [] })!;
    assert.equal(diff.version, "1");
    assert.equal(diff.inferenceCount, 1100);
    assert.equal(diff.executionCount, 200);
    const b = serverBreakdown(diff);
    assert.equal(b.requestUs, 1000);
    assert.equal(b.queueUs, 200);
    assert.equal(b.computeInferUs, 600);
    assert.equal(b.overheadUs, 1000 - 200 - 10 - 600 - 20);
    assert.equal(b.avgBatchSize, 1100 / 200);
  });

  it("picks the highest version when none is given, and breaks ensembles down per composing model", () => {
    const before = snapshotFromStatistics([
      stats("ens", "1", 0),
      stats("a", "1", 0),
      stats("b", "2", 0),
      stats("b", "3", 0),
    ]);
    const after = snapshotFromStatistics([
      stats("ens", "1", 10),
      stats("a", "1", 10),
      stats("b", "2", 99),
      stats("b", "3", 10),
    ]);
    const tree = {
      name: "ens",
      version: "",
      composing: [
        { name: "a", version: "1", composing: [] },
        { name: "b", version: "", composing: [] },
      ],
    };
    const diff = diffServerStats(before, after, tree)!;
    assert.deepEqual(Object.keys(diff.composing), ["a", "b"]);
    assert.equal(diff.composing["b"]?.version, "3");
    assert.equal(diff.composing["b"]?.successCount, 10);
  });

  it("is undefined when the model is missing from the statistics", () => {
    assert.equal(diffServerStats(new Map(), new Map(), { name: "x", version: "", composing: [] }), undefined);
  });
});
