// infer() reuses a large request body's memory once the call that used it has settled (http-client.ts):
// against tbench-server on 127.0.0.1:0, each answer must still carry its own call's values, whether the
// calls run one after another (the memory is reused) or together (it must not be shared), and the bytes
// on the wire must be exactly the encoding of each call's request. Run over undici's Pool and the wire pool.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { RunningServer } from "@tbench/server";
import { type Dispatcher, Pool } from "undici";
import type { InferenceClient } from "../inference-client.js";
import type { InferRequest } from "../tensor-types.js";
import { startBundledServer } from "../testing/bundled-server.js";
import { createHttpClient } from "./http-client.js";
import { encodeInferRequest } from "./infer-encoding.js";
import { createWirePool } from "./wire/wire-pool.js";

const ELEMENTS = 65_536; // 256 KiB of FP32, above the reuse threshold

let server: RunningServer;
let client: InferenceClient;
const sentBodies: Buffer[] = [];

before(async () => {
  server = await startBundledServer(["identity_fp32"]);
});

after(async () => {
  await server.close();
});

/** The inner pool of each engine, behind a dispatcher that records each request's body. */
const ENGINES = {
  undici: (url: string) => new Pool(url, { connections: 4 }),
  wire: (url: string) => createWirePool(url, { connections: 4 }),
};

function request(seed: number): InferRequest {
  const data = new Float32Array(ELEMENTS);
  for (let i = 0; i < ELEMENTS; i++) data[i] = seed * 1_000_000 + i;
  return { inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, ELEMENTS], data }] };
}

async function inferAndCheck(seed: number): Promise<void> {
  const req = request(seed);
  const out = (await client.infer("identity_fp32", req)).output("OUTPUT0")!.as("FP32");
  assert.deepEqual(out, req.inputs[0]!.data, `call ${seed} got its own values back`);
}

for (const [engine, createPool] of Object.entries(ENGINES)) {
  describe(`engine ${engine}`, () => {
    let pool: ReturnType<typeof createPool>;
    before(() => {
      pool = createPool(server.httpUrl);
      const recording = {
        dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) {
          sentBodies.push(options.body as Buffer);
          return (pool as Dispatcher).dispatch(options, handler);
        },
      } as unknown as Dispatcher;
      client = createHttpClient({ url: server.httpUrl, maxRetries: 0, dispatcher: recording });
    });
    after(async () => {
      await client.close();
      await pool.close();
    });

    test("calls one after another reuse the body memory and each sends and gets back its own values", async () => {
      sentBodies.length = 0;
      for (let seed = 1; seed <= 3; seed++) await inferAndCheck(seed);
      assert.equal(sentBodies.length, 3);
      assert.equal(
        sentBodies[1]!.buffer,
        sentBodies[0]!.buffer,
        "the second call wrote into the first's memory",
      );
      assert.equal(sentBodies[2]!.buffer, sentBodies[0]!.buffer);
      // The memory now holds the last call's bytes, which are exactly its encoding.
      assert.deepEqual(sentBodies[2], encodeInferRequest(request(3)).body);
    });

    test("calls in flight together never share body memory", async () => {
      sentBodies.length = 0;
      await Promise.all([4, 5, 6, 7].map((seed) => inferAndCheck(seed)));
      const buffers = new Set(sentBodies.map((b) => b.buffer));
      assert.equal(buffers.size, 4, "four calls in flight, four distinct bodies");
    });
  });
}
