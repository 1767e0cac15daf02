// ModelStreamInfer end to end against tbench-server: 10,000 requests on one stream with interleaved errors,
// each answer checked against its own input; infer() and prepare() on a stream; cancel mid-stream (the
// server sees it); breaking out of for-await; the stream deadline; close() and destroy() with open streams.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import type { ModelConfig } from "@tbench/proto";
import { type RunningServer, silentLogger, startServer } from "@tbench/server";
import {
  AbortedError,
  ClientClosedError,
  DeadlineExceededError,
  InferenceError,
  InvalidArgumentError,
  ModelNotFoundError,
  UnavailableError,
} from "../errors.js";
import type { InferInput } from "../tensor-types.js";
import { expectTcpHandlesBackTo, openTcpHandles } from "../testing/leak-check.js";
import { createGrpcClient } from "./grpc-client.js";
import type { GrpcInferenceClient, StreamResult } from "./grpc-inference-client.js";

const REPOSITORY = new URL("../../../../examples/models", import.meta.url).pathname;

/** identity_fp64 holding a lone request for 60 s in a queue of one (see the HTTP e2e test). */
const HOLDING_CONFIG: ModelConfig = {
  name: "identity_fp64",
  platform: "onnxruntime_onnx",
  max_batch_size: 8,
  input: [{ name: "INPUT0", data_type: "TYPE_FP64", dims: ["-1"] }],
  output: [{ name: "OUTPUT0", data_type: "TYPE_FP64", dims: ["-1"] }],
  dynamic_batching: {
    preferred_batch_size: [8],
    max_queue_delay_microseconds: "60000000",
    default_queue_policy: {
      max_queue_size: 1,
      timeout_action: "REJECT",
      default_timeout_microseconds: "120000000",
      allow_timeout_override: true,
    },
  },
};
const fp64 = { inputs: [{ name: "INPUT0", datatype: "FP64" as const, shape: [1, 2], data: [1, 2] }] };
/** A request the server refuses at once (wrong datatype): an error answer that does not depend on the queue. */
const wrongType = { inputs: [{ name: "INPUT0", datatype: "FP32" as const, shape: [1, 2], data: [1, 2] }] };

let server: RunningServer;
let client: GrpcInferenceClient;

before(async () => {
  server = await startServer({
    modelRepository: REPOSITORY,
    httpPort: 0,
    httpAddress: "127.0.0.1",
    metricsPort: false,
    grpcPort: 0,
    modelControlMode: "explicit",
    loadModels: ["simple"],
    logger: silentLogger,
  });
  client = createGrpcClient({ url: server.grpcAddress!, timeoutMs: 60_000 });
  await client.loadModel("identity_fp64", { config: HOLDING_CONFIG });
});

after(async () => {
  await client?.close();
  await server?.close();
});

/** The inputs of request `i`: INPUT0 = i..i+15, INPUT1 = 1 (so OUTPUT0 = i+1..i+16, OUTPUT1 = i-1..i+14). */
function inputsOf(i: number): InferInput[] {
  const a = Int32Array.from({ length: 16 }, (_, k) => i + k);
  const b = new Int32Array(16).fill(1);
  return [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: a },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: b },
  ];
}

/**
 * Resolves once the server has let go of the held fp64 request (its queue of one takes a new request, which
 * then times out in the queue instead of being refused). The server learns of a cancel asynchronously, so
 * this probes until it has (bounded: a held request would otherwise stay for 60 s, so a missed cancel fails).
 */
async function queueIsFree(): Promise<void> {
  const until = Date.now() + 30_000; // still well under the 60 s hold, so a missed cancel fails
  for (;;) {
    const error = await client.infer("identity_fp64", { ...fp64, timeoutUs: 1000 }).then(
      () => assert.fail("a lone request cannot complete"),
      (e: unknown) => e,
    );
    if (error instanceof DeadlineExceededError && /timeout/i.test(error.message)) return;
    assert.ok(error instanceof UnavailableError && /maximum queue size/.test(error.message), String(error));
    if (Date.now() > until) assert.fail("the server still holds the cancelled request");
    await delay(20);
  }
}

/** Resolves once the server's identity_fp64 queue holds a request (a stream's write is on its way until then). */
async function untilHeld(): Promise<void> {
  const until = Date.now() + 30_000;
  const pending = (): number =>
    server.core.metricsSnapshot().find((m) => m.model === "identity_fp64")?.pendingRequests ?? 0;
  while (pending() === 0) {
    if (Date.now() > until) assert.fail("the stream's request never reached the server's queue");
    await delay(10);
  }
}

describe("stream", () => {
  test("10,000 requests on one stream, every 7th missing an input: each answer matches its own request", async () => {
    const stream = client.stream("simple");
    const expected = new Map<string, number>();
    for (let i = 0; i < 10_000; i++) {
      const inputs = inputsOf(i);
      const id = stream.write({
        inputs: i % 7 === 3 ? [inputs[0]!] : inputs,
        ...(i % 2 === 0 ? { id: `r${i}` } : {}),
      });
      if (i % 2 === 0) assert.equal(id, `r${i}`);
      expected.set(id, i);
    }
    stream.end();
    let ok = 0;
    let failed = 0;
    for await (const answer of stream) {
      const i = expected.get(answer.id);
      assert.ok(i !== undefined, `an answer for id ${answer.id}, which was sent once`);
      expected.delete(answer.id);
      if (i % 7 === 3) {
        assert.ok(!answer.ok, `request ${i} lacks INPUT1`);
        assert.ok(answer.error instanceof InferenceError);
        assert.equal(answer.error.requestId, answer.id);
        assert.match(answer.error.message, /missing required input\(s\) \['INPUT1'\]/);
        failed++;
      } else {
        assert.ok(answer.ok, `request ${i} succeeds`);
        assert.equal(answer.result.id, answer.id);
        const sum = answer.result.output("OUTPUT0")!.as("INT32");
        const diff = answer.result.output("OUTPUT1")!.as("INT32");
        assert.equal(sum[0], i + 1);
        assert.equal(sum[15], i + 16);
        assert.equal(diff[15], i + 14);
        ok++;
      }
    }
    assert.equal(expected.size, 0, "every request was answered");
    assert.equal(failed, 1429);
    assert.equal(ok, 10_000 - 1429);
  });

  test("infer() and prepare().send() settle their own promises; write() answers go to the iterator", async () => {
    await using stream = client.stream("simple");
    const prepared = stream.prepare({ inputs: inputsOf(100) });
    assert.ok(prepared.byteLength > 128);
    const [a, b, c] = await Promise.all([
      prepared.send(),
      prepared.send(),
      stream.infer({ inputs: inputsOf(5), id: "five" }),
    ]);
    assert.equal(a.output("OUTPUT0")!.as("INT32")[0], 101);
    assert.equal(b.output("OUTPUT0")!.as("INT32")[0], 101);
    assert.notEqual(a.id, b.id, "each send has its own id");
    assert.equal(c.id, "five");
    const unknown = client.stream("nope");
    await assert.rejects(unknown.infer({ inputs: inputsOf(1), id: "u" }), (e: unknown) => {
      return e instanceof ModelNotFoundError && e.requestId === "u";
    });
    unknown.end();
    await assert.rejects(stream.infer({ inputs: [inputsOf(1)[0]!] }), /missing required input/);
    assert.throws(
      () => stream.write({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [3], data: [1] }] }),
      InvalidArgumentError,
    );
    const id = stream.write({ inputs: inputsOf(7), id: "dup" });
    assert.throws(() => stream.write({ inputs: inputsOf(7), id: "dup" }), /already waiting/);
    stream.end();
    const seen: StreamResult[] = [];
    for await (const r of stream) seen.push(r);
    assert.deepEqual(
      seen.map((r) => [r.id, r.ok]),
      [[id, true]],
    );
    assert.throws(() => stream.write({ inputs: inputsOf(1) }), /after end/);
  });

  test("cancel() mid-stream: pending requests get AbortedError with the reason; the server drops them", async () => {
    const stream = client.stream("identity_fp64");
    const held = stream.infer(fp64);
    // Refused at once by the server, but a stream answers in request order: it waits behind the held one.
    const written = stream.write(wrongType);
    await untilHeld();
    stream.cancel(new Error("stop"));
    await assert.rejects(
      held,
      (e: unknown) => e instanceof AbortedError && (e.cause as Error).message === "stop",
    );
    const cancelled = await stream[Symbol.asyncIterator]().next();
    assert.equal(cancelled.value?.id, written);
    assert.ok(cancelled.value?.ok === false && cancelled.value.error instanceof AbortedError);
    assert.equal(
      (await stream[Symbol.asyncIterator]().next()).done,
      true,
      "cancel ends the iterator quietly",
    );
    await queueIsFree();
  });

  test("breaking out of for-await cancels the stream; so does aborting its signal", async () => {
    const stream = client.stream("identity_fp64");
    stream.write(wrongType); // refused at once: the first answer (answers come in request order)
    stream.write(fp64); // held by the batcher
    await untilHeld();
    for await (const r of stream) {
      assert.equal(r.ok, false);
      break;
    }
    await queueIsFree();

    const controller = new AbortController();
    const signalled = client.stream("identity_fp64", { signal: controller.signal });
    const pending = signalled.infer(fp64);
    await client.isServerLive(); // the request is on its way
    controller.abort("user left");
    await assert.rejects(pending, (e: unknown) => e instanceof AbortedError && e.cause === "user left");
    await queueIsFree();
    const late = client.stream("simple", { signal: controller.signal });
    await assert.rejects(late.infer({ inputs: inputsOf(1) }), AbortedError);
  });

  test("the stream deadline fails pending requests with DeadlineExceededError and the iterator throws it", async () => {
    const stream = client.stream("identity_fp64", { timeoutMs: 100 });
    const held = stream.write(fp64);
    const seen: StreamResult[] = [];
    await assert.rejects(
      (async () => {
        for await (const r of stream) seen.push(r);
      })(),
      (e: unknown) => e instanceof DeadlineExceededError && /deadline of 100 ms/.test(e.message),
    );
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.id, held);
    assert.ok(!seen[0]!.ok && seen[0]!.error instanceof DeadlineExceededError);
    await queueIsFree();
  });

  test("close() waits for an open stream to end; destroy() fails it with ClientClosedError; no socket leaks", async () => {
    const baseline = openTcpHandles();
    const c = createGrpcClient({ url: server.grpcAddress! });
    const stream = c.stream("simple");
    const answer = stream.infer({ inputs: inputsOf(3) });
    let closed = false;
    const closing = c.close().then(() => (closed = true));
    assert.equal((await answer).output("OUTPUT0")!.as("INT32")[0], 4);
    assert.equal(closed, false, "the stream is still open");
    stream.end();
    await closing;
    await expectTcpHandlesBackTo(baseline);

    const d = createGrpcClient({ url: server.grpcAddress! });
    const s = d.stream("identity_fp64");
    const held = s.infer(fp64);
    await d.isServerLive();
    await d.destroy(new Error("bye"));
    await assert.rejects(held, ClientClosedError);
    await queueIsFree();
    await expectTcpHandlesBackTo(baseline);
  });
});
