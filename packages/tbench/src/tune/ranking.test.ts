import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toResultJson } from "../report/json-result.js";
import { UsageError } from "../run/usage-error.js";
import { syntheticLevel } from "../testing/synthetic-results.js";
import {
  bestLevel,
  closestLevel,
  meetsObjective,
  type Objective,
  parseDurationMs,
  parseLatencyBudget,
  stopsGrowing,
} from "./objective.js";
import { type CandidateOutcome, explainRanking, rankOutcomes } from "./ranking.js";
import type { Candidate } from "./search-space.js";
import { formatTuneTable } from "./tune-table.js";

/** A level of `n` requests in 1 s (n infer/s) that all took `ms` milliseconds. */
const level = (value: number, n: number, ms: number) =>
  syntheticLevel({ value, latenciesUs: Array(n).fill(ms * 1000) });

function outcome(
  label: string,
  levels: [number, number, number][],
  state: CandidateOutcome["state"] = "measured",
): CandidateOutcome {
  const candidate: Candidate = {
    label,
    group: label,
    batching: "on",
    maxQueueDelayUs: 0,
    preferredBatchSize: [],
    maxBatchSize: 8,
    instanceCount: 1,
  };
  const result = toResultJson(
    levels.map(([c, n, ms]) => level(c, n, ms)),
    {},
    "test",
  );
  return {
    candidate,
    current: false,
    state,
    message: state === "refused" ? "no" : undefined,
    result: state === "refused" ? undefined : result,
  };
}

const P95_10: Objective = { goal: "throughput", budget: { metric: "p95", ms: 10 }, minThroughput: undefined };

describe("tune objective", () => {
  it("parses budgets and durations, refusing bad ones with the flag named", () => {
    assert.deepEqual(parseLatencyBudget("p95:10ms"), { metric: "p95", ms: 10 });
    assert.deepEqual(parseLatencyBudget("avg:800us"), { metric: "avg", ms: 0.8 });
    assert.deepEqual(parseLatencyBudget("p99:2.5"), { metric: "p99", ms: 2.5 });
    assert.deepEqual(parseLatencyBudget("p50:1s"), { metric: "p50", ms: 1000 });
    for (const bad of ["p97:10ms", "p95", "p95:0ms", "p95:fast"]) {
      assert.throws(
        () => parseLatencyBudget(bad),
        (e: unknown) =>
          e instanceof UsageError &&
          e.message.startsWith("--latency-budget: expected") &&
          e.message.includes(`got "${bad}"`),
      );
    }
    assert.equal(parseDurationMs("--time-budget", "90s"), 90_000);
    assert.equal(parseDurationMs("--time-budget", "10m"), 600_000);
    assert.equal(parseDurationMs("--time-budget", "2"), 2000);
    assert.throws(
      () => parseDurationMs("--time-budget", "soon"),
      /^UsageError: --time-budget: expected a duration > 0 such as 90s, 10m or 1h, got "soon"$/,
    );
  });

  it("a level meets the budget strictly under it, with no errors, at the minimum throughput", () => {
    const [under, at] = toResultJson([level(1, 100, 9.9), level(2, 100, 10)], {}, "t").levels;
    assert.equal(meetsObjective(under!, P95_10), true);
    assert.equal(meetsObjective(at!, P95_10), false, "the sweep's threshold stops at >= the limit");
    assert.equal(meetsObjective(under!, { ...P95_10, minThroughput: 101 }), false);
    const failed = toResultJson(
      [syntheticLevel({ value: 1, latenciesUs: [1000], errors: { internal: 1 } })],
      {},
      "t",
    ).levels[0]!;
    failed.status = "error_rate";
    assert.equal(meetsObjective(failed, P95_10), false);
  });

  it("picks the highest throughput within the budget, or the lowest latency at the throughput", () => {
    const levels = toResultJson([level(1, 100, 2), level(2, 180, 5), level(4, 300, 12)], {}, "t").levels;
    assert.equal(bestLevel(levels, P95_10)?.value, 2);
    const latencyGoal: Objective = { goal: "latency", budget: undefined, minThroughput: 150 };
    assert.equal(bestLevel(levels, latencyGoal)?.value, 2);
    assert.equal(bestLevel(levels, { ...P95_10, budget: { metric: "p95", ms: 1 } }), undefined);
    assert.equal(closestLevel(levels, { ...P95_10, budget: { metric: "p95", ms: 1 } })?.value, 1);
  });

  it("stops growing the instance count once it gains 5% or less", () => {
    assert.equal(stopsGrowing(undefined, 100), false);
    assert.equal(stopsGrowing(undefined, undefined), false, "nothing met yet: more instances may get there");
    assert.equal(stopsGrowing(100, 106), false);
    assert.equal(stopsGrowing(100, 105), true);
    assert.equal(stopsGrowing(100, 90), true);
    assert.equal(stopsGrowing(100, undefined), true);
  });
});

describe("tune ranking", () => {
  it("ranks met configs by the goal, then unmet by closeness, then refused; explains the winner", () => {
    const ranking = rankOutcomes(
      [
        outcome("refused one", [], "refused"),
        outcome("slow", [[1, 50, 20]]),
        outcome("good", [
          [1, 100, 3],
          [2, 190, 6],
          [4, 250, 15],
        ]),
        outcome("better", [
          [1, 120, 3],
          [2, 220, 8],
        ]),
        outcome("slower", [[1, 40, 40]]),
      ],
      P95_10,
    );
    assert.deepEqual(
      ranking.rows.map((r) => r.outcome.candidate.label),
      ["better", "good", "slow", "slower", "refused one"],
    );
    assert.equal(ranking.winner?.outcome.candidate.label, "better");
    assert.equal(ranking.winner?.best?.value, 2);
    assert.equal(
      explainRanking(ranking, P95_10),
      "Winner: better, 220.0 infer/s with p95 8.00 ms at concurrency 2 (p95 < 10 ms, highest throughput); " +
        "runner-up good reached 190.0 infer/s (13.6% less).",
    );
    const table = formatTuneTable(ranking, "concurrency");
    assert.match(table, /1 \* +│ better/);
    assert.match(table, /refused one .*refused: no/);
    assert.match(table, /slow .*not met/);
  });

  it("with nothing within the budget there is no winner and the closest is named", () => {
    const ranking = rankOutcomes([outcome("a", [[1, 50, 20]]), outcome("b", [[1, 40, 12]])], P95_10);
    assert.equal(ranking.winner, undefined);
    // HDR histogram buckets: 12 ms reads back as 12.0x ms.
    assert.match(
      explainRanking(ranking, P95_10),
      /^No config meets p95 < 10 ms, highest throughput; closest: b at concurrency 1 \(p95 12\.0\d ms, 40\.0 infer\/s\)\.$/,
    );
  });
});
