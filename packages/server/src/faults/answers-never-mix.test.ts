/**
 * Issue 14, answers never mix: thousands of concurrent requests with distinct inputs through the real
 * server, each answer checked against its own request. (a) HTTP at concurrency 64 into a dynamically
 * batched model with two instances, (b) an ensemble whose two steps are both batched (the answer depends
 * on the request's inputs only through both steps), (c) eight gRPC streams written in turn, answers matched
 * by request id. Every input is distinct (a seed per request), so a mixed-up answer cannot pass.
 */
import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { after, before, describe, test } from "node:test";
import * as grpcJs from "@grpc/grpc-js";
import { silentLogger } from "../core/logger.js";
import { type RunningServer, startServer } from "../server.js";
import { type Any, createTestClient, unary } from "../testing/grpc-test-client.js";
import { bundledConfig, createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";

const BATCHED =
  "\ninstance_group [ { count: 2, kind: KIND_CPU } ]\n" +
  "dynamic_batching { max_queue_delay_microseconds: 500 }\n";

/** simple -> simple: (a, b) -> (a + b, a - b) -> (2a, 2b). */
const ENSEMBLE = `name: "twice"
platform: "ensemble"
max_batch_size: 8
input [ { name: "A" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "B" data_type: TYPE_INT32 dims: [ 16 ] } ]
output [ { name: "A2" data_type: TYPE_INT32 dims: [ 16 ] }, { name: "B2" data_type: TYPE_INT32 dims: [ 16 ] } ]
ensemble_scheduling {
  step [
    {
      model_name: "simple" model_version: -1
      input_map { key: "INPUT0" value: "A" } input_map { key: "INPUT1" value: "B" }
      output_map { key: "OUTPUT0" value: "SUM" } output_map { key: "OUTPUT1" value: "DIFF" }
    },
    {
      model_name: "simple" model_version: -1
      input_map { key: "INPUT0" value: "SUM" } input_map { key: "INPUT1" value: "DIFF" }
      output_map { key: "OUTPUT0" value: "A2" } output_map { key: "OUTPUT1" value: "B2" }
    }
  ]
}
`;

const TOTAL = 3000;
const CONCURRENCY = 64;

/** Distinct per seed: a = seed * 16 + i, b = 7 - seed * 3 + i * i. */
const inputsOf = (seed: number) => ({
  a: Array.from({ length: 16 }, (_, i) => seed * 16 + i),
  b: Array.from({ length: 16 }, (_, i) => 7 - seed * 3 + i * i),
});

/** Runs `work(seed)` for seeds 0..total-1, `concurrency` at a time. */
async function pool(
  total: number,
  concurrency: number,
  work: (seed: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await work(next++);
    }),
  );
}

const raw = (values: number[]) => new Uint8Array(new Int32Array(values).buffer);
const int32s = (bytes: Uint8Array) => [...new Int32Array(new Uint8Array(bytes).buffer)];

function grpcRequest(model: string, names: [string, string], seed: number): Any {
  const { a, b } = inputsOf(seed);
  return {
    model_name: model,
    id: `q${seed}`,
    inputs: names.map((name) => ({ name, datatype: "INT32", shape: [1, 16] })),
    raw_input_contents: [raw(a), raw(b)],
  };
}

describe("answers never mix", { timeout: 120_000 }, () => {
  let repo: FixtureRepository;
  let server: RunningServer;
  let client: Any;
  before(async () => {
    repo = createFixtureRepository({
      simple: { config: bundledConfig("simple") + BATCHED },
      twice: { from: "simple", config: ENSEMBLE, versions: [], extraDirs: ["1"] },
    });
    server = await startServer({
      modelRepository: repo.dir,
      logger: silentLogger,
      httpPort: 0,
      grpcPort: 0,
      metricsPort: false,
    });
    client = createTestClient(server.grpcAddress!);
  });
  after(async () => {
    client?.close();
    await server?.close();
    repo?.remove();
  });

  const stats = (model: string) => server.core.modelStatistics(model)[0]!;
  // node:http with kept-alive connections: fetch costs several times more CPU per call on these 2 cores.
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  after(() => agent.destroy());
  const post = (path: string, body: string) =>
    new Promise<{ status: number; body: Any }>((resolve, reject) => {
      const url = new URL(path, server.httpUrl);
      const req = request(url, { method: "POST", agent, timeout: 60_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Any,
          }),
        );
        res.on("error", reject);
      });
      req.on("timeout", () => req.destroy(new Error("no answer within 60 s")));
      req.on("error", reject);
      req.end(body);
    });

  test(`(a) ${TOTAL} HTTP requests at concurrency ${CONCURRENCY} into a batched model`, async () => {
    const runs = stats("simple").execution_count;
    await pool(TOTAL, CONCURRENCY, async (seed) => {
      const { a, b } = inputsOf(seed);
      const { status, body } = await post(
        "/v2/models/simple/infer",
        JSON.stringify({
          id: `q${seed}`,
          inputs: [
            { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: a },
            { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: b },
          ],
        }),
      );
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.id, `q${seed}`);
      const out = Object.fromEntries(body.outputs.map((o: Any) => [o.name, o.data]));
      assert.deepEqual(
        out.OUTPUT0,
        a.map((x, i) => x + b[i]!),
        `request ${seed}`,
      );
      assert.deepEqual(
        out.OUTPUT1,
        a.map((x, i) => x - b[i]!),
        `request ${seed}`,
      );
    });
    const executions = stats("simple").execution_count - runs;
    assert.ok(executions < TOTAL, `requests were batched: ${TOTAL} in ${executions} runs`);
    if (process.env.TBENCH_MIX_FIGURES) console.log(`(a) ${TOTAL} requests in ${executions} runs`);
  });

  test(`(b) ${TOTAL} gRPC requests at concurrency ${CONCURRENCY} through an ensemble of two batched steps`, async () => {
    await pool(TOTAL, CONCURRENCY, async (seed) => {
      const { a, b } = inputsOf(seed);
      const response = await unary(client, "ModelInfer", grpcRequest("twice", ["A", "B"], seed), {
        deadline: Date.now() + 60_000,
      });
      assert.equal(response.id, `q${seed}`);
      const out = Object.fromEntries(
        response.outputs.map((o: Any, i: number) => [o.name, int32s(response.raw_output_contents[i])]),
      );
      assert.deepEqual(
        out.A2,
        a.map((x) => 2 * x),
        `request ${seed}`,
      );
      assert.deepEqual(
        out.B2,
        b.map((x) => 2 * x),
        `request ${seed}`,
      );
    });
    assert.equal(stats("twice").inference_stats.success.count, TOTAL);
  });

  test(`(c) ${TOTAL} requests on 8 gRPC streams written in turn, ${CONCURRENCY} in flight`, async () => {
    const streams = Array.from(
      { length: 8 },
      () =>
        client.ModelStreamInfer(new grpcJs.Metadata(), {
          deadline: Date.now() + 60_000,
        }) as grpcJs.ClientDuplexStream<Any, Any>,
    );
    const waiting = new Map<string, { stream: number; resolve: (a: Any) => void }>();
    streams.forEach((stream, index) => {
      stream.on("data", (answer: Any) => {
        const id = answer.infer_response.id as string;
        const entry = waiting.get(id);
        assert.ok(entry, `an answer for ${id}, which is not pending`);
        assert.equal(entry.stream, index, `${id} answered on the stream it was sent on`);
        waiting.delete(id);
        entry.resolve(answer);
      });
      stream.on("error", () => {});
    });
    await pool(TOTAL, CONCURRENCY, async (seed) => {
      const stream = seed % streams.length;
      const answer = await new Promise<Any>((resolve) => {
        waiting.set(`q${seed}`, { stream, resolve });
        streams[stream]!.write(grpcRequest("simple", ["INPUT0", "INPUT1"], seed));
      });
      assert.equal(answer.error_message, "");
      const { a, b } = inputsOf(seed);
      const response = answer.infer_response;
      assert.deepEqual(
        int32s(response.raw_output_contents[0]),
        a.map((x, i) => x + b[i]!),
        `request ${seed}`,
      );
      assert.deepEqual(
        int32s(response.raw_output_contents[1]),
        a.map((x, i) => x - b[i]!),
        `request ${seed}`,
      );
    });
    assert.equal(waiting.size, 0);
    await Promise.all(
      streams.map(
        (stream) =>
          new Promise<void>((resolve) => {
            stream.on("status", () => resolve());
            stream.end();
          }),
      ),
    );
  });
});
