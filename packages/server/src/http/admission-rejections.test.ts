/**
 * Admission under overload through the real server (issue 14): with a full queue a new request is refused
 * with 503 on arrival, while the admitted ones are still waiting; the refusals are counted by the metrics
 * and summarised in one log line per second instead of an error line each. Time is a fake clock: the
 * batcher holds the admitted requests until the test moves it, and the summary is written when it does.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type RunningServer, startServer } from "../server.js";
import { createFakeClock } from "../testing/fake-clock.js";
import { type RawResponse, rawRequest } from "../testing/raw-http-client.js";
import {
  createFixtureRepository,
  createRecordingLogger,
  type FixtureRepository,
} from "../testing/test-fixtures.js";

// `simple` with a queue of two and a batcher that waits a minute of fake time for a batch of 8.
const CONFIG = `name: "queued"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]
dynamic_batching {
  preferred_batch_size: [ 8 ]
  max_queue_delay_microseconds: 60000000
  default_queue_policy { max_queue_size: 2 }
}
`;

const clock = createFakeClock();
const logger = createRecordingLogger();
let repository: FixtureRepository;
let server: RunningServer;

before(async () => {
  repository = createFixtureRepository({ queued: { from: "simple", config: CONFIG } });
  server = await startServer({ modelRepository: repository.dir, httpPort: 0, metricsPort: 0, clock, logger });
});
after(async () => {
  await server.close();
  repository.remove();
});

function infer(id: string): Promise<RawResponse> {
  const input = (name: string) => ({ name, datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) });
  return rawRequest(server.httpUrl, "/v2/models/queued/infer", {
    method: "POST",
    body: JSON.stringify({ id, inputs: [input("INPUT0"), input("INPUT1")] }),
  });
}

async function metric(pattern: RegExp): Promise<number> {
  const text = await (await fetch(server.metricsUrl!)).text();
  const match = pattern.exec(text);
  return match === null ? Number.NaN : Number(match[1]);
}

describe("admission rejections", { timeout: 60_000 }, () => {
  test("a full queue refuses on arrival with 503, counted in metrics, summarised once a second", async () => {
    let admittedSettled = false;
    const admitted = Promise.all([infer("a1"), infer("a2")]).finally(() => {
      admittedSettled = true;
    });
    // Wait until both are queued (a state, not a duration).
    const pending = /nv_inference_pending_request_count\{model="queued",version="1"\} (\d+)/;
    while ((await metric(pending)) !== 2) await new Promise((resolve) => setImmediate(resolve));

    const refused = await Promise.all([infer("r1"), infer("r2"), infer("r3")]);
    for (const res of refused) {
      assert.equal(res.status, 503);
      const id = JSON.parse(res.body.toString()).error.match(/^\[request id: (r\d)\] /)?.[1];
      assert.ok(id !== undefined, res.body.toString());
      assert.equal(JSON.parse(res.body.toString()).error, `[request id: ${id}] Exceeds maximum queue size`);
    }
    // Refused while the admitted requests still wait in the queue: nothing was refused behind them.
    assert.equal(admittedSettled, false);
    assert.equal(
      await metric(/nv_inference_request_failure\{model="queued",version="1",reason="REJECTED"\} (\d+)/),
      3,
    );
    // No line per refusal; one summary when the second is over.
    const rejectionLines = () =>
      logger.lines.filter((line) => !line.startsWith("V ") && /rejected|queue size/.test(line));
    assert.deepEqual(rejectionLines(), []);
    clock.advanceUs(1_000_000);
    assert.deepEqual(rejectionLines(), [
      "W 3 requests rejected in the last second: 3 x 'Exceeds maximum queue size'",
    ]);
    assert.deepEqual(
      logger.lines.filter((line) => line.startsWith("E ")),
      [],
    );

    // The batcher's delay ends: the admitted pair is answered.
    clock.advanceUs(60_000_000);
    const answers = await admitted;
    assert.deepEqual(
      answers.map((res) => res.status),
      [200, 200],
    );
    // A quiet second writes nothing.
    clock.advanceUs(1_000_000);
    assert.equal(rejectionLines().length, 1);
  });
});
