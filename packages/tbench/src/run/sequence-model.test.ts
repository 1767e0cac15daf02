import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { resolveBenchConfig } from "../cli/bench-config.js";
import type { SweepLevels } from "../measure/sweep.js";
import type { BenchConfig } from "./bench-config.js";
import {
  isSequenceModel,
  SEQUENCE_BATCH_SIZE_ERROR,
  SEQUENCE_ID_CONCURRENCY_ERROR,
  SEQUENCE_ID_SEQUENCES_ERROR,
  SEQUENCE_OPEN_CONCURRENCY_ERROR,
  sequenceRunConfig,
} from "./sequence-model.js";

describe("what a sequence model changes in the run", () => {
  const concurrency = (range: string, extra: Record<string, unknown> = {}): BenchConfig =>
    resolveBenchConfig({ model: "acc", concurrencyRange: range, latencyThreshold: "10", ...extra });
  const levelsOf = (config: BenchConfig): SweepLevels => ({ mode: config.mode, ...config.range });
  const check = (config: BenchConfig, sequenceModel: boolean) =>
    sequenceRunConfig(config, sequenceModel, levelsOf(config));
  const message = (run: () => unknown): string => {
    try {
      run();
    } catch (error) {
      assert.equal((error as { exitCode?: number }).exitCode, 2);
      return (error as Error).message;
    }
    return "(no error)";
  };

  it("detects sequence_batching in the config, or in a model an ensemble runs (at any depth)", async () => {
    const configs: Record<string, Record<string, unknown>> = {
      stateful: { name: "stateful", sequence_batching: { direct: {} } },
      plain: { name: "plain" },
      inner: {
        platform: "ensemble",
        ensemble_scheduling: { step: [{ model_name: "stateful", model_version: "-1" }] },
      },
    };
    const asked: string[] = [];
    const client = {
      async modelConfig(model: string) {
        asked.push(model);
        return configs[model] as never;
      },
    };
    assert.equal(await isSequenceModel(client, configs["stateful"]!), true);
    assert.equal(await isSequenceModel(client, configs["plain"]!), false);
    assert.deepEqual(asked, []);
    const outer = {
      platform: "ensemble",
      ensemble_scheduling: { step: [{ model_name: "plain" }, { model_name: "inner", model_version: 1 }] },
    };
    assert.equal(await isSequenceModel(client, outer), true);
    assert.deepEqual(asked, ["plain", "inner", "stateful"]);
    const flat = { platform: "ensemble", ensemble_scheduling: { step: [{ model_name: "plain" }] } };
    assert.equal(await isSequenceModel(client, flat), false);
  });

  it("calls become asynchronous unless --sync was given", () => {
    assert.equal(check(concurrency("1:4"), true).async, true);
    assert.equal(check(concurrency("1:4", { sync: true }), true).async, false);
    assert.equal(check(concurrency("1:4"), false).async, false, "other models keep their default");
  });

  it("refuses -b > 1 and an open-ended asynchronous concurrency sweep, with perf_analyzer's messages", () => {
    assert.equal(
      message(() => check(concurrency("1:4", { batchSize: "2" }), true)),
      "can not specify batch size > 1 when using a sequence model",
    );
    assert.equal(SEQUENCE_BATCH_SIZE_ERROR, "can not specify batch size > 1 when using a sequence model");
    assert.equal(
      message(() => check(concurrency("1:0:2"), true)),
      "The 'end' concurrency can not be 0 for sequence models when using asynchronous API.",
    );
    assert.equal(
      SEQUENCE_OPEN_CONCURRENCY_ERROR,
      message(() => check(concurrency("1:0:2"), true)),
    );
    assert.equal(check(concurrency("1:0:2", { sync: true }), true).async, false, "--sync may sweep on");
    assert.equal(check(concurrency("1:4", { batchSize: "2" }), false).batchSize, 2);
  });

  it("refuses an id range smaller than the highest concurrency or the number of sequences (every model)", () => {
    assert.equal(
      message(() => check(concurrency("1:4", { sequenceIdRange: "1:4" }), true)),
      "sequence id range specified is smaller than the maximum possible concurrency, sequence id collision may occur.",
    );
    assert.equal(
      message(() => check(concurrency("4", { sequenceIdRange: "1:4" }), false)),
      SEQUENCE_ID_CONCURRENCY_ERROR,
      "perf_analyzer checks it whatever the model",
    );
    assert.equal(check(concurrency("1:4", { sequenceIdRange: "1:5" }), true).sequence.idRange, 4);
    const rate = (extra: Record<string, unknown>) =>
      resolveBenchConfig({ model: "acc", requestRateRange: "10", ...extra });
    assert.equal(
      message(() => check(rate({ sequenceIdRange: "10:12" }), true)),
      "sequence id range specified is smaller than the maximum possible number of sequences, sequence id collision may occur.",
    );
    assert.equal(
      SEQUENCE_ID_SEQUENCES_ERROR,
      message(() => check(rate({ sequenceIdRange: "10:12" }), false)),
    );
    assert.equal(check(rate({ sequenceIdRange: "10:12", numOfSequences: "2" }), true).sequence.idRange, 2);
    assert.match(
      message(() => check(rate({ workers: "3", numOfSequences: "2" }), true)),
      /^--workers 3: a sequence model in request-rate mode needs a sequence per worker/,
    );
  });
});
