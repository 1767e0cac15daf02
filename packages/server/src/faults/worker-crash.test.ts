/**
 * Issue 14, faults: a model instance worker killed mid-batch, through the real server on HTTP and on a gRPC
 * stream. The batch is formed without timing: `preferred_batch_size: [4]` with a one-minute queue delay
 * sends it the moment the fourth request is queued, so the crashing request always shares its run with
 * three others. Every request of that batch fails with the instance's death (500 / an error answer), the
 * instance is replaced and later requests succeed.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as grpcJs from "@grpc/grpc-js";
import { silentLogger } from "../core/logger.js";
import { type RunningServer, startServer } from "../server.js";
import { type Any, createTestClient } from "../testing/grpc-test-client.js";
import { bundledConfig, createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";

const BATCHED =
  "\ninstance_group [ { count: 1, kind: KIND_CPU } ]\n" +
  "dynamic_batching { preferred_batch_size: [ 4 ] max_queue_delay_microseconds: 60000000 }\n";
const DIED = "model instance 'simple_0_0' died while running the request: worker exited with code 70";

const values = (seed: number) => Array.from({ length: 16 }, (_, i) => seed * 100 + i);

function httpBody(seed: number, crash: boolean): string {
  return JSON.stringify({
    ...(crash ? { parameters: { test_crash: true } } : {}),
    inputs: [
      { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: values(seed) },
      { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: values(1) },
    ],
  });
}

async function httpInfer(url: string, seed: number, crash = false): Promise<{ status: number; body: Any }> {
  const response = await fetch(`${url}/v2/models/simple/infer`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: httpBody(seed, crash),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, body: (await response.json()) as Any };
}

function grpcRequest(seed: number, crash: boolean): Any {
  const raw = (v: number[]) => new Uint8Array(new Int32Array(v).buffer);
  return {
    model_name: "simple",
    id: `r${seed}`,
    parameters: crash ? { test_crash: { bool_param: true } } : {},
    inputs: [
      { name: "INPUT0", datatype: "INT32", shape: [1, 16] },
      { name: "INPUT1", datatype: "INT32", shape: [1, 16] },
    ],
    raw_input_contents: [raw(values(seed)), raw(values(1))],
  };
}

const expectedSum = (seed: number) => values(seed).map((v, i) => v + values(1)[i]!);

describe("a model instance worker killed mid-batch", { timeout: 120_000 }, () => {
  let repo: FixtureRepository;
  let server: RunningServer;
  before(async () => {
    repo = createFixtureRepository({ simple: { config: bundledConfig("simple") + BATCHED } });
    server = await startServer({
      modelRepository: repo.dir,
      logger: silentLogger,
      httpPort: 0,
      grpcPort: 0,
      metricsPort: false,
      crashWorkerParameter: "test_crash",
    });
  });
  after(async () => {
    await server?.close();
    repo?.remove();
  });

  const stats = () => server.core.modelStatistics("simple")[0]!;

  test("HTTP: the four requests of the batch answer 500 with the death; the instance comes back", async () => {
    const failBefore = stats().inference_stats.fail.count;
    const batch = await Promise.all([
      httpInfer(server.httpUrl, 2, true),
      ...[3, 4, 5].map((s) => httpInfer(server.httpUrl, s)),
    ]);
    for (const answer of batch) assert.deepEqual(answer, { status: 500, body: { error: DIED } });
    assert.equal(stats().inference_stats.fail.count, failBefore + 4);
    // Later requests (a full batch again, one run) are served by the replacement, each with its own sums.
    const runsBefore = stats().execution_count;
    const later = await Promise.all([6, 7, 8, 9].map((s) => httpInfer(server.httpUrl, s)));
    later.forEach((answer, i) => {
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body.outputs[0].data, expectedSum(6 + i));
    });
    assert.equal(stats().execution_count, runsBefore + 1, "the four ran as one batch");
  });

  test("gRPC stream: the batch's requests get the death as error answers, the stream serves on", async () => {
    const client = createTestClient(server.grpcAddress!);
    try {
      const stream = client.ModelStreamInfer(new grpcJs.Metadata(), {
        deadline: Date.now() + 60_000,
      }) as grpcJs.ClientDuplexStream<Any, Any>;
      const answers = new Map<string, Any>();
      let notify: (() => void) | undefined;
      stream.on("data", (a: Any) => {
        answers.set(a.infer_response.id, a);
        notify?.();
      });
      const waitFor = async (count: number) => {
        while (answers.size < count) await new Promise<void>((r) => (notify = r));
      };
      stream.write(grpcRequest(10, false));
      stream.write(grpcRequest(11, true));
      stream.write(grpcRequest(12, false));
      stream.write(grpcRequest(13, false));
      await waitFor(4);
      for (const seed of [10, 11, 12, 13]) assert.equal(answers.get(`r${seed}`)?.error_message, DIED);
      for (const seed of [14, 15, 16, 17]) stream.write(grpcRequest(seed, false));
      await waitFor(8);
      for (const seed of [14, 15, 16, 17]) {
        const answer = answers.get(`r${seed}`)!;
        assert.equal(answer.error_message, "");
        const sums = new Int32Array(
          new Uint8Array(answer.infer_response.raw_output_contents[0]).slice().buffer,
        );
        assert.deepEqual([...sums], expectedSum(seed));
      }
      const ended = new Promise<number>((resolve) =>
        stream.on("status", (s: grpcJs.StatusObject) => resolve(s.code)),
      );
      stream.end();
      assert.equal(await ended, 0);
    } finally {
      client.close();
    }
  });
});
