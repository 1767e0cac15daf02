/**
 * The ensemble scheduler when things go wrong, with fake members: a member failure (Triton's message and
 * status, counted once as OTHER, answered only after the steps still running finish), an abort, and close.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServerError } from "../core/server-error.js";
import {
  bundled,
  diamondConfig,
  diamondMembers,
  flush,
  fp32,
  heldMembers,
  image,
  pipelineMembers,
  setup,
  watch,
} from "../testing/ensemble-fakes.js";

describe("ensemble scheduler failures", () => {
  it("fails with the member's status and Triton's 'in ensemble' message, counted once as OTHER", async () => {
    const held = heldMembers();
    const members = pipelineMembers();
    const ctx = setup(bundled("ensemble_pipeline"), members, held.inferMember);
    const result = watch(ctx.submit({ id: "7", inputs: [image()] }));
    await flush();
    held
      .called("resnet_like")[0]!
      .resolve([{ name: "output", datatype: "FP32", shape: [1, 1000], data: new Float32Array(1000) }]);
    await flush();
    held.called("label_head")[0]!.reject(new ServerError("UNAVAILABLE", "Exceeds maximum queue size"));
    await flush();
    assert.ok(result.error instanceof ServerError);
    assert.equal(result.error.status, "UNAVAILABLE");
    assert.equal(result.error.message, "in ensemble 'ensemble_pipeline', Exceeds maximum queue size");
    const stats = ctx.stats.statistics();
    assert.equal(stats.inference_stats.fail.count, 1);
    assert.equal(stats.inference_stats.success.count, 0);
    assert.equal(stats.execution_count, 0);
    assert.deepEqual(ctx.stats.metrics().failuresByReason, {
      REJECTED: 0,
      CANCELED: 0,
      BACKEND: 0,
      OTHER: 1,
    });
  });

  it("after a step fails, starts nothing more and answers once the steps still running finish", async () => {
    const held = heldMembers();
    const ctx = setup(diamondConfig, diamondMembers, held.inferMember);
    const result = watch(ctx.submit({ inputs: [fp32("IN", [1, 2])] }));
    await flush();
    held.called("left")[0]!.reject(new Error("worker exploded"));
    await flush();
    assert.equal(result.settled, false);
    assert.equal(ctx.scheduler.inFlight(), 1);
    held.called("right")[0]!.resolve([fp32("y", [3, 4])]);
    await flush();
    assert.ok(result.error instanceof ServerError);
    assert.equal(result.error.status, "INTERNAL");
    assert.equal(result.error.message, "in ensemble 'diamond', worker exploded");
    assert.equal(held.called("join").length, 0);
    assert.equal(ctx.scheduler.inFlight(), 0);
  });

  it("honours an abort: no member runs for an aborted request, none starts after an abort", async () => {
    const held = heldMembers();
    const members = pipelineMembers();
    const ctx = setup(bundled("ensemble_pipeline"), members, held.inferMember);
    const early = new AbortController();
    early.abort();
    await assert.rejects(ctx.submit({ id: "9", inputs: [image()], signal: early.signal }), {
      status: "CANCELLED",
      message: "in ensemble 'ensemble_pipeline', [request id: 9] request was cancelled",
    });
    assert.equal(held.calls.length, 0);

    const late = new AbortController();
    const result = watch(ctx.submit({ id: "10", inputs: [image()], signal: late.signal }));
    await flush();
    const [resnet] = held.called("resnet_like");
    assert.equal(resnet!.request.signal, late.signal); // the member's scheduler drops it if still queued
    late.abort();
    resnet!.resolve([{ name: "output", datatype: "FP32", shape: [1, 1000], data: new Float32Array(1000) }]);
    await flush();
    assert.equal(held.called("label_head").length, 0);
    assert.ok(result.error instanceof ServerError);
    assert.equal(result.error.status, "CANCELLED");
    assert.equal(
      result.error.message,
      "in ensemble 'ensemble_pipeline', [request id: 10] request was cancelled",
    );
    assert.equal(ctx.stats.statistics().inference_stats.fail.count, 2);
  });

  it("close: refuses new requests and resolves once the running ones are answered, idempotent", async () => {
    const held = heldMembers();
    const ctx = setup(diamondConfig, diamondMembers, held.inferMember);
    const running = watch(ctx.submit({ id: "a", inputs: [fp32("IN", [1, 2])] }));
    await flush();
    const drained = watch(ctx.scheduler.close());
    const again = watch(ctx.scheduler.close());
    await assert.rejects(ctx.submit({ id: "b", inputs: [fp32("IN", [1, 2])] }), {
      status: "UNAVAILABLE",
      message:
        "[request id: b] Server is stopping, scheduler for model has stopped accepting new inference requests",
    });
    await flush();
    assert.equal(drained.settled, false);
    for (const call of held.calls) call.resolve([fp32("y", [1, 2])]);
    await flush();
    held.called("join")[0]!.resolve([fp32("sum", [2, 4])]);
    await flush();
    assert.equal(running.settled, true);
    assert.equal(drained.settled, true);
    assert.equal(again.settled, true);
  });
});
