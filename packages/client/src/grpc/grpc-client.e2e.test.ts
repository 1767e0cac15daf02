// Every call of the gRPC client end to end against tbench-server's gRPC front end on 127.0.0.1:0, checked
// against the HTTP client's answer to the same call where both transports answer the same, plus the
// gRPC-only paths: deadlines, aborts, retries, 64 MiB both ways, load with files, lifetime and leaks.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import type { ModelConfig } from "@tbench/proto";
import { float16BitsToFloat32Array, float32ArrayToFloat16Bits } from "@tbench/proto";
import { type RunningServer, silentLogger, startServer } from "@tbench/server";
import {
  AbortedError,
  ClientClosedError,
  ConnectionError,
  DeadlineExceededError,
  InferenceError,
  InternalServerError,
  InvalidArgumentError,
  ModelNotFoundError,
  UnavailableError,
  UnsupportedError,
} from "../errors.js";
import { createHttpClient } from "../http/http-client.js";
import type { InferenceClient } from "../inference-client.js";
import { expectTcpHandlesBackTo, openTcpHandles } from "../testing/leak-check.js";
import { createGrpcClient } from "./grpc-client.js";
import type { GrpcInferenceClient } from "./grpc-inference-client.js";

const REPOSITORY = new URL("../../../../examples/models", import.meta.url).pathname;
const LOADED = [
  "simple",
  "identity_fp32",
  "identity_bytes",
  "identity_bool",
  "identity_fp16",
  "identity_int64",
];

let server: RunningServer;
let client: GrpcInferenceClient;
let http: InferenceClient;

/** identity_fp64 reloaded so that a lone request waits 60 s for a batch in a queue of one (see the HTTP e2e test). */
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

before(async () => {
  server = await startServer({
    modelRepository: REPOSITORY,
    httpPort: 0,
    httpAddress: "127.0.0.1",
    metricsPort: false,
    grpcPort: 0,
    modelControlMode: "explicit",
    loadModels: LOADED,
    logger: silentLogger,
    crashWorkerParameter: "test_crash_worker",
  });
  client = createGrpcClient({ url: server.grpcAddress!, timeoutMs: 30_000 });
  http = createHttpClient({ url: server.httpUrl, timeoutMs: 30_000 });
});

after(async () => {
  await client?.close();
  await http?.close();
  await server?.close();
});

const simpleInputs = () => {
  const a = Int32Array.from({ length: 16 }, (_, i) => i);
  const b = Int32Array.from({ length: 16 }, () => 1);
  return {
    a,
    b,
    inputs: [
      { name: "INPUT0", datatype: "INT32" as const, shape: [1, 16], data: a },
      { name: "INPUT1", datatype: "INT32" as const, shape: [1, 16], data: b },
    ],
  };
};

describe("health, metadata and repository: the same answers as HTTP", () => {
  test("live, ready, model ready (false for an unknown model or version)", async () => {
    assert.equal(await client.isServerLive(), true);
    assert.equal(await client.isServerReady(), true);
    assert.equal(await client.isModelReady("simple"), true);
    assert.equal(await client.isModelReady("simple", "1"), true);
    assert.equal(await client.isModelReady("simple", "99"), false);
    assert.equal(await client.isModelReady("no_such_model"), false);
  });

  test("server metadata, model metadata, model config, repository index", async () => {
    assert.deepEqual(await client.serverMetadata(), await http.serverMetadata());
    assert.deepEqual(await client.modelMetadata("simple"), await http.modelMetadata("simple"));
    assert.deepEqual(await client.modelMetadata("simple", "1"), await http.modelMetadata("simple", "1"));
    assert.deepEqual(await client.modelConfig("simple"), await http.modelConfig("simple"));
    assert.equal((await client.modelConfig("simple")).max_batch_size, 8);
    assert.deepEqual(await client.repositoryIndex(), await http.repositoryIndex());
    assert.deepEqual(
      await client.repositoryIndex({ readyOnly: true }),
      await http.repositoryIndex({ readyOnly: true }),
    );
  });

  test("load, infer, unload; load with a config override; load with files", async () => {
    await client.loadModel("identity_int8");
    assert.equal(await client.isModelReady("identity_int8"), true);
    const r = await client.infer("identity_int8", {
      inputs: [{ name: "INPUT0", datatype: "INT8", shape: [1, 3], data: new Int8Array([-128, 0, 127]) }],
    });
    assert.deepEqual([...r.output("OUTPUT0")!.as("INT8")], [-128, 0, 127]);
    await client.unloadModel("identity_int8", { unloadDependents: true });
    assert.equal(await client.isModelReady("identity_int8"), false);

    await client.loadModel("identity_fp64", { config: HOLDING_CONFIG });
    const config = await client.modelConfig("identity_fp64");
    assert.equal(config.dynamic_batching?.default_queue_policy?.max_queue_size, 1);
    // proto3 cannot carry a field at its default (REJECT is enum 0), so gRPC's answer leaves it out.
    const { timeout_action, ...queuePolicy } = (await http.modelConfig("identity_fp64")).dynamic_batching!
      .default_queue_policy!;
    assert.equal(timeout_action, "REJECT");
    assert.deepEqual(config.dynamic_batching?.default_queue_policy, queuePolicy);

    // A model the repository does not have, from files sent in the call (the bytes travel as bytes_param).
    const onnx = readFileSync(new URL("identity_fp32/1/model.onnx", `file://${REPOSITORY}/`));
    const copyConfig = { ...(await client.modelConfig("identity_fp32")), name: "identity_copy" };
    await client.loadModel("identity_copy", { config: copyConfig, files: { "file:1/model.onnx": onnx } });
    const copy = await client.infer("identity_copy", {
      inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 2], data: [1.5, -2] }],
    });
    assert.deepEqual([...copy.output("OUTPUT0")!.as("FP32")], [1.5, -2]);
    await client.unloadModel("identity_copy");
    await assert.rejects(
      client.loadModel("x", { files: { "1/model.onnx": onnx } }),
      (e: unknown) => e instanceof InvalidArgumentError && /requires `config`/.test(e.message),
    );
  });

  test("an unknown model fails to load with the server's message; unloading it does nothing", async () => {
    await assert.rejects(
      client.loadModel("no_such_model"),
      (e: unknown) => e instanceof InferenceError && /no_such_model/.test(e.message),
    );
    await client.unloadModel("no_such_model");
  });
});

describe("infer", () => {
  test("simple: the same result as HTTP, outputs as views of the answer", async () => {
    const { a, b, inputs } = simpleInputs();
    const r = await client.infer("simple", { inputs, id: "req-7" });
    assert.equal(r.modelName, "simple");
    assert.equal(r.modelVersion, "1");
    assert.equal(r.id, "req-7");
    const sum = r.output("OUTPUT0")!;
    assert.deepEqual(sum.shape, [1, 16]);
    assert.deepEqual(
      [...sum.as("INT32")],
      [...a].map((x, i) => x + b[i]!),
    );
    const h = await http.infer("simple", { inputs, id: "req-7" });
    for (const name of ["OUTPUT0", "OUTPUT1"]) {
      assert.deepEqual(r.output(name)!.toArray(), h.output(name)!.toArray());
    }
    const one = await client.infer("simple", { inputs, outputs: [{ name: "OUTPUT1" }] });
    assert.deepEqual(
      one.outputs.map((o) => o.name),
      ["OUTPUT1"],
    );
  });

  test("classification, BYTES, BOOL, FP16 and INT64 beyond 2^53", async () => {
    const c = await client.infer("identity_fp32", {
      inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 4], data: [1.5, 9, 0.5, 4] }],
      outputs: [{ name: "OUTPUT0", classification: 2 }],
    });
    assert.equal(c.output("OUTPUT0")!.datatype, "BYTES");
    assert.deepEqual(
      c
        .output("OUTPUT0")!
        .strings()
        .map((s) => s.split(":").slice(0, 2).map(Number)),
      [
        [9, 1],
        [4, 3],
      ],
    );
    const raw = new Uint8Array([0xe2, 0x82, 0xac, 10, 13]);
    const s = await client.infer("identity_bytes", {
      inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 3], data: ["héllo", "", "x".repeat(1000)] }],
    });
    assert.deepEqual(s.output("OUTPUT0")!.strings(), ["héllo", "", "x".repeat(1000)]);
    const s2 = await client.infer("identity_bytes", {
      inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 1], data: [raw] }],
    });
    assert.deepEqual([...s2.output("OUTPUT0")!.bytes()[0]!], [...raw]);
    const bool = await client.infer("identity_bool", {
      inputs: [{ name: "INPUT0", datatype: "BOOL", shape: [1, 3], data: [true, false, true] }],
    });
    assert.deepEqual(bool.output("OUTPUT0")!.toArray(), [true, false, true]);
    const values = [0.5, -2, 1024, 0.099975586];
    const half = await client.infer("identity_fp16", {
      inputs: [{ name: "INPUT0", datatype: "FP16", shape: [1, 4], data: float32ArrayToFloat16Bits(values) }],
    });
    assert.deepEqual(
      [...float16BitsToFloat32Array(half.output("OUTPUT0")!.as("FP16"))],
      [...new Float32Array(values)],
    );
    const data = new BigInt64Array([2n ** 62n + 1n, -(2n ** 63n), 0n]);
    const big = await client.infer("identity_int64", {
      inputs: [{ name: "INPUT0", datatype: "INT64", shape: [1, 3], data }],
    });
    assert.deepEqual([...big.output("OUTPUT0")!.as("INT64")], [...data]);
  });

  test("a 64 MiB FP32 tensor both ways (no 4 MiB ceiling)", async () => {
    const data = new Float32Array(16 * 1024 * 1024);
    for (let i = 0; i < data.length; i += 4096) data[i] = i;
    const big = createGrpcClient({ url: server.grpcAddress!, timeoutMs: 60_000 });
    try {
      const r = await big.infer("identity_fp32", {
        inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, data.length], data }],
      });
      const out = r.output("OUTPUT0")!;
      assert.equal(out.raw!.byteLength, 64 * 1024 * 1024);
      assert.ok(Buffer.from(out.raw!).equals(Buffer.from(data.buffer)), "the same bytes came back");
    } finally {
      await big.close();
    }
  });

  test("a client that keeps grpc-js's 4 MiB receive limit gets a clear error", async () => {
    const limited = createGrpcClient({ url: server.grpcAddress!, maxReceiveMessageBytes: 4 * 1024 * 1024 });
    try {
      const data = new Float32Array(2 * 1024 * 1024); // 8 MiB
      await assert.rejects(
        limited.infer("identity_fp32", {
          inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, data.length], data }],
        }),
        (e: unknown) => e instanceof UnavailableError && /larger than max/.test(e.message),
      );
    } finally {
      await limited.close();
    }
  });

  for (const compression of ["gzip", "deflate"] as const) {
    test(`${compression} request compression`, async () => {
      const compressed = createGrpcClient({ url: server.grpcAddress!, compression });
      try {
        const data = Float32Array.from({ length: 1000 }, (_, i) => i % 7);
        const r = await compressed.infer("identity_fp32", {
          inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1000], data }],
        });
        assert.deepEqual(r.output("OUTPUT0")!.as("FP32"), data);
      } finally {
        await compressed.close();
      }
    });
  }

  test("prepareInfer encodes once and sends many times", async () => {
    const prepared = client.prepareInfer("simple", { inputs: simpleInputs().inputs, id: "p" });
    assert.ok(prepared.byteLength > 128);
    const results = await Promise.all([prepared.send(), prepared.send(), prepared.send()]);
    for (const r of results) {
      assert.equal(r.output("OUTPUT0")!.as("INT32")[15], 16);
      assert.equal(r.id, "p");
    }
    assert.throws(
      () =>
        client.prepareInfer("simple", {
          inputs: [{ name: "INPUT0", datatype: "INT32", shape: [2], data: [1] }],
        }),
      InvalidArgumentError,
    );
  });

  test("statistics count the inferences, as HTTP reports them", async () => {
    const before = (await client.modelStatistics("simple"))[0]!;
    await client.infer("simple", { inputs: simpleInputs().inputs });
    const after = (await client.modelStatistics("simple", "1"))[0]!;
    assert.equal(after.inferenceCount, before.inferenceCount + 1);
    assert.equal(after.inferenceStats.success.count, before.inferenceStats.success.count + 1);
    assert.ok(after.lastInference > 0);
    assert.deepEqual(after, (await http.modelStatistics("simple", "1"))[0]);
    const all = await client.modelStatistics();
    assert.ok(all.some((s) => s.name === "identity_fp32"));
    await assert.rejects(client.modelStatistics(undefined, "1"), InvalidArgumentError);
  });
});

describe("errors from the server", () => {
  test("ModelNotFoundError for an unknown model or version, with the request id", async () => {
    await assert.rejects(
      client.infer("no_such_model", { inputs: simpleInputs().inputs, id: "r9" }),
      (e: unknown) => {
        assert.ok(e instanceof ModelNotFoundError);
        assert.equal(e.requestId, "r9");
        assert.equal(e.serverMessage, "Request for unknown model: 'no_such_model' is not found");
        return true;
      },
    );
    await assert.rejects(client.modelMetadata("no_such_model"), ModelNotFoundError);
    await assert.rejects(client.modelConfig("no_such_model"), ModelNotFoundError);
    await assert.rejects(
      client.modelMetadata("simple", "7"),
      (e: unknown) =>
        e instanceof ModelNotFoundError &&
        e.serverMessage === "Request for unknown model: 'simple' version 7 is not found",
    );
  });

  test("InvalidArgumentError for a missing input, a wrong shape, a bad request before sending", async () => {
    const { inputs } = simpleInputs();
    await assert.rejects(
      client.infer("simple", { inputs: [inputs[0]!] }),
      (e: unknown) => e instanceof InvalidArgumentError && /missing required input/.test(e.message),
    );
    await assert.rejects(
      client.infer("simple", { inputs: inputs.map((i) => ({ ...i, shape: [2, 8] })) }),
      InvalidArgumentError,
    );
    await assert.rejects(
      client.infer("simple", { inputs: [{ name: "INPUT0", datatype: "INT8", shape: [1], data: [300] }] }),
      (e: unknown) => e instanceof InvalidArgumentError && /INT8 element 0 is 300/.test(e.message),
    );
  });

  test("UnavailableError when the queue is full; AbortedError for the held one", async () => {
    await client.loadModel("identity_fp64", { config: HOLDING_CONFIG });
    const controller = new AbortController();
    const calls = [0, 1].map((i) =>
      client.infer("identity_fp64", { ...fp64, id: `q${i}` }, { signal: controller.signal }).then(
        () => assert.fail("a held request cannot complete"),
        (e: unknown) => e,
      ),
    );
    const first = await Promise.race(calls);
    assert.ok(first instanceof UnavailableError);
    assert.match(first.message, /Exceeds maximum queue size/);
    controller.abort(new Error("enough"));
    const errors = await Promise.all(calls);
    assert.equal(errors.filter((e) => e instanceof UnavailableError).length, 1);
    const aborted = errors.find((e) => e instanceof AbortedError) as AbortedError;
    assert.equal((aborted.cause as Error).message, "enough");
  });

  test("DeadlineExceededError: the server's queue timeout and the client's gRPC deadline", async () => {
    await client.loadModel("identity_fp64", { config: HOLDING_CONFIG });
    await assert.rejects(
      client.infer("identity_fp64", { ...fp64, timeoutUs: 1000 }),
      (e: unknown) => e instanceof DeadlineExceededError && /timeout/i.test(e.message),
    );
    await assert.rejects(
      client.infer("identity_fp64", fp64, { timeoutMs: 50 }),
      (e: unknown) => e instanceof DeadlineExceededError && /deadline of 50 ms exceeded/.test(e.message),
    );
    const short = createGrpcClient({ url: server.grpcAddress!, timeoutMs: 40 });
    try {
      await assert.rejects(short.infer("identity_fp64", fp64), DeadlineExceededError);
    } finally {
      await short.close();
    }
  });

  test("an aborted signal rejects at once; an abort mid-call cancels it (the server's queue frees up)", async () => {
    await client.loadModel("identity_fp64", { config: HOLDING_CONFIG });
    await assert.rejects(
      client.infer("identity_fp64", fp64, { signal: AbortSignal.abort("no") }),
      (e: unknown) => e instanceof AbortedError && e.cause === "no",
    );
    const controller = new AbortController();
    const call = client.infer("identity_fp64", fp64, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("changed my mind")), 20);
    await assert.rejects(
      call,
      (e: unknown) => e instanceof AbortedError && (e.cause as Error).message === "changed my mind",
    );
    // The cancelled request leaves the queue of one, so a later one is queued (not refused) and times out.
    // The server learns of the cancel asynchronously: probe until it has (a missed cancel holds for 60 s).
    for (const until = Date.now() + 30_000; ; ) {
      const e = await client
        .infer("identity_fp64", { ...fp64, timeoutUs: 1000 })
        .catch((error: unknown) => error);
      if (e instanceof DeadlineExceededError) break;
      assert.ok(e instanceof UnavailableError && Date.now() < until, `the server still holds it: ${e}`);
      await delay(20);
    }
  });

  test("InternalServerError when the model instance dies; the next request succeeds", async () => {
    await assert.rejects(
      client.infer("simple", { inputs: simpleInputs().inputs, parameters: { test_crash_worker: true } }),
      (e: unknown) => e instanceof InternalServerError && /died/.test(e.message),
    );
    await client.infer("simple", { inputs: simpleInputs().inputs });
  });

  test("trace, logging and shared memory: unsupported as over HTTP (status lists no region)", async () => {
    for (const call of [
      () => client.traceSettings(),
      () => client.updateTraceSettings({ trace_rate: "10" }, "simple"),
      () => client.logSettings(),
      () => client.updateLogSettings({ log_verbose_level: 1 }),
      () => client.systemSharedMemoryRegister("r", { key: "/k", byteSize: 64 }),
      () => client.systemSharedMemoryUnregister(),
    ]) {
      await assert.rejects(call(), UnsupportedError);
    }
    // Triton's gRPC status RPC answers an empty list where its HTTP endpoint is absent on this server.
    assert.deepEqual(await client.systemSharedMemoryStatus(), []);
    await assert.rejects(client.systemSharedMemoryStatus("r0"), ModelNotFoundError);
  });
});

describe("options, retries and lifetime", () => {
  test("bad options are InvalidArgumentError naming the option", () => {
    assert.throws(
      () => createGrpcClient({ url: "http://127.0.0.1:8001" }),
      (e: unknown) => e instanceof InvalidArgumentError && /'url'/.test(e.message),
    );
    assert.throws(
      () => createGrpcClient({ url: "grpc://h:1", tls: {} }),
      (e: unknown) => e instanceof InvalidArgumentError && /grpcs/.test(e.message),
    );
    assert.throws(
      () => createGrpcClient({ url: "h:1", loadBalancing: "random" as never }),
      (e: unknown) => e instanceof InvalidArgumentError && /'loadBalancing'/.test(e.message),
    );
    assert.throws(
      () => createGrpcClient({ url: "h:1", timeoutMs: -5 }),
      (e: unknown) => e instanceof InvalidArgumentError && /'timeoutMs'.*given -5/.test(e.message),
    );
  });

  test("ConnectionError before sending is retried for infer only when opted in", async () => {
    const other = await startServer({
      modelRepository: REPOSITORY,
      httpPort: 0,
      httpAddress: "127.0.0.1",
      metricsPort: false,
      grpcPort: 0,
      modelControlMode: "explicit",
      logger: silentLogger,
    });
    const address = other.grpcAddress!;
    await other.close();
    const c = createGrpcClient({
      url: address,
      maxRetries: 2,
      backoff: { initialDelayMs: 1, maxDelayMs: 2 },
    });
    try {
      await assert.rejects(c.isServerLive(), (e: unknown) => e instanceof ConnectionError && !e.requestSent);
      await assert.rejects(c.infer("simple", { inputs: simpleInputs().inputs }), ConnectionError);
    } finally {
      await c.close();
    }
  });

  test("close waits for calls in flight, then calls reject with ClientClosedError; no socket stays open", async () => {
    const baseline = openTcpHandles();
    const c = createGrpcClient({ url: server.grpcAddress! });
    assert.equal(await c.isServerLive(), true);
    const inflight = c.infer("simple", { inputs: simpleInputs().inputs });
    const closed = c.close();
    await assert.rejects(c.isServerLive(), ClientClosedError);
    assert.equal((await inflight).output("OUTPUT0")!.as("INT32")[0], 1);
    await closed;
    await c.close(); // idempotent
    assert.throws(() => c.stream("simple").write({ inputs: simpleInputs().inputs }), ClientClosedError);
    await expectTcpHandlesBackTo(baseline);
  });

  test("destroy fails calls in flight with ClientClosedError (cause kept); asyncDispose closes", async () => {
    await client.loadModel("identity_fp64", { config: HOLDING_CONFIG });
    const baseline = openTcpHandles();
    const c = createGrpcClient({ url: server.grpcAddress! });
    const held = c.infer("identity_fp64", fp64);
    await c.isServerLive(); // the held call is on the wire by now
    const reason = new Error("shutting down");
    await c.destroy(reason);
    await assert.rejects(held, (e: unknown) => e instanceof ClientClosedError && e.cause === reason);
    await expectTcpHandlesBackTo(baseline);
    {
      await using d = createGrpcClient({ url: server.grpcAddress! });
      assert.equal(await d.isServerReady(), true);
    }
    await expectTcpHandlesBackTo(baseline);
  });
});
