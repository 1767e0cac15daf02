/**
 * decideBatch alone: exact decisions (which entries, what batch size, why, how long to wait) for queues
 * written out by hand, nanoseconds in, microseconds out.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type BatchableEntry, type BatcherSettings, decideBatch } from "./dynamic-batcher.js";

interface Entry extends BatchableEntry {
  readonly name: string;
}

/** `name:batch@enqueueUs/shape`, e.g. "a:2@10/x"; batch 1, time 0 and shape "s" when left out. */
function queue(...specs: string[]): Entry[] {
  return specs.map((spec) => {
    const [, name, batch, at, shape] = /^(\w+)(?::(\d+))?(?:@(\d+))?(?:\/(\w+))?$/.exec(spec)!;
    return {
      name: name!,
      batchSize: Number(batch ?? 1),
      enqueueNs: Number(at ?? 0) * 1000,
      timeoutNs: 0,
      isCancelled: () => false,
      logPrefix: "",
      requestTimeoutUs: 0,
      shapeKey: shape ?? "s",
    };
  });
}

const settings = (preferred: number[], maxQueueDelayUs = 100, maxBatchSize = 8): BatcherSettings => ({
  maxBatchSize,
  preferredBatchSizes: preferred,
  maxQueueDelayUs,
});

/** The decision with entry names instead of entries. */
function decide(entries: Entry[], s: BatcherSettings, nowUs: number, closestTimeoutUs = 0) {
  const d = decideBatch(entries, s, nowUs * 1000, closestTimeoutUs * 1000);
  return d.kind === "send" ? { ...d, entries: d.entries.map((e) => e.name) } : d;
}

describe("decideBatch", () => {
  it("an empty queue: nothing to do", () => {
    assert.deepEqual(decide([], settings([4]), 0), { kind: "empty" });
  });

  it("sends the largest preferred size reached at once, leaving the rest queued", () => {
    assert.deepEqual(decide(queue("a", "b", "c", "d", "e"), settings([2, 4]), 0), {
      kind: "send",
      entries: ["a", "b", "c", "d"],
      batchSize: 4,
      reason: "preferred batch size 4 reached",
    });
  });

  it("below every preferred size: waits out the oldest request's delay, to the microsecond", () => {
    assert.deepEqual(decide(queue("a@0", "b@30"), settings([4, 8]), 40), {
      kind: "wait",
      waitUs: 60,
      reason: "batch 2 below preferred sizes [4,8], oldest waited 40 us",
    });
    // Part of a microsecond still to wait is a whole one.
    assert.equal((decideBatch(queue("a"), settings([4]), 500) as { waitUs: number }).waitUs, 100);
  });

  it("the delay over (at it, not after): sends what is queued", () => {
    assert.deepEqual(decide(queue("a@0", "b@30"), settings([4, 8]), 100), {
      kind: "send",
      entries: ["a", "b"],
      batchSize: 2,
      reason: "oldest request waited 100 us >= max_queue_delay 100 us",
    });
    assert.equal(decide(queue("a@0", "b@30"), settings([4, 8]), 99).kind, "wait");
  });

  it("the oldest request is the one that arrived first, wherever it sits in the queue", () => {
    assert.deepEqual(decide(queue("late@50", "early@10"), settings([4]), 60), {
      kind: "wait",
      waitUs: 50,
      reason: "batch 2 below preferred sizes [4], oldest waited 50 us",
    });
  });

  it("never splits a request: the batch stops before the request that would pass the largest preferred size", () => {
    assert.deepEqual(decide(queue("a:3", "b:6"), settings([8]), 0), {
      kind: "send",
      entries: ["a"],
      batchSize: 3,
      reason: "preferred batch size 3 reached",
    });
  });

  it("a request with other input shapes ends the batch", () => {
    assert.deepEqual(decide(queue("a/x", "b/x", "c/y"), settings([4]), 0), {
      kind: "send",
      entries: ["a", "b"],
      batchSize: 2,
      reason: "next request has different input shapes",
    });
  });

  it("past max_batch_size with no preferred size reached (largest preferred above the maximum)", () => {
    assert.deepEqual(decide(queue("a:3", "b:3", "c:3"), settings([16], 100, 8), 0), {
      kind: "send",
      entries: ["a", "b"],
      batchSize: 6,
      reason: "next request (batch 3) would exceed max_batch_size 8",
    });
  });

  it("the delay over with the largest preferred size reached: sends it all, so named", () => {
    assert.deepEqual(decide(queue("a:2@0"), settings([2], 100), 150), {
      kind: "send",
      entries: ["a"],
      batchSize: 2,
      reason: "batch 2 reached the largest preferred size",
    });
  });

  it("the delay over with a preferred size inside: takes everything, not the preferred part", () => {
    assert.deepEqual(decide(queue("a", "b", "c"), settings([2, 8]), 100), {
      kind: "send",
      entries: ["a", "b", "c"],
      batchSize: 3,
      reason: "oldest request waited 100 us >= max_queue_delay 100 us",
    });
  });

  it("no max_queue_delay: sends what is queued at once", () => {
    assert.deepEqual(decide(queue("a"), settings([4], 0), 0), {
      kind: "send",
      entries: ["a"],
      batchSize: 1,
      reason: "no max_queue_delay_microseconds: send what is queued",
    });
  });

  it("a request without a batch dimension (batch 0) counts as one row", () => {
    assert.deepEqual(decide(queue("a:0", "b:0"), settings([2]), 0), {
      kind: "send",
      entries: ["a", "b"],
      batchSize: 2,
      reason: "preferred batch size 2 reached",
    });
  });

  it("wakes for the closest queue timeout when it comes before the delay; at once when it has passed", () => {
    const waitUs = (nowUs: number, timeoutUs: number) =>
      (decide(queue("a@0"), settings([4], 100), nowUs, timeoutUs) as { waitUs: number }).waitUs;
    assert.equal(waitUs(10, 30), 20);
    assert.equal(waitUs(10, 500), 90);
    assert.equal(waitUs(30, 30), 1);
    assert.equal(waitUs(31, 30), 1);
  });
});
