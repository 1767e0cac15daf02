import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createConcurrencyLoad } from "./concurrency-load.js";
import type { RequestSender } from "./request-sender.js";
import { createRequestTicket } from "./request-ticket.js";
import { createWindowRecorder } from "./window-recorder.js";

/** A sender whose requests stay in flight until the test finishes them by request number. */
function createHandSender() {
  const pending = new Map<number, { resolve(): void; reject(error: Error): void }>();
  let peak = 0;
  const sent: number[] = [];
  const sender: RequestSender = {
    send(index) {
      sent.push(index);
      return new Promise<void>((resolve, reject) => {
        pending.set(index, { resolve, reject });
        peak = Math.max(peak, pending.size);
      });
    },
    async close() {},
  };
  return {
    sender,
    sent,
    /** Requests the server would see in flight right now. */
    get inFlight() {
      return pending.size;
    },
    /** The most requests in flight right after a send, over the sends since the last call (0: none). */
    takePeak() {
      const value = peak;
      peak = 0;
      return value;
    },
    /** Completes request `index` (with an error when `fail`), then lets the load react. */
    async finish(index: number, fail = false): Promise<void> {
      const request = pending.get(index);
      assert.ok(
        request !== undefined,
        `request ${index} is not in flight (in flight: ${[...pending.keys()]})`,
      );
      pending.delete(index);
      if (fail) request.reject(Object.assign(new Error("injected"), { code: "UNAVAILABLE" }));
      else request.resolve();
      await settle();
    },
  };
}

/** Runs the promise callbacks queued so far (one turn of the event loop; no time passes on purpose). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup(budget = Number.POSITIVE_INFINITY) {
  const hand = createHandSender();
  const recorder = createWindowRecorder({ keepRequests: false, trackUncorrected: false });
  const tickets = createRequestTicket();
  tickets.setBudget(budget);
  const load = createConcurrencyLoad({ sender: hand.sender, recorder, tickets });
  return { hand, recorder, tickets, load };
}

describe("concurrency load: the in-flight count at every step", () => {
  it("shrink while a request is stalled, then grow: never more than the target in flight", async () => {
    const { hand, load } = setup();
    load.setConcurrency(2);
    await settle();
    assert.deepEqual([hand.inFlight, load.inFlight, hand.takePeak()], [2, 2, 2]);
    assert.deepEqual(hand.sent, [0, 1]);

    // Shrink to 1 with both requests still out: nothing is cancelled, nothing new is sent.
    load.setConcurrency(1);
    await settle();
    assert.deepEqual([hand.inFlight, load.inFlight], [2, 2]);

    // Request 0 completes; request 1 (stalled) is still out, which is the target: no new send.
    await hand.finish(0);
    assert.deepEqual([hand.inFlight, load.inFlight, hand.takePeak()], [1, 1, 0]);
    assert.deepEqual(hand.sent, [0, 1]);

    // Grow back to 2 while request 1 is still stalled: one new send, 2 in flight (3 before the fix).
    load.setConcurrency(2);
    await settle();
    assert.deepEqual([hand.inFlight, load.inFlight, hand.takePeak()], [2, 2, 2]);
    assert.deepEqual(hand.sent, [0, 1, 2]);

    // Each completion is replaced by exactly one send, the stalled request included.
    await hand.finish(2);
    assert.deepEqual([hand.inFlight, hand.takePeak()], [2, 2]);
    await hand.finish(1);
    assert.deepEqual([hand.inFlight, hand.takePeak()], [2, 2]);
    assert.deepEqual(hand.sent, [0, 1, 2, 3, 4]);

    const stopped = load.stop();
    await hand.finish(3);
    await hand.finish(4);
    await stopped;
    assert.deepEqual([hand.inFlight, load.inFlight], [0, 0]);
    assert.deepEqual(hand.sent, [0, 1, 2, 3, 4]);
  });

  it("shrink by several: the extra requests drain one completion at a time", async () => {
    const { hand, load } = setup();
    load.setConcurrency(4);
    await settle();
    assert.equal(hand.inFlight, 4);
    load.setConcurrency(1);
    const steps: number[] = [];
    for (const index of [0, 1, 2]) {
      await hand.finish(index);
      steps.push(hand.inFlight);
    }
    assert.deepEqual(steps, [3, 2, 1]);
    await hand.finish(3);
    assert.deepEqual([hand.inFlight, hand.takePeak()], [1, 4]); // 4: the first sends, none since
    assert.deepEqual(hand.sent, [0, 1, 2, 3, 4]);

    // Shrink to 0 then grow to 3 while request 4 is stalled: 3 in flight, not 4.
    load.setConcurrency(0);
    load.setConcurrency(3);
    await settle();
    assert.deepEqual([hand.inFlight, hand.takePeak()], [3, 3]);
    assert.deepEqual(hand.sent, [0, 1, 2, 3, 4, 5, 6]);
  });

  it("grow, shrink, grow within one tick: sends only up to the final target", async () => {
    const { hand, load } = setup();
    load.setConcurrency(1);
    load.setConcurrency(3);
    load.setConcurrency(2);
    load.setConcurrency(3);
    await settle();
    assert.deepEqual([hand.inFlight, hand.takePeak()], [3, 3]);
  });

  it("a failed request frees its slot like a successful one and is counted", async () => {
    const { hand, recorder, load } = setup();
    load.setConcurrency(2);
    await hand.finish(0, true);
    assert.deepEqual([hand.inFlight, hand.takePeak()], [2, 2]);
    await hand.finish(1);
    const part = recorder.swap();
    assert.equal(part.errorCount, 1);
    assert.equal(part.successCount, 1);
    assert.deepEqual(part.errorsByKind, { UNAVAILABLE: 1 });
  });

  it("stops sending when the request budget is spent, and resumes under a new budget", async () => {
    const { hand, tickets, load } = setup(3);
    load.setConcurrency(2);
    await hand.finish(0);
    await hand.finish(1);
    assert.deepEqual(hand.sent, [0, 1, 2]);
    assert.equal(hand.inFlight, 1);
    await hand.finish(2);
    assert.equal(hand.inFlight, 0);
    // The next level sets a new budget, then the concurrency (as the profiler does).
    tickets.setBudget(Number.POSITIVE_INFINITY);
    load.setConcurrency(2);
    await settle();
    assert.deepEqual(hand.sent, [0, 1, 2, 3, 4]);
    assert.equal(hand.inFlight, 2);
  });

  it("stop() resolves only when the last request has completed, and sends nothing more", async () => {
    const { hand, load } = setup();
    load.setConcurrency(2);
    let resolved = false;
    const stopped = load.stop().then(() => {
      resolved = true;
    });
    await hand.finish(0);
    assert.equal(resolved, false);
    assert.equal(hand.inFlight, 1);
    await hand.finish(1);
    await stopped;
    assert.equal(resolved, true);
    assert.deepEqual(hand.sent, [0, 1]);
    // A stopped load starts again at the next level.
    load.setConcurrency(1);
    await settle();
    assert.deepEqual(hand.sent, [0, 1, 2]);
  });
});
