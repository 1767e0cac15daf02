// Every call of the HTTP client end to end against tbench-server (the reference server) on 127.0.0.1:0,
// with the bundled models: binary, JSON, BYTES, BOOL, FP16, INT64 and compression paths, and each error
// class the server can produce. Everything runs once per HTTP engine (undici's Pool, the wire pool, and the
// fetch transport on Node's own fetch: the one browsers and edge runtimes get).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { ModelConfig } from "@tbench/proto";
import { float16BitsToFloat32Array, float32ArrayToFloat16Bits } from "@tbench/proto";
import type { RunningServer } from "@tbench/server";
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
import type { InferenceClient } from "../inference-client.js";
import { startBundledServer } from "../testing/bundled-server.js";
import { createHttpClient } from "./http-client.js";

const LOADED = [
  "simple",
  "identity_fp32",
  "identity_bytes",
  "identity_bool",
  "identity_fp16",
  "identity_int64",
  "identity_uint64",
];

let server: RunningServer;
let client: InferenceClient;

/**
 * identity_fp64 reloaded so that its batcher holds a lone request for 60 s (waiting for a batch of 8) in a
 * queue of one: the next request is rejected as "queue full", and a held request ends only by its
 * deadline or abort. No test here waits for those 60 s, and none depends on timing.
 */
const HOLDING_CONFIG: ModelConfig = {
  name: "identity_fp64",
  platform: "onnxruntime_onnx",
  max_batch_size: 8,
  input: [{ name: "INPUT0", data_type: "TYPE_FP64", dims: ["-1"] }],
  output: [{ name: "OUTPUT0", data_type: "TYPE_FP64", dims: ["-1"] }],
  dynamic_batching: {
    preferred_batch_size: [8],
    max_queue_delay_microseconds: "60000000", // int64 fields are strings in proto3 JSON
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
  server = await startBundledServer(LOADED, { crashWorkerParameter: "test_crash_worker" });
});

after(async () => {
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

for (const engine of ["undici", "wire", "fetch"] as const) {
  describe(`engine ${engine}`, () => {
    before(() => {
      client = createHttpClient({ url: server.httpUrl, timeoutMs: 30_000, engine });
    });
    after(async () => {
      await client?.close();
    });

    describe("health and metadata", () => {
      test("live, ready, model ready", async () => {
        assert.equal(await client.isServerLive(), true);
        assert.equal(await client.isServerReady(), true);
        assert.equal(await client.isModelReady("simple"), true);
        assert.equal(await client.isModelReady("simple", "1"), true);
        assert.equal(await client.isModelReady("simple", "99"), false);
        assert.equal(await client.isModelReady("no_such_model"), false);
      });

      test("server metadata", async () => {
        const meta = await client.serverMetadata();
        assert.equal(meta.name, "tbench-server");
        assert.ok(meta.extensions.includes("binary_tensor_data"));
      });

      test("model metadata and config", async () => {
        const meta = await client.modelMetadata("simple");
        assert.equal(meta.name, "simple");
        assert.deepEqual(meta.versions, ["1"]);
        assert.deepEqual(
          meta.inputs.map((i) => [i.name, i.datatype, i.shape]),
          [
            ["INPUT0", "INT32", [-1, 16]],
            ["INPUT1", "INT32", [-1, 16]],
          ],
        );
        assert.equal((await client.modelMetadata("simple", "1")).name, "simple");
        const config = await client.modelConfig("simple");
        assert.equal(config.name, "simple");
        assert.equal(config.max_batch_size, 8);
      });
    });

    describe("repository", () => {
      test("index lists loaded and unloaded models; readyOnly lists the ready ones", async () => {
        const all = await client.repositoryIndex();
        assert.equal(all.find((e) => e.name === "simple")?.state, "READY");
        assert.ok(all.some((e) => e.name === "identity_int8"));
        const ready = await client.repositoryIndex({ readyOnly: true });
        assert.ok(ready.every((e) => e.state === "READY"));
        assert.ok(!ready.some((e) => e.name === "identity_int8"));
      });

      test("load, infer, unload (with unloadDependents)", async () => {
        await client.loadModel("identity_int8");
        assert.equal(await client.isModelReady("identity_int8"), true);
        const r = await client.infer("identity_int8", {
          inputs: [{ name: "INPUT0", datatype: "INT8", shape: [1, 3], data: new Int8Array([-128, 0, 127]) }],
        });
        assert.deepEqual([...r.output("OUTPUT0")!.as("INT8")], [-128, 0, 127]);
        await client.unloadModel("identity_int8", { unloadDependents: true });
        assert.equal(await client.isModelReady("identity_int8"), false);
      });

      test("load with a config override", async () => {
        await client.loadModel("identity_fp64", { config: HOLDING_CONFIG });
        const config = await client.modelConfig("identity_fp64");
        assert.equal(config.dynamic_batching?.default_queue_policy?.max_queue_size, 1);
      });

      test("an unknown model fails to load with the server's message; unloading it does nothing, as in Triton", async () => {
        await assert.rejects(
          client.loadModel("no_such_model"),
          (e: unknown) => e instanceof InferenceError && /no_such_model/.test(e.message),
        );
        await assert.rejects(
          client.loadModel("../no_such_model"),
          (e: unknown) => e instanceof InvalidArgumentError && /path traversal/.test(e.message),
        );
        await client.unloadModel("no_such_model");
      });
    });

    describe("infer", () => {
      test("simple: OUTPUT0 = a + b, OUTPUT1 = a - b (binary both ways)", async () => {
        const { a, b, inputs } = simpleInputs();
        const r = await client.infer("simple", { inputs, id: "req-7" });
        assert.equal(r.modelName, "simple");
        assert.equal(r.modelVersion, "1");
        assert.equal(r.id, "req-7");
        const sum = r.output("OUTPUT0")!;
        assert.deepEqual(sum.shape, [1, 16]);
        assert.equal(sum.datatype, "INT32");
        assert.ok(sum.raw !== undefined, "binary output");
        assert.deepEqual(
          [...sum.as("INT32")],
          [...a].map((x, i) => x + b[i]!),
        );
        assert.deepEqual(
          [...r.output("OUTPUT1")!.as("INT32")],
          [...a].map((x, i) => x - b[i]!),
        );
      });

      test("JSON both ways, and one requested output", async () => {
        const { a, inputs } = simpleInputs();
        const r = await client.infer("simple", {
          inputs: inputs.map((i) => ({ ...i, data: [...i.data] })),
          outputs: [{ name: "OUTPUT1" }],
          binaryInputs: false,
          binaryOutputs: false,
        });
        assert.deepEqual(
          r.outputs.map((o) => o.name),
          ["OUTPUT1"],
        );
        assert.equal(r.output("OUTPUT1")!.raw, undefined, "JSON output");
        assert.deepEqual(
          r.output("OUTPUT1")!.toArray(),
          [...a].map((x) => x - 1),
        );
      });

      test("classification: top-k of an output as BYTES 'value:index'", async () => {
        const r = await client.infer("identity_fp32", {
          inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 4], data: [1.5, 9, 0.5, 4] }],
          outputs: [{ name: "OUTPUT0", classification: 2 }],
        });
        const out = r.output("OUTPUT0")!;
        assert.equal(out.datatype, "BYTES");
        assert.deepEqual(
          out.strings().map((s) => s.split(":").slice(0, 2).map(Number)),
          [
            [9, 1],
            [4, 3],
          ],
        );
      });

      test("BYTES in and out: strings and byte arrays, binary and JSON", async () => {
        // onnxruntime-node holds string tensors as JS strings, so the server keeps UTF-8 without NUL bytes only
        const raw = new Uint8Array([0xe2, 0x82, 0xac, 10, 13]);
        const r = await client.infer("identity_bytes", {
          inputs: [
            { name: "INPUT0", datatype: "BYTES", shape: [1, 3], data: ["héllo", "", "x".repeat(1000)] },
          ],
        });
        assert.deepEqual(r.output("OUTPUT0")!.strings(), ["héllo", "", "x".repeat(1000)]);
        const r2 = await client.infer("identity_bytes", {
          inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 1], data: [raw] }],
        });
        assert.deepEqual([...r2.output("OUTPUT0")!.bytes()[0]!], [...raw]);
        const r3 = await client.infer("identity_bytes", {
          inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 2], data: ["a", "b"] }],
          binaryInputs: false,
          binaryOutputs: false,
        });
        assert.deepEqual(r3.output("OUTPUT0")!.strings(), ["a", "b"]);
      });

      test("BOOL: boolean[] and Uint8Array, one byte per element", async () => {
        const r = await client.infer("identity_bool", {
          inputs: [{ name: "INPUT0", datatype: "BOOL", shape: [1, 3], data: [true, false, true] }],
        });
        assert.deepEqual(r.output("OUTPUT0")!.toArray(), [true, false, true]);
        const r2 = await client.infer("identity_bool", {
          inputs: [{ name: "INPUT0", datatype: "BOOL", shape: [1, 2], data: new Uint8Array([0, 1]) }],
          binaryInputs: false,
          binaryOutputs: false,
        });
        assert.deepEqual(r2.output("OUTPUT0")!.toArray(), [false, true]);
      });

      test("FP16 as bit patterns, with the conversion helpers", async () => {
        const values = [0.5, -2, 1024, 0.099975586];
        const r = await client.infer("identity_fp16", {
          inputs: [
            { name: "INPUT0", datatype: "FP16", shape: [1, 4], data: float32ArrayToFloat16Bits(values) },
          ],
        });
        const bits = r.output("OUTPUT0")!.as("FP16");
        assert.deepEqual([...float16BitsToFloat32Array(bits)], [...new Float32Array(values)]);
      });

      test("INT64 beyond 2^53, binary", async () => {
        const data = new BigInt64Array([2n ** 62n + 1n, -(2n ** 63n), 0n]);
        const r = await client.infer("identity_int64", {
          inputs: [{ name: "INPUT0", datatype: "INT64", shape: [1, 3], data }],
        });
        assert.deepEqual([...r.output("OUTPUT0")!.as("INT64")], [...data]);
        const j = await client.infer("identity_int64", {
          inputs: [{ name: "INPUT0", datatype: "INT64", shape: [1, 2], data: [5n, -7n] }],
          binaryInputs: false,
        });
        assert.deepEqual(j.output("OUTPUT0")!.toArray(), [5n, -7n]);
      });

      test("INT64 and UINT64 as JSON both ways: every value exact, 2^53 + 1 to 2^64 - 1", async () => {
        const cases = [
          ["identity_int64", "INT64", [2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n), -1n]],
          ["identity_uint64", "UINT64", [2n ** 64n - 1n, 2n ** 53n + 1n, 2n ** 63n, 0n]],
        ] as const;
        for (const [model, datatype, values] of cases) {
          for (const binaryInputs of [false, true]) {
            const r = await client.infer(model, {
              inputs: [{ name: "INPUT0", datatype, shape: [1, values.length], data: [...values] }],
              binaryInputs,
              binaryOutputs: false,
            });
            const out = r.output("OUTPUT0")!;
            assert.equal(out.raw, undefined, "the output came back as JSON");
            assert.deepEqual(out.toArray(), [...values], `${datatype}, binaryInputs ${binaryInputs}`);
          }
        }
      });

      test("a 1 MiB FP32 tensor round trip; the output is a view where aligned", async () => {
        const data = Float32Array.from({ length: 262144 }, (_, i) => i * 0.5);
        const r = await client.infer("identity_fp32", {
          inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, data.length], data }],
        });
        const out = r.output("OUTPUT0")!;
        assert.deepEqual(out.as("FP32"), data);
        assert.equal(out.raw!.buffer, out.as("FP32").buffer, "a view of the response buffer, not a copy");
      });

      for (const algorithm of ["gzip", "deflate"] as const) {
        test(`${algorithm} request and response compression`, async () => {
          const compressed = createHttpClient({
            url: server.httpUrl,
            compression: { request: algorithm, response: true },
            engine,
          });
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
        const { inputs } = simpleInputs();
        const prepared = client.prepareInfer("simple", { inputs });
        assert.ok(prepared.byteLength > 128);
        const results = await Promise.all([prepared.send(), prepared.send(), prepared.send()]);
        for (const r of results) assert.equal(r.output("OUTPUT0")!.as("INT32")[15], 16);
      });

      test("statistics count the inferences", async () => {
        const before = (await client.modelStatistics("simple"))[0]!;
        await client.infer("simple", { inputs: simpleInputs().inputs });
        const after = (await client.modelStatistics("simple", "1"))[0]!;
        assert.equal(after.name, "simple");
        assert.equal(after.inferenceCount, before.inferenceCount + 1);
        assert.equal(after.inferenceStats.success.count, before.inferenceStats.success.count + 1);
        assert.ok(after.lastInference > 0);
        const all = await client.modelStatistics();
        assert.ok(all.some((s) => s.name === "identity_fp32"));
        await assert.rejects(client.modelStatistics(undefined, "1"), InvalidArgumentError);
      });
    });

    describe("errors from the server", () => {
      test("ModelNotFoundError for an unknown model (Triton's 404 'Request for unknown model')", async () => {
        await assert.rejects(
          client.infer("no_such_model", { inputs: simpleInputs().inputs, id: "r9" }),
          (e: unknown) => {
            assert.ok(e instanceof ModelNotFoundError);
            assert.equal(e.code, "NOT_FOUND");
            assert.equal(e.status, 404);
            assert.equal(e.requestId, "r9");
            assert.equal(e.serverMessage, "Request for unknown model: 'no_such_model' is not found");
            return true;
          },
        );
        await assert.rejects(client.modelMetadata("no_such_model"), ModelNotFoundError);
        await assert.rejects(client.modelConfig("no_such_model"), ModelNotFoundError);
        // A known model without the asked version is Triton's NOT_FOUND: 404 on every endpoint.
        await assert.rejects(
          client.modelMetadata("simple", "7"),
          (e: unknown) =>
            e instanceof ModelNotFoundError &&
            e.status === 404 &&
            e.serverMessage === "Request for unknown model: 'simple' version 7 is not found",
        );
      });

      test("InvalidArgumentError for a missing input or a wrong shape", async () => {
        const { inputs } = simpleInputs();
        await assert.rejects(
          client.infer("simple", { inputs: [inputs[0]!] }),
          (e: unknown) =>
            e instanceof InvalidArgumentError && e.status === 400 && /missing required input/.test(e.message),
        );
        await assert.rejects(
          client.infer("simple", { inputs: inputs.map((i) => ({ ...i, shape: [2, 8] })) }),
          (e: unknown) => e instanceof InvalidArgumentError && e.status === 400,
        );
      });

      test("UnavailableError when the queue is full (503 'Exceeds maximum queue size')", async () => {
        await client.loadModel("identity_fp64", { config: HOLDING_CONFIG });
        const controller = new AbortController();
        const calls = [0, 1].map((i) =>
          client.infer("identity_fp64", { ...fp64, id: `q${i}` }, { signal: controller.signal }).then(
            () => assert.fail("a held request cannot complete"),
            (e: unknown) => e,
          ),
        );
        const first = await Promise.race(calls); // the one that did not fit in the queue
        assert.ok(first instanceof UnavailableError);
        assert.equal(first.status, 503);
        assert.match(first.message, /Exceeds maximum queue size/);
        controller.abort(); // the other one is held in the queue until now
        const errors = await Promise.all(calls);
        assert.equal(errors.filter((e) => e instanceof UnavailableError).length, 1);
        assert.equal(errors.filter((e) => e instanceof AbortedError).length, 1);
      });

      test("DeadlineExceededError: the server's queue timeout (timeoutUs) and the client's timeoutMs", async () => {
        await client.loadModel("identity_fp64", { config: HOLDING_CONFIG });
        await assert.rejects(
          client.infer("identity_fp64", { ...fp64, timeoutUs: 1000 }),
          (e: unknown) => e instanceof DeadlineExceededError && e.status === 503,
        );
        await assert.rejects(
          client.infer("identity_fp64", fp64, { timeoutMs: 50 }),
          (e: unknown) => e instanceof DeadlineExceededError && e.status === undefined,
        );
      });

      test("AbortedError with the signal's reason", async () => {
        await client.loadModel("identity_fp64", { config: HOLDING_CONFIG });
        const controller = new AbortController();
        const call = client.infer("identity_fp64", fp64, { signal: controller.signal });
        setTimeout(() => controller.abort(new Error("changed my mind")), 20);
        await assert.rejects(
          call,
          (e: unknown) => e instanceof AbortedError && (e.cause as Error).message === "changed my mind",
        );
      });

      test("InternalServerError when the model instance dies (500)", async () => {
        await assert.rejects(
          client.infer("simple", { inputs: simpleInputs().inputs, parameters: { test_crash_worker: true } }),
          (e: unknown) => e instanceof InternalServerError && e.status === 500 && /died/.test(e.message),
        );
        // the server replaces the instance: the next request succeeds
        await client.infer("simple", { inputs: simpleInputs().inputs });
      });

      test("trace, logging and shared memory: UnsupportedError as over gRPC (status lists no region)", async () => {
        // tbench-server answers as a Triton built without these features: trace and logging 503 "... does not
        // support ...", shared-memory registration 501.
        for (const [call, status] of [
          [() => client.traceSettings(), 503],
          [() => client.updateTraceSettings({ trace_rate: "10" }, "simple"), 503],
          [() => client.logSettings(), 503],
          [() => client.updateLogSettings({ log_verbose_level: 1 }), 503],
          [() => client.systemSharedMemoryRegister("r", { key: "/k", byteSize: 64 }), 501],
        ] as const) {
          await assert.rejects(call(), (e: unknown) => e instanceof UnsupportedError && e.status === status);
        }
        assert.deepEqual(await client.systemSharedMemoryStatus(), []);
      });
    });

    describe("client-side errors against the server", () => {
      test("ConnectionError once the server is gone; ClientClosedError after close()", async () => {
        const other = await startBundledServer([]);
        const c = createHttpClient({ url: other.httpUrl, maxRetries: 0, engine });
        assert.equal(await c.isServerLive(), true);
        await other.close();
        await assert.rejects(c.isServerLive(), ConnectionError);
        await c.close();
        await assert.rejects(c.isServerLive(), ClientClosedError);
      });
    });
  });
}
