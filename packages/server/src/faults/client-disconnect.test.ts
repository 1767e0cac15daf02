/**
 * Issue 14, faults: a client that goes away while its request waits in the queue. The queue is held on a
 * fake clock (a one-second max_queue_delay that only the test advances), so "not started yet" is a state,
 * not a race: requests of clients that disconnect (HTTP socket closed, gRPC unary cancelled, gRPC stream
 * cancelled) leave the queue and never reach the instance, which the statistics prove (inference_count
 * counts only the one request that stayed). The one that stayed is answered once the clock moves.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as grpcJs from "@grpc/grpc-js";
import { silentLogger } from "../core/logger.js";
import { type RunningServer, startServer } from "../server.js";
import { createFakeClock } from "../testing/fake-clock.js";
import { type Any, createTestClient } from "../testing/grpc-test-client.js";
import { bundledConfig, createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";

const HELD =
  "\ninstance_group [ { count: 1, kind: KIND_CPU } ]\n" +
  "dynamic_batching { max_queue_delay_microseconds: 1000000 }\n";
const DATA = Array.from({ length: 16 }, (_, i) => i);

const httpBody = JSON.stringify({
  inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: DATA })),
});

function grpcRequest(id: string): Any {
  const raw = new Uint8Array(new Int32Array(DATA).buffer);
  return {
    model_name: "simple",
    id,
    inputs: [
      { name: "INPUT0", datatype: "INT32", shape: [1, 16] },
      { name: "INPUT1", datatype: "INT32", shape: [1, 16] },
    ],
    raw_input_contents: [raw, raw],
  };
}

describe("a client that disconnects while its request is queued", { timeout: 60_000 }, () => {
  let repo: FixtureRepository;
  let server: RunningServer;
  let client: Any;
  const clock = createFakeClock();
  before(async () => {
    repo = createFixtureRepository({ simple: { config: bundledConfig("simple") + HELD } });
    server = await startServer({
      modelRepository: repo.dir,
      logger: silentLogger,
      httpPort: 0,
      grpcPort: 0,
      metricsPort: false,
      clock,
    });
    client = createTestClient(server.grpcAddress!);
  });
  after(async () => {
    client?.close();
    await server?.close();
    repo?.remove();
  });

  const pending = () => server.core.metricsSnapshot().find((m) => m.model === "simple")!.pendingRequests;
  const stats = () => server.core.modelStatistics("simple")[0]!;
  /** Waits (on real I/O, no timing figure) until the queue holds `count` requests. */
  const queueHolds = async (count: number) => {
    while (pending() !== count) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  const httpInfer = (signal?: AbortSignal) =>
    fetch(`${server.httpUrl}/v2/models/simple/infer`, {
      method: "POST",
      body: httpBody,
      ...(signal ? { signal } : {}),
    });
  /** Moves the fake clock past the queue delay, then checks what reached the instance. */
  const release = async (stayed: Promise<unknown>, inferencesBefore: number) => {
    clock.advanceUs(1_000_000);
    await stayed;
    assert.equal(stats().inference_count, inferencesBefore + 1, "only the request that stayed ran");
    assert.equal(pending(), 0);
  };

  test("HTTP: requests of closed connections leave the queue; the one that stayed is answered", async () => {
    const before = stats().inference_count;
    const controllers = [new AbortController(), new AbortController()];
    const gone = controllers.map((c) => httpInfer(c.signal).catch((e: Error) => e.name));
    const stayed = httpInfer().then(async (r) => ({ status: r.status, body: (await r.json()) as Any }));
    await queueHolds(3);
    for (const c of controllers) c.abort();
    assert.deepEqual(await Promise.all(gone), ["AbortError", "AbortError"]);
    await queueHolds(1);
    await release(
      stayed.then((answer) => {
        assert.equal(answer.status, 200);
        assert.deepEqual(
          answer.body.outputs[0].data,
          DATA.map((x) => 2 * x),
        );
      }),
      before,
    );
  });

  test("gRPC: cancelled unary calls leave the queue", async () => {
    const before = stats().inference_count;
    const cancelled: Promise<number>[] = [];
    const calls = [1, 2].map((i) => {
      let call: grpcJs.ClientUnaryCall | undefined;
      cancelled.push(
        new Promise((resolve) => {
          call = client.ModelInfer(grpcRequest(`c${i}`), (e: grpcJs.ServiceError | null) =>
            resolve(e?.code ?? 0),
          );
        }),
      );
      return call!;
    });
    const stayed = new Promise<Any>((resolve, reject) =>
      client.ModelInfer(grpcRequest("stays"), (e: grpcJs.ServiceError | null, r: Any) =>
        e ? reject(e) : resolve(r),
      ),
    );
    await queueHolds(3);
    for (const call of calls) call.cancel();
    assert.deepEqual(await Promise.all(cancelled), [grpcJs.status.CANCELLED, grpcJs.status.CANCELLED]);
    await queueHolds(1);
    await release(
      stayed.then((r) => assert.equal(r.id, "stays")),
      before,
    );
  });

  test("gRPC: a cancelled stream's queued requests leave the queue", async () => {
    const before = stats().inference_count;
    const stream = client.ModelStreamInfer(new grpcJs.Metadata()) as grpcJs.ClientDuplexStream<Any, Any>;
    const ended = new Promise<number>((resolve) =>
      stream.on("error", (e: grpcJs.ServiceError) => resolve(e.code)),
    );
    let answers = 0;
    stream.on("data", () => answers++);
    for (const id of ["s1", "s2", "s3"]) stream.write(grpcRequest(id));
    const stayed = new Promise<Any>((resolve, reject) =>
      client.ModelInfer(grpcRequest("stays"), (e: grpcJs.ServiceError | null, r: Any) =>
        e ? reject(e) : resolve(r),
      ),
    );
    await queueHolds(4);
    stream.cancel();
    assert.equal(await ended, grpcJs.status.CANCELLED);
    await queueHolds(1);
    await release(
      stayed.then((r) => assert.equal(r.id, "stays")),
      before,
    );
    assert.equal(answers, 0);
  });
});
