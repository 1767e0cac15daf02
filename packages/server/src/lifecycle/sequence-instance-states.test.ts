/**
 * A sequence model's states live in the instance that runs its sequences (the real worker threads here):
 * with two instances, each batcher's batches run on its own instance, so interleaved sequences never see
 * each other's state; when an instance is killed, the sequences whose states it held fail their next
 * request with the loss (until they START again), the other instance's sequences go on, and new sequences
 * are served by the replacement. No timing: each step waits for the previous answer.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createMulberry32 } from "@tbench/model-builder/prng";
import type { InferenceResponse } from "../core/types.js";
import {
  bundledConfig,
  createFixtureRepository,
  createRecordingLogger,
  type FixtureRepository,
} from "../testing/test-fixtures.js";
import { createInferenceCore, type InferenceCoreHandle } from "./create-inference-core.js";

/** The accumulator on two instances of two slots each. */
const TWO_INSTANCES = bundledConfig("sequence_accumulator")
  .replace("max_batch_size: 8", "max_batch_size: 2")
  .replace("count: 1", "count: 2");

const step = (value: number, id: bigint, start: boolean, end: boolean, crash = false) => ({
  model: "sequence_accumulator",
  inputs: [{ name: "INPUT", datatype: "INT32" as const, shape: [1, 1], data: new Int32Array([value]) }],
  sequence: { id, start, end },
  ...(crash ? { parameters: { test_crash: true } } : {}),
});

const sumOf = (response: InferenceResponse) => (response.outputs[0]!.data as Int32Array)[0]!;

describe("sequence states in the instances that run them", { timeout: 120_000 }, () => {
  let repo: FixtureRepository;
  let core: InferenceCoreHandle;
  before(async () => {
    repo = createFixtureRepository({ sequence_accumulator: { config: TWO_INSTANCES } });
    core = await createInferenceCore({
      modelRepository: repo.dir,
      logger: createRecordingLogger(),
      crashWorkerParameter: "test_crash",
    });
  });
  after(async () => {
    await core?.close();
    repo?.remove();
  });

  test("two instances: 12 interleaved sequences each get their own running sum", async () => {
    const random = createMulberry32(29);
    const sequences = Array.from({ length: 12 }, (_, i) => ({
      id: BigInt(100 + i),
      values: Array.from({ length: 2 + Math.floor(random() * 8) }, () => Math.floor(random() * 200) - 100),
    }));
    const results = await Promise.all(
      sequences.map(async ({ id, values }) => {
        const seen: number[] = [];
        for (const [i, value] of values.entries()) {
          seen.push(sumOf(await core.infer(step(value, id, i === 0, i === values.length - 1))));
        }
        return seen;
      }),
    );
    sequences.forEach(({ id, values }, i) => {
      let running = 0;
      assert.deepEqual(
        results[i],
        values.map((v) => (running += v)),
        `sequence ${id}`,
      );
    });
  });

  test("a killed instance: its sequences fail their next request with the loss, the other's go on", async () => {
    // One after the other, so slots fill lowest index first across instances: 1 on instance 0, 2 on 1.
    assert.equal(sumOf(await core.infer(step(1, 1n, true, false))), 1);
    assert.equal(sumOf(await core.infer(step(2, 2n, true, false))), 2);
    await assert.rejects(core.infer(step(5, 1n, false, false, true)), {
      status: "INTERNAL",
      message:
        "model instance 'sequence_accumulator_0_0' died while running the request: worker exited with code 70",
    });
    const lost = {
      status: "INTERNAL",
      message:
        "inference request for sequence 1 to model 'sequence_accumulator' cannot continue: its state was lost " +
        "when model instance 'sequence_accumulator_0_0' died (worker exited with code 70); start the " +
        "sequence again with the START flag",
    };
    await assert.rejects(core.infer(step(5, 1n, false, false)), lost);
    assert.equal(sumOf(await core.infer(step(20, 2n, false, false))), 22, "instance 1 kept its state");
    // New sequences are served, on the replacement too (sequence 3 takes slot 0 of instance 0).
    assert.equal(sumOf(await core.infer(step(7, 3n, true, false))), 7);
    assert.equal(sumOf(await core.infer(step(8, 3n, false, true))), 15);
    assert.equal(sumOf(await core.infer(step(4, 1n, true, false))), 4, "START begins it again");
    assert.equal(sumOf(await core.infer(step(6, 1n, false, true))), 10);
    assert.equal(sumOf(await core.infer(step(100, 2n, false, true))), 122);
  });
});
