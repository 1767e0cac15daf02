/**
 * The priority queue alone, with exact times in nanoseconds: levels, sizes, timeouts (strictly after the
 * deadline, as Triton's scheduler_utils.cc), REJECT and DELAY, cancellation and removal.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServerError } from "../core/server-error.js";
import { queuePolicy } from "../testing/queue-policy.js";
import { PriorityQueue, type QueueEntry } from "./priority-queue.js";

const policy = queuePolicy;

interface Entry extends QueueEntry {
  readonly name: string;
  cancelled: boolean;
}

function entry(name: string, options: { enqueueNs?: number; requestTimeoutUs?: number } = {}): Entry {
  return {
    name,
    batchSize: 1,
    enqueueNs: options.enqueueNs ?? 0,
    timeoutNs: 0,
    cancelled: false,
    isCancelled() {
      return this.cancelled;
    },
    logPrefix: `[request id: ${name}] `,
    requestTimeoutUs: options.requestTimeoutUs ?? 0,
  };
}

const names = (entries: Iterable<Entry>) => [...entries].map((e) => e.name);

describe("PriorityQueue", () => {
  it("yields level 1 before level 2 before level 3, each in arrival order", () => {
    const queue = new PriorityQueue<Entry>(policy());
    queue.enqueue(3, entry("c1"));
    queue.enqueue(1, entry("a1"));
    queue.enqueue(2, entry("b1"));
    queue.enqueue(1, entry("a2"));
    queue.enqueue(3, entry("c2"));
    assert.deepEqual(names(queue.ordered()), ["a1", "a2", "b1", "c1", "c2"]);
    assert.equal(queue.size(), 5);
  });

  it("a queue timeout fires strictly after its deadline, not at it", () => {
    const queue = new PriorityQueue<Entry>(policy({ defaultTimeoutUs: 50 }));
    const e = entry("r", { enqueueNs: 1_000 });
    queue.enqueue(0, e);
    assert.equal(e.timeoutNs, 51_000);
    assert.equal(queue.closestTimeoutNs(), 51_000);
    assert.deepEqual(queue.applyPolicies(51_000), { rejected: [], cancelled: [] });
    assert.equal(queue.size(), 1);
    assert.deepEqual(names(queue.applyPolicies(51_001).rejected), ["r"]);
    assert.equal(queue.size(), 0);
    assert.equal(queue.closestTimeoutNs(), 0);
  });

  it("no default timeout means no deadline, whatever the request asks", () => {
    const queue = new PriorityQueue<Entry>(policy({ allowTimeoutOverride: true }));
    const e = entry("r", { requestTimeoutUs: 10 });
    queue.enqueue(0, e);
    assert.equal(e.timeoutNs, 0);
    assert.deepEqual(queue.applyPolicies(Number.MAX_SAFE_INTEGER).rejected, []);
  });

  it("a request may shorten the timeout only when the policy allows it, and never lengthen it", () => {
    const allow = new PriorityQueue<Entry>(policy({ defaultTimeoutUs: 100, allowTimeoutOverride: true }));
    const shorter = entry("s", { requestTimeoutUs: 30 });
    const longer = entry("l", { requestTimeoutUs: 300 });
    const equal = entry("e", { requestTimeoutUs: 100 });
    allow.enqueue(0, shorter);
    allow.enqueue(0, longer);
    allow.enqueue(0, equal);
    assert.deepEqual([shorter.timeoutNs, longer.timeoutNs, equal.timeoutNs], [30_000, 100_000, 100_000]);
    assert.equal(allow.closestTimeoutNs(), 30_000);
    const deny = new PriorityQueue<Entry>(policy({ defaultTimeoutUs: 100 }));
    const asked = entry("d", { requestTimeoutUs: 30 });
    deny.enqueue(0, asked);
    assert.equal(asked.timeoutNs, 100_000);
  });

  it("DELAY moves an expired entry behind the unexpired ones of its level, still queued", () => {
    const queue = new PriorityQueue<Entry>(policy({ defaultTimeoutUs: 10, timeoutAction: "DELAY" }));
    queue.enqueue(1, entry("old"));
    queue.enqueue(1, entry("new", { enqueueNs: 20_000 }));
    queue.enqueue(2, entry("low", { enqueueNs: 20_000 }));
    const outcome = queue.applyPolicies(15_000);
    assert.deepEqual(outcome, { rejected: [], cancelled: [] });
    assert.deepEqual(names(queue.ordered()), ["new", "old", "low"]);
    assert.equal(queue.size(), 3);
    // A delayed entry has no deadline left to wait for.
    assert.equal(queue.closestTimeoutNs(), 30_000);
  });

  it("refuses an entry beyond max_queue_size of its own level, delayed entries counted", () => {
    const queue = new PriorityQueue<Entry>(
      policy({ maxQueueSize: 5 }),
      new Map([[1, policy({ maxQueueSize: 2, defaultTimeoutUs: 1, timeoutAction: "DELAY" })]]),
    );
    queue.enqueue(1, entry("a"));
    queue.applyPolicies(2_000); // "a" is delayed, still counts
    queue.enqueue(1, entry("b", { enqueueNs: 2_000 }));
    assert.throws(
      () => queue.enqueue(1, entry("c")),
      (error: unknown) =>
        error instanceof ServerError &&
        error.status === "UNAVAILABLE" &&
        error.message === "[request id: c] Exceeds maximum queue size",
    );
    queue.enqueue(2, entry("other level"));
    assert.equal(queue.size(), 3);
  });

  it("drops cancelled entries, queued or delayed, and reports them apart from rejected ones", () => {
    const queue = new PriorityQueue<Entry>(policy({ defaultTimeoutUs: 10, timeoutAction: "DELAY" }));
    const delayed = entry("delayed");
    const queued = entry("queued", { enqueueNs: 100_000 });
    queue.enqueue(0, delayed);
    queue.enqueue(0, queued);
    queue.applyPolicies(11_000);
    delayed.cancelled = true;
    queued.cancelled = true;
    const outcome = queue.applyPolicies(11_000);
    assert.deepEqual(names(outcome.cancelled).sort(), ["delayed", "queued"]);
    assert.deepEqual(outcome.rejected, []);
    assert.equal(queue.size(), 0);
    assert.deepEqual(names(queue.ordered()), []);
  });

  it("remove takes out exactly the entries of a sent batch, queued or delayed", () => {
    const queue = new PriorityQueue<Entry>(policy({ defaultTimeoutUs: 10, timeoutAction: "DELAY" }));
    const a = entry("a");
    const b = entry("b", { enqueueNs: 100_000 });
    const c = entry("c", { enqueueNs: 100_000 });
    queue.enqueue(0, a);
    queue.enqueue(0, b);
    queue.enqueue(0, c);
    queue.applyPolicies(11_000);
    queue.remove(new Set([a, c]));
    assert.deepEqual(names(queue.ordered()), ["b"]);
    assert.equal(queue.size(), 1);
  });

  it("a request that sets no timeout keeps the default, even where it may override it", () => {
    const queue = new PriorityQueue<Entry>(policy({ defaultTimeoutUs: 100, allowTimeoutOverride: true }));
    const e = entry("r");
    queue.enqueue(0, e);
    assert.equal(e.timeoutNs, 100_000);
  });

  it("the closest deadline is the earliest wherever it is queued; a level without timeouts adds none", () => {
    const queue = new PriorityQueue<Entry>(
      policy(),
      new Map([[1, policy({ defaultTimeoutUs: 100, allowTimeoutOverride: true })]]),
    );
    queue.enqueue(1, entry("late"));
    queue.enqueue(1, entry("early", { requestTimeoutUs: 30 }));
    queue.enqueue(2, entry("never"));
    assert.equal(queue.closestTimeoutNs(), 30_000);
  });
});
