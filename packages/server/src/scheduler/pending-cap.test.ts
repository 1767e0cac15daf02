/**
 * The per-version cap on queued requests (--max-pending-requests, issue 14 "overload"): a model whose config
 * sets no max_queue_size still refuses work once the cap is reached, with 503 and a message naming the cap and
 * its flag, counted as a REJECTED failure, answered while the admitted requests still wait. A fake clock
 * holds the admitted requests in the batcher until the test moves it.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { silentLogger } from "../core/logger.js";
import { type RunningServer, startServer } from "../server.js";
import { createFakeClock } from "../testing/fake-clock.js";
import { type RawResponse, rawRequest } from "../testing/raw-http-client.js";
import { createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";

// `simple` with no queue limit of its own and a batcher that waits a minute of fake time for a batch of 8.
const CONFIG = `name: "unbounded"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
dynamic_batching { preferred_batch_size: [ 8 ] max_queue_delay_microseconds: 60000000 }
`;

const clock = createFakeClock();
let repository: FixtureRepository;
let server: RunningServer;

before(async () => {
  repository = createFixtureRepository({ unbounded: { from: "simple", config: CONFIG } });
  server = await startServer({
    modelRepository: repository.dir,
    httpPort: 0,
    metricsPort: 0,
    clock,
    logger: silentLogger,
    maxPendingRequests: 3,
  });
});
after(async () => {
  await server.close();
  repository.remove();
});

function infer(id: string): Promise<RawResponse> {
  const input = (name: string) => ({ name, datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) });
  return rawRequest(server.httpUrl, "/v2/models/unbounded/infer", {
    method: "POST",
    body: JSON.stringify({ id, inputs: [input("INPUT0"), input("INPUT1")] }),
  });
}

async function metric(pattern: RegExp): Promise<number> {
  const text = await (await fetch(server.metricsUrl!)).text();
  const match = pattern.exec(text);
  return match === null ? Number.NaN : Number(match[1]);
}

describe("--max-pending-requests", { timeout: 60_000 }, () => {
  test("past the cap a request gets 503 naming the cap, while the admitted ones wait", async () => {
    let admittedSettled = false;
    const admitted = Promise.all([infer("a1"), infer("a2"), infer("a3")]).finally(() => {
      admittedSettled = true;
    });
    const pending = /nv_inference_pending_request_count\{model="unbounded",version="1"\} (\d+)/;
    while ((await metric(pending)) !== 3) await new Promise((resolve) => setImmediate(resolve));

    const refused = await Promise.all([infer("r1"), infer("r2")]);
    for (const [i, res] of refused.entries()) {
      assert.equal(res.status, 503);
      assert.equal(
        JSON.parse(res.body.toString()).error,
        `[request id: r${i + 1}] Exceeds the server's limit of 3 pending requests for model 'unbounded' (--max-pending-requests)`,
      );
    }
    assert.equal(admittedSettled, false);
    assert.equal(
      await metric(/nv_inference_request_failure\{model="unbounded",version="1",reason="REJECTED"\} (\d+)/),
      2,
    );

    clock.advanceUs(60_000_000);
    assert.deepEqual(
      (await admitted).map((res) => res.status),
      [200, 200, 200],
    );
    // The queue emptied: the cap admits again.
    const later = infer("b1");
    while ((await metric(pending)) !== 1) await new Promise((resolve) => setImmediate(resolve));
    clock.advanceUs(60_000_000);
    assert.equal((await later).status, 200);
  });
});
