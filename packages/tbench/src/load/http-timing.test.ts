import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { createHttpClient, type InferenceClient } from "@tbench/client";
import { createHttpTiming } from "./http-timing.js";

// Run on both HTTP engines of @tbench/client: undici's Pool and the wire pool (what tbench's load uses).
for (const engine of ["undici", "wire"] as const) {
  describe(`HTTP timing (diagnostics channels, sampled), engine ${engine}`, { timeout: 30_000 }, () => {
    let server: Server;
    let client: InferenceClient;
    // Readiness answers after a short pause so that each request has a measurable duration; every fifth
    // request to /v2/health/ready drops its socket (a failed request, which must not be timed).
    let probes = 0;
    before(async () => {
      server = createServer((request, response) => {
        if (request.url === "/v2/health/ready") {
          probes += 1;
          if (probes % 5 === 0) {
            request.socket.destroy();
            return;
          }
          setTimeout(() => response.end(), 2);
          return;
        }
        response.statusCode = 404;
        response.end();
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const { port } = server.address() as AddressInfo;
      client = createHttpClient({ url: `http://127.0.0.1:${port}`, connections: 1, maxRetries: 0, engine });
    });
    after(async () => {
      await client.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    async function probe(times: number): Promise<number> {
      let failed = 0;
      for (let i = 0; i < times; i++) await client.isServerReady().catch(() => (failed += 1));
      return failed;
    }

    it("times every successful request one after another when the timed share is 1", async () => {
      const timing = createHttpTiming({ timedShare: 1 });
      try {
        const failed = await probe(20);
        const totals = timing.swap();
        assert.equal(failed, 4);
        assert.equal(totals.count, 16);
        assert.ok(totals.sendNs > 0 && totals.recvNs >= 0);
        assert.ok(totals.sendNs + totals.recvNs <= totals.requestNs);
        // Each answer waits 2 ms (timers fire no earlier than asked), so the average is at least that.
        assert.ok(totals.requestNs / totals.count >= 1.9e6, `${totals.requestNs / totals.count} ns`);
        assert.equal(timing.swap().count, 0);
      } finally {
        timing.close();
      }
    });

    it("times a sample by default: a gap of 9x the last timed request follows each timed one", async () => {
      const timing = createHttpTiming();
      try {
        await probe(20);
        const totals = timing.swap();
        // Back-to-back requests of ~2 ms: after a timed one, the next ~18 ms of requests are skipped.
        assert.ok(totals.count >= 1 && totals.count < 16, `${totals.count} timed`);
      } finally {
        timing.close();
      }
    });

    it("ignores requests other than infer and readiness, and stops timing once closed", async () => {
      const timing = createHttpTiming({ timedShare: 1 });
      await client.isServerLive().catch(() => undefined);
      assert.equal(timing.swap().count, 0);
      timing.close();
      timing.close();
      await probe(3);
      assert.equal(timing.swap().count, 0);
    });

    it("rejects a timed share outside (0, 1]", () => {
      assert.throws(() => createHttpTiming({ timedShare: 0 }), /timedShare must be in \(0, 1\], got 0/);
      assert.throws(() => createHttpTiming({ timedShare: 1.5 }), /got 1.5/);
    });
  });
}
