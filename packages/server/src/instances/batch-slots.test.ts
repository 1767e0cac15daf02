/**
 * Batches through a real model-instance thread, on either side of the slots' bound: small numeric batches
 * cross in a slot, the others as messages, and a caller cannot tell which: the same outputs (values,
 * TypedArray classes, shapes), the same durations reported, the same errors, and outputs that stay as
 * they were when the slot is reused by the next batches.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { bundledModelFile } from "../testing/test-fixtures.js";
import { SLOT_BYTES } from "./batch-slots.js";
import type { InstanceRun, ModelInstance } from "./instance-types.js";
import { startWorkerInstance } from "./worker-instance.js";
import type { InstanceRunResult, ThreadTensor } from "./worker-protocol.js";

async function start(model: string): Promise<ModelInstance> {
  const init = {
    modelPath: bundledModelFile(model),
    instanceName: `${model}_0`,
    intraOpThreads: 1,
    interOpThreads: 1,
  };
  return (await startWorkerInstance({ init }, "cpu")).instance;
}

const simpleRun = (seed: number, extra: Partial<InstanceRun> = {}): InstanceRun => ({
  inputs: [
    {
      name: "INPUT0",
      ortType: "int32",
      dims: [1, 16],
      data: Int32Array.from({ length: 16 }, (_, i) => seed + i),
    },
    { name: "INPUT1", ortType: "int32", dims: [1, 16], data: new Int32Array(16).fill(3) },
  ],
  outputNames: ["OUTPUT0", "OUTPUT1"],
  transfer: [],
  ...extra,
});

/** OUTPUT0 (INPUT0 + INPUT1) and OUTPUT1 (INPUT0 - INPUT1) of simpleRun(seed). */
const simpleAnswer = (seed: number) => [
  Array.from({ length: 16 }, (_, i) => seed + i + 3),
  Array.from({ length: 16 }, (_, i) => seed + i - 3),
];

function assertSimple(result: InstanceRunResult, seed: number) {
  assert.deepEqual(
    result.outputs.map((o) => [o.name, o.ortType, o.dims, o.data.constructor]),
    [
      ["OUTPUT0", "int32", [1, 16], Int32Array],
      ["OUTPUT1", "int32", [1, 16], Int32Array],
    ],
  );
  assert.deepEqual(
    result.outputs.map((o) => [...(o.data as Int32Array)]),
    simpleAnswer(seed),
  );
}

function assertDurations(result: InstanceRunResult, waited: boolean) {
  for (const key of ["inputNs", "inferNs", "outputNs"] as const) {
    assert.ok(Number.isInteger(result[key]) && result[key] >= 0, `${key}: ${result[key]}`);
  }
  assert.ok(result.inferNs > 0, "the run took time");
  assert.equal("waitNs" in result, waited);
  if (waited) assert.ok(Number.isInteger(result.waitNs) && result.waitNs! >= 0);
}

describe("batches through an instance's slots and messages", { timeout: 60_000 }, () => {
  let simple: ModelInstance;
  let identity: ModelInstance;
  before(async () => {
    [simple, identity] = await Promise.all([start("simple"), start("identity_fp32")]);
  });
  after(async () => {
    await Promise.all([simple?.close(), identity?.close()]);
  });

  test("a small batch is answered with its outputs and durations; queue time only when it was queued", async () => {
    assertDurations(await simple.run(simpleRun(1)), false);
    const queued = await simple.run(simpleRun(2, { queuedAtMs: performance.timeOrigin + performance.now() }));
    assertSimple(queued, 2);
    assertDurations(queued, true);
  });

  test("outputs stay as they were after the slots are reused by later batches", async () => {
    const first = await simple.run(simpleRun(100));
    for (let seed = 0; seed < 6; seed++) assertSimple(await simple.run(simpleRun(seed * 1000)), seed * 1000);
    assertSimple(first, 100);
  });

  test("more batches at once than there are slots: every one answered, each its own", async () => {
    const seeds = [10, 20, 30, 40, 50];
    const results = await Promise.all(seeds.map((seed) => simple.run(simpleRun(seed))));
    for (const [i, result] of results.entries()) assertSimple(result, seeds[i]!);
  });

  test("around the bound: the slot, a result too big for it, a run too big for it, a transferred run", async () => {
    // A run of one rank-2 input and one output fits with SLOT_BYTES - 64 bytes of data; its result
    // (a longer head) does not, and comes back as a message.
    const fitting = (SLOT_BYTES - 64) / 4;
    for (const elements of [1, fitting - 2, fitting, fitting + 2, SLOT_BYTES / 4, SLOT_BYTES / 2]) {
      const data = Float32Array.from({ length: elements }, (_, i) => i * 0.5 - 7.25);
      const expected = [...data];
      const input: ThreadTensor = { name: "INPUT0", ortType: "float32", dims: [1, elements], data };
      const transfer = data.byteLength >= 64 * 1024 ? [data.buffer] : [];
      const result = await identity.run({ inputs: [input], outputNames: ["OUTPUT0"], transfer });
      const output = result.outputs[0]!;
      assert.deepEqual([output.name, output.ortType, output.dims], ["OUTPUT0", "float32", [1, elements]]);
      assert.ok(output.data instanceof Float32Array);
      assert.deepEqual([...output.data], expected, `${elements} elements`);
      assertDurations(result, false);
    }
  });

  test("a run the session refuses fails with onnxruntime's message, small or large", async () => {
    const wrongType = (elements: number) =>
      identity.run({
        inputs: [{ name: "INPUT0", ortType: "int32", dims: [1, elements], data: new Int32Array(elements) }],
        outputNames: ["OUTPUT0"],
        transfer: [],
      });
    const messageOf = (run: Promise<unknown>) =>
      run.then(
        () => assert.fail("the run was not refused"),
        (error: Error & { status?: string }) => {
          assert.equal(error.status, "INTERNAL");
          return error.message;
        },
      );
    const small = await messageOf(wrongType(4));
    const large = await messageOf(wrongType(SLOT_BYTES / 2));
    assert.match(small, /Unexpected input data type/);
    assert.equal(small, large);
  });
});
