/**
 * An instance of a model without dynamic batching holds two batches at once (instance-pool `depth`): the
 * second waits in the instance's thread while the first runs. When the first kills the thread, the second
 * never started: it must run again on the replacement instead of failing with a death it did not cause.
 * No timing: both requests are queued in the same tick, so both batches are sent before the worker reads
 * either, and the worker exits on the first. Tensors of 64 KiB and more cross by transfer, which empties
 * the sender's buffer: the waiting batch must keep its own copy to run again.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { silentLogger } from "../core/logger.js";
import type { InferenceResponse } from "../core/types.js";
import { createInferenceCore, type InferenceCoreHandle } from "../lifecycle/create-inference-core.js";
import { bundledConfig, createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";

const ONE_INSTANCE = "\ninstance_group [ { count: 1, kind: KIND_CPU } ]\n";

const request = (seed: number, crash: boolean) => ({
  model: "simple",
  inputs: [
    { name: "INPUT0", datatype: "INT32" as const, shape: [1, 16], data: new Int32Array(16).fill(seed) },
    { name: "INPUT1", datatype: "INT32" as const, shape: [1, 16], data: new Int32Array(16).fill(1) },
  ],
  ...(crash ? { parameters: { test_crash: true } } : {}),
});

/** OUTPUT0 (INPUT0 + INPUT1) of an answer. */
function sumOf(response: InferenceResponse): number[] {
  const output = response.outputs.find((o) => o.name === "OUTPUT0");
  assert.ok(output, "no OUTPUT0 in the answer");
  return [...(output.data as Int32Array)];
}

/** 32,768 FP32 values (128 KiB, past the 64 KiB from which tensors are transferred) filled with `value`. */
const largeRequest = (value: number, crash: boolean) => ({
  model: "identity_fp32",
  inputs: [
    {
      name: "INPUT0",
      datatype: "FP32" as const,
      shape: [1, 32768],
      data: new Float32Array(32768).fill(value),
    },
  ],
  ...(crash ? { parameters: { test_crash: true } } : {}),
});

describe("a batch waiting behind one that kills its instance", { timeout: 60_000 }, () => {
  let repo: FixtureRepository;
  let core: InferenceCoreHandle;
  before(async () => {
    repo = createFixtureRepository({
      simple: { config: bundledConfig("simple") + ONE_INSTANCE },
      identity_fp32: { config: bundledConfig("identity_fp32") + ONE_INSTANCE },
    });
    core = await createInferenceCore({
      modelRepository: repo.dir,
      logger: silentLogger,
      crashWorkerParameter: "test_crash",
    });
  });
  after(async () => {
    await core?.close();
    repo?.remove();
  });

  test("runs again on the replacement and is answered; only the crashing request fails", async () => {
    const crash = core.infer(request(7, true));
    const innocent = core.infer(request(5, false));
    await assert.rejects(crash, { status: "INTERNAL", message: /died while running the request/ });
    assert.deepEqual(sumOf(await innocent), new Array(16).fill(6));
    const stats = core.modelStatistics("simple")[0]!;
    assert.equal(stats.inference_stats.success.count, 1);
    assert.equal(stats.inference_stats.fail.count, 1);
    // The replacement serves the next request as any instance would.
    assert.deepEqual(sumOf(await core.infer(request(2, false))), new Array(16).fill(3));
  });

  test("with tensors large enough to be transferred, runs again on the replacement with its own data", async () => {
    const crash = core.infer(largeRequest(7, true));
    const innocent = core.infer(largeRequest(5, false));
    await assert.rejects(crash, { status: "INTERNAL", message: /died while running the request/ });
    const answer = await innocent;
    const output = answer.outputs.find((o) => o.name === "OUTPUT0");
    assert.ok(output, "no OUTPUT0 in the answer");
    const data = output.data as Float32Array;
    assert.equal(data.length, 32768);
    assert.ok(
      data.every((v) => v === 5),
      "the re-run batch answered with its own values",
    );
  });
});
