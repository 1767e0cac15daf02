// bench:models' verdict rules and what its Markdown says about a round that got no answer: the figures
// come from a real run, but the rules that turn them into "met" / "not met" are tested here.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ChainRun, Contender } from "./model-management-chain.js";
import type { PollRound } from "./model-management-poll.js";
import {
  ensembleFasterVerdict,
  type ModelManagementResult,
  modelManagementMarkdown,
  pollVerdict,
} from "./model-management-report.js";

const answered = (firstAnswerMs: number): PollRound => ({
  staggerMs: 0,
  firstAnswerMs,
  tries: 3,
  refusals: { "NOT_FOUND 404": 2 },
  failure: null,
});
const unanswered: PollRound = {
  staggerMs: 500,
  firstAnswerMs: null,
  tries: 40,
  refusals: { "NOT_FOUND 404": 40 },
  failure: "no answer from version 2 within 16000 ms; server log:\nE failed to load",
};

describe("bench:models verdicts", () => {
  it("the ensemble must be faster than the client chain: a tie is not met", () => {
    assert.equal(ensembleFasterVerdict(1.05), "met");
    assert.equal(ensembleFasterVerdict(1), "not met");
    assert.equal(ensembleFasterVerdict(0.93), "not met");
  });

  it("poll mode is met only when every round answered within the target", () => {
    assert.equal(pollVerdict([answered(900), answered(2000)], 2000), "met");
    assert.equal(pollVerdict([answered(900), answered(2001)], 2000), "not met");
    assert.equal(pollVerdict([answered(900), unanswered], 2000), "not met");
    assert.equal(pollVerdict([], 2000), "not met");
  });
});

describe("bench:models Markdown", () => {
  const run = (contender: Contender, chainsPerSec: number): ChainRun => ({
    contender,
    chainsPerSec,
    completed: chainsPerSec,
    errors: 0,
    firstError: null,
    windowMs: 1000,
    p50Ms: 80,
    p99Ms: 120,
    resnetAvgBatch: 3.5,
  });
  const result: ModelManagementResult = {
    benchmark: "test",
    environment: {
      date: "2026-12-03T00:00:00.000Z",
      cpus: 2,
      cpuModel: "test cpu",
      node: "v20.20.2",
      quick: false,
      loadAverageStart: [0.5, 0.5, 0.5],
      loadAverageEnd: [0.6, 0.5, 0.5],
    },
    settings: {
      concurrency: 16,
      rounds: 1,
      warmupMs: 2000,
      windowMs: 5000,
      pollSecs: 1,
      pollRounds: 2,
      askEveryMs: 5,
      pollTimeoutMs: 16000,
    },
    pipeline: {
      answers: { agreeing: 16, checked: 16 },
      rounds: [
        {
          order: ["ensemble", "client chain"],
          ensemble: run("ensemble", 200),
          clientChain: run("client chain", 160),
          ratio: 1.25,
        },
      ],
      ensemble: { min: 200, median: 200, max: 200 },
      clientChain: { min: 160, median: 160, max: 160 },
      ratio: 1.25,
      target: "> 1x (the ensemble is faster)",
      verdict: "met",
    },
    poll: {
      model: "simple",
      rounds: [answered(1200), unanswered],
      firstAnswerMs: { min: 1200, median: 1200, max: 1200 },
      targetMs: 2000,
      verdict: pollVerdict([answered(1200), unanswered], 2000),
    },
  };

  it("shows the ratio with its verdict, and a round without an answer as such, with its reason", () => {
    const markdown = modelManagementMarkdown(result);
    assert.match(markdown, /\| 1\.25x \| 1\.25x \| > 1x \(the ensemble is faster\) \| \*\*met\*\* \|/);
    assert.match(markdown, /\| 1200 \(1200-1200\) \| 1 of 2 \| <= 2000 ms .* \| \*\*not met\*\* \|/);
    assert.match(
      markdown,
      /\| 2 \| 500 \| none: no answer from version 2 within 16000 ms; server log: \| 40 \| 40 x NOT_FOUND 404 \|/,
    );
  });
});
