import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createWorkerLoadDriver, splitEvenly } from "./worker-driver.js";

const INSTANT_SENDER = new URL("../testing/instant-sender.ts", import.meta.url).href;

describe("splitEvenly", () => {
  it("splits into parts that differ by at most one", () => {
    assert.deepEqual(splitEvenly(10, 3), [4, 3, 3]);
    assert.deepEqual(splitEvenly(2, 4), [1, 1, 0, 0]);
  });
});

describe("worker load driver (--workers)", { timeout: 30_000 }, () => {
  it("runs the load in worker threads and merges their windows exactly", async () => {
    const driver = await createWorkerLoadDriver({
      workers: 2,
      senderModule: INSTANT_SENDER,
      senderSpec: { failEvery: 10 },
      rate: {
        distribution: "constant",
        seed: 1,
        customIntervalsMs: undefined,
        maxInFlight: Number.POSITIVE_INFINITY,
      },
      mode: "concurrency",
      keepRequests: false,
    });
    try {
      // A budget makes the totals exact: 1000 requests over 2 workers, 4 contexts.
      await driver.setBudget(1000);
      await driver.apply({ mode: "concurrency", value: 4 });
      const deadline = Date.now() + 20_000;
      let successes = 0;
      let errors = 0;
      const kinds: Record<string, number> = {};
      while (successes + errors < 1000 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const part = await driver.collect();
        successes += part.successCount;
        errors += part.errorCount;
        assert.equal(part.latency.totalCount, part.successCount);
        for (const [kind, n] of Object.entries(part.errorsByKind)) kinds[kind] = (kinds[kind] ?? 0) + n;
      }
      // Worker i sends indices i, i+2, i+4, ...: exactly one in ten of all indices fails.
      assert.equal(successes + errors, 1000);
      assert.equal(errors, 100);
      assert.deepEqual(kinds, { "UNAVAILABLE (503)": 100 });
      await driver.stop();
    } finally {
      await driver.close();
    }
  });
});
