import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRateLoad } from "./rate-load.js";
import type { RequestSender } from "./request-sender.js";
import { createRequestTicket } from "./request-ticket.js";
import { createRateSchedule } from "./schedule.js";
import { createWindowRecorder } from "./window-recorder.js";

/** A sender whose requests hang until `release()`. */
function createHeldSender(): RequestSender & { release(): void; sent: number } {
  const waiting: (() => void)[] = [];
  let held = true;
  return {
    sent: 0,
    send() {
      this.sent += 1;
      if (!held) return Promise.resolve();
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    release() {
      held = false;
      for (const resolve of waiting.splice(0)) resolve();
    },
    async close() {},
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("rate load", { timeout: 10_000 }, () => {
  it("open loop: keeps sending on schedule while earlier requests are unanswered", async () => {
    const sender = createHeldSender();
    const recorder = createWindowRecorder({ keepRequests: false, trackUncorrected: true });
    const load = createRateLoad({
      sender,
      recorder,
      tickets: createRequestTicket(),
      maxInFlight: Number.POSITIVE_INFINITY,
    });
    load.setSchedule(createRateSchedule({ ratePerSec: 1000, distribution: "constant", seed: 1 }));
    await sleep(60);
    // Timers may run late on a busy machine; only "more than one in flight, none answered" matters.
    assert.ok(sender.sent > 1, `sent ${sender.sent}`);
    assert.equal(load.inFlight, sender.sent);
    sender.release();
    await load.stop();
    const part = recorder.swap();
    assert.equal(part.successCount, sender.sent);
    assert.equal(part.latency.totalCount, sender.sent);
  });

  it("--sync cap: a due send waits for a free slot and is counted late; its latency counts from the due time", async () => {
    const sender = createHeldSender();
    const recorder = createWindowRecorder({ keepRequests: false, trackUncorrected: true });
    const load = createRateLoad({ sender, recorder, tickets: createRequestTicket(), maxInFlight: 1 });
    load.setSchedule(createRateSchedule({ ratePerSec: 200, distribution: "constant", seed: 1 }));
    await sleep(100);
    assert.equal(sender.sent, 1);
    sender.release();
    await sleep(20);
    await load.stop();
    const part = recorder.swap();
    // About 20 sends fell due during the 100 ms hold; they went out late, one after the other.
    assert.ok(part.lateSendCount >= 5, `late ${part.lateSendCount}`);
    // The held request waited >= 100 ms from its due time, from the send too (it left on time) ...
    assert.ok(part.latency.maxValue >= 95_000, `corrected max ${part.latency.maxValue} us`);
    // ... but the late ones were answered at once after they left: the uncorrected p50 is small while the
    // corrected one includes their wait for a slot.
    assert.ok(part.latency.getValueAtPercentile(50) > part.uncorrected!.getValueAtPercentile(50));
    // The wait for a slot is the server's doing: it is in the latency and the late count, not in tbench's
    // own send delay (a send leaves in the same callback that freed its slot). The bound leaves 50 ms for
    // a timer firing late on a busy machine.
    assert.ok(part.sendDelay !== undefined);
    assert.equal(part.sendDelay.totalCount, part.sentCount);
    assert.ok(part.maxSendLagUs >= 90_000, `max send lag ${part.maxSendLagUs} us`);
    assert.ok(
      part.sendDelay.maxValue < part.maxSendLagUs - 50_000,
      `send delay max ${part.sendDelay.maxValue} us, max send lag ${part.maxSendLagUs} us`,
    );
  });
});
