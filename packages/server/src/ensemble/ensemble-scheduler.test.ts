/**
 * The ensemble scheduler's data flow with fake members (plain functions whose answers the test releases):
 * steps start when their inputs exist, independent ones together; tensors pass by reference; only the
 * steps the requested outputs need run; shapes fit between batching and non-batching sides; the ensemble
 * request is counted once in its statistics. Nothing waits on time: tests release answers and flush.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { InferenceRequest, Tensor } from "../core/types.js";
import {
  bundled,
  diamondConfig,
  diamondMembers,
  ensemble,
  flush,
  fp32,
  heldMembers,
  image,
  member,
  pipelineMembers,
  setup,
  step,
  times,
  watch,
} from "../testing/ensemble-fakes.js";
import type { FakeClock } from "../testing/fake-clock.js";
import type { InferMember } from "./ensemble-scheduler.js";

describe("ensemble scheduler data flow", () => {
  it("runs the bundled ensemble_pipeline's two steps, handing tensors on by reference, and counts it once", async () => {
    let clock: FakeClock | undefined;
    const seen: InferenceRequest[] = [];
    const made: Tensor["data"][] = [];
    const inferMember: InferMember = async (request, stats) => {
      seen.push(request);
      const input = request.inputs[0]!;
      const rows = input.shape[0]!;
      clock!.advanceUs(request.model === "resnet_like" ? 300 : 200);
      stats.requestSucceeded(0, 0, times(request.model === "resnet_like" ? 1000 : 100), clock!.epochMs());
      if (request.model === "resnet_like") {
        const scores = new Float32Array(rows * 1000);
        for (let r = 0; r < rows; r++) scores[r * 1000 + ((r * 7 + 3) % 1000)] = 1;
        made.push(scores);
        return {
          model: "resnet_like",
          version: "1",
          outputs: [{ name: "output", datatype: "FP32", shape: [rows, 1000], data: scores }],
        };
      }
      const scores = input.data as Float32Array;
      const labels = new BigInt64Array(rows);
      for (let r = 0; r < rows; r++) {
        const row = scores.subarray(r * 1000, (r + 1) * 1000);
        labels[r] = BigInt(row.indexOf(Math.max(...row)));
      }
      made.push(labels);
      return {
        model: "label_head",
        version: "1",
        outputs: [{ name: "label", datatype: "INT64", shape: [rows, 1], data: labels }],
      };
    };
    const members = pipelineMembers();
    const ctx = setup(bundled("ensemble_pipeline"), members, inferMember);
    clock = ctx.clock;
    const images = image(2);
    const response = await ctx.submit({ id: "req-1", inputs: [images] });

    assert.deepEqual(
      seen.map((r) => [r.model, r.version, r.id, r.inputs.map((t) => [t.name, t.shape]), r.outputs]),
      [
        ["resnet_like", undefined, "req-1", [["input", [2, 3, 224, 224]]], [{ name: "output" }]],
        ["label_head", undefined, "req-1", [["emb", [2, 1000]]], [{ name: "label" }]],
      ],
    );
    assert.equal(response.model, "ensemble_pipeline");
    assert.equal(response.version, "1");
    assert.equal(response.id, "req-1");
    assert.deepEqual(
      response.outputs.map((t) => [t.name, t.datatype, t.shape, [...(t.data as BigInt64Array)]]),
      [["LABEL", "INT64", [2, 1], [3n, 10n]]],
    );
    // By reference: the same data objects from the request through each step to the response.
    assert.equal(seen[0]!.inputs[0]!.data, images.data);
    assert.equal(seen[1]!.inputs[0]!.data, made[0]);
    assert.equal(response.outputs[0]!.data, made[1]);

    const stats = ctx.stats.statistics();
    assert.deepEqual(stats.inference_stats.success, { count: 1, ns: 500_000 });
    assert.deepEqual(stats.inference_stats.fail, { count: 0, ns: 0 });
    assert.deepEqual(stats.inference_stats.queue, { count: 1, ns: 0 });
    assert.deepEqual(stats.inference_stats.compute_input, { count: 1, ns: 1100 });
    assert.deepEqual(stats.inference_stats.compute_infer, { count: 1, ns: 11_000 });
    assert.deepEqual(stats.inference_stats.compute_output, { count: 1, ns: 2200 });
    assert.equal(stats.inference_count, 2);
    assert.equal(stats.execution_count, 1);
    assert.deepEqual(
      stats.batch_stats.map((b) => [b.batch_size, b.compute_infer]),
      [[2, { count: 1, ns: 11_000 }]],
    );
    assert.equal(stats.last_inference, clock.epochMs());
  });

  it("hands each step's output data object itself to the next step and to the response", async () => {
    const held = heldMembers();
    const ctx = setup(diamondConfig, diamondMembers, held.inferMember);
    const input = fp32("IN", [1, 2]);
    const result = watch(ctx.submit({ inputs: [input] }));
    await flush();
    const [left] = held.called("left");
    const [right] = held.called("right");
    assert.equal(left!.request.inputs[0]!.data, input.data);
    assert.equal(right!.request.inputs[0]!.data, input.data);
    const l = fp32("y", [10, 20]);
    const r = fp32("y", [30, 40]);
    left!.resolve([l]);
    right!.resolve([r]);
    await flush();
    const [join] = held.called("join");
    assert.deepEqual(
      join!.request.inputs.map((t) => t.name),
      ["a", "b"],
    );
    assert.equal(join!.request.inputs[0]!.data, l.data);
    assert.equal(join!.request.inputs[1]!.data, r.data);
    const sum = fp32("sum", [40, 60]);
    join!.resolve([sum]);
    await flush();
    assert.equal(result.value?.outputs[0]?.name, "OUT");
    assert.equal(result.value?.outputs[0]?.data, sum.data);
  });

  it("starts independent steps together and a joining step once both its inputs exist", async () => {
    const held = heldMembers();
    const ctx = setup(diamondConfig, diamondMembers, held.inferMember);
    const result = watch(ctx.submit({ inputs: [fp32("IN", [1, 2])] }));
    await flush();
    // Both branches are in flight at once; the join waits.
    assert.deepEqual(
      held.calls.map((c) => c.request.model),
      ["left", "right"],
    );
    held.called("right")[0]!.resolve([fp32("y", [3, 4])]);
    await flush();
    assert.deepEqual(
      held.calls.map((c) => c.request.model),
      ["left", "right"],
    );
    held.called("left")[0]!.resolve([fp32("y", [1, 2])]);
    await flush();
    assert.deepEqual(
      held.calls.map((c) => c.request.model),
      ["left", "right", "join"],
    );
    assert.equal(result.settled, false);
    held.called("join")[0]!.resolve([fp32("sum", [4, 6])]);
    await flush();
    assert.deepEqual(Array.from((result.value?.outputs[0]?.data ?? []) as Float32Array), [4, 6]);
  });

  it("runs only the steps the requested outputs need, and answers only those", async () => {
    const config = ensemble(
      "fork",
      ["OUT_L", "OUT_R"],
      [step("left", { x: "IN" }, { y: "OUT_L" }), step("right", { x: "IN" }, { y: "OUT_R" })],
    );
    const members = new Map([
      ["left", member("left", ["x"], ["y"])],
      ["right", member("right", ["x"], ["y"])],
    ]);
    const held = heldMembers();
    const ctx = setup(config, members, held.inferMember);
    const one = watch(ctx.submit({ inputs: [fp32("IN", [1, 2])], outputs: [{ name: "OUT_R" }] }));
    await flush();
    assert.deepEqual(
      held.calls.map((c) => c.request.model),
      ["right"],
    );
    held.calls[0]!.resolve([fp32("y", [5, 6])]);
    await flush();
    assert.deepEqual(
      one.value?.outputs.map((t) => t.name),
      ["OUT_R"],
    );

    const all = watch(ctx.submit({ inputs: [fp32("IN", [1, 2])] }));
    await flush();
    assert.deepEqual(
      held.calls.slice(1).map((c) => c.request.model),
      ["left", "right"],
    );
    held.calls[1]!.resolve([fp32("y", [1, 1])]);
    held.calls[2]!.resolve([fp32("y", [2, 2])]);
    await flush();
    assert.deepEqual(
      all.value?.outputs.map((t) => t.name),
      ["OUT_L", "OUT_R"],
    );
  });

  it("forwards id, priority, timeout, parameters and the step's model_version to members", async () => {
    const config = ensemble("pinned", ["OUT"], [step("left", { x: "IN" }, { y: "OUT" }, 3)]);
    const held = heldMembers();
    const infos = new Map([["left", member("left", ["x"], ["y"])]]);
    const ctx = setup(config, infos, held.inferMember, ["1", "3"]);
    const result = watch(
      ctx.submit({
        id: "r",
        priority: 2,
        timeoutUs: 5000,
        parameters: { tag: "x" },
        inputs: [fp32("IN", [1, 2])],
      }),
    );
    await flush();
    const { request } = held.calls[0]!;
    assert.deepEqual(
      [request.model, request.version, request.id, request.priority, request.timeoutUs, request.parameters],
      ["left", "3", "r", 2, 5000, { tag: "x" }],
    );
    held.calls[0]!.resolve([fp32("y", [1, 2])]);
    await flush();
    assert.equal(result.value?.id, "r");
  });

  it("fits shapes between a batching ensemble and a non-batching member, as Triton does", async () => {
    const config = ensemble("flat", ["OUT"], [step("plain", { x: "IN" }, { y: "OUT" })]);
    const members = new Map([["plain", member("plain", ["x"], ["y"], 0)]]);
    const held = heldMembers();
    const ctx = setup(config, members, held.inferMember);
    const result = watch(ctx.submit({ inputs: [fp32("IN", [1, 2], [1, 2])] }));
    await flush();
    // A batch-1 tensor loses its batch dimension for the member, and its output gets one back.
    assert.deepEqual(held.calls[0]!.request.inputs[0]!.shape, [2]);
    held.calls[0]!.resolve([fp32("y", [7, 8], [2])]);
    await flush();
    assert.deepEqual(result.value?.outputs[0]?.shape, [1, 2]);
  });
});
