// The wire format of every non-infer call (method, path, body) as Triton's protocol documents it, and the
// parsing of the documented answers, against a node:http fake that records what it receives; over undici's
// Pool and over the fetch transport (Node's own fetch).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MalformedResponseError, ModelNotFoundError, UnsupportedError } from "../errors.js";
import type { InferenceClient } from "../inference-client.js";
import { type FakeServer, type SeenRequest, sendJson, startFakeServer } from "../testing/fake-server.js";
import { createHttpClient } from "./http-client.js";

/** Documented answers, by "METHOD path". */
const ANSWERS: Record<string, unknown> = {
  "GET /prefix/v2": {
    name: "triton",
    version: "2.50.0",
    extensions: ["binary_tensor_data", "classification"],
  },
  "GET /prefix/v2/models/my%20model/versions/3": {
    name: "my model",
    versions: ["3"],
    platform: "onnxruntime_onnx",
    inputs: [{ name: "x", datatype: "FP32", shape: [-1, 4] }],
    outputs: [{ name: "y", datatype: "INT64", shape: [-1] }],
  },
  "GET /prefix/v2/models/m/config": { name: "m", max_batch_size: 8 },
  "POST /prefix/v2/repository/index": [
    { name: "m", version: "1", state: "READY", reason: "" },
    { name: "n", state: "UNAVAILABLE", reason: "unloaded" },
    { name: "o" },
  ],
  "POST /prefix/v2/repository/models/m/load": {},
  "POST /prefix/v2/repository/models/m/unload": {},
  "GET /prefix/v2/models/m/stats": {
    model_stats: [
      {
        name: "m",
        version: "1",
        last_inference: 1700000000000,
        inference_count: 64,
        execution_count: 2,
        inference_stats: {
          success: { count: 2, ns: 2000 },
          fail: { count: 0, ns: 0 },
          queue: { count: 2, ns: 100 },
          compute_input: { count: 2, ns: 10 },
          compute_infer: { count: 2, ns: 1500 },
          compute_output: { count: 2, ns: 20 },
          cache_hit: { count: 0, ns: 0 },
        },
        batch_stats: [
          {
            batch_size: 32,
            compute_input: { count: 2, ns: 10 },
            compute_infer: { count: 2, ns: 1500 },
            compute_output: { count: 2, ns: 20 },
          },
        ],
      },
    ],
  },
  "GET /prefix/v2/models/stats": { model_stats: [] },
  "GET /prefix/v2/trace/setting": { trace_level: ["TIMESTAMPS"], trace_rate: "1000", trace_file: "" },
  "POST /prefix/v2/models/m/trace/setting": { trace_level: ["OFF"], trace_rate: "10" },
  "GET /prefix/v2/logging": {
    log_file: "",
    log_info: true,
    log_warnings: true,
    log_errors: true,
    log_verbose_level: 0,
    log_format: "default",
  },
  "POST /prefix/v2/logging": { log_verbose_level: 1 },
  "GET /prefix/v2/systemsharedmemory/status": [{ name: "r", key: "/shm", offset: 0, byte_size: 64 }],
  "GET /prefix/v2/systemsharedmemory/region/r/status": [{ name: "r", key: "/shm", offset: 8, byte_size: 64 }],
  "POST /prefix/v2/systemsharedmemory/region/r/register": {},
  "POST /prefix/v2/systemsharedmemory/region/r/unregister": {},
  "POST /prefix/v2/systemsharedmemory/unregister": {},
  "GET /prefix/v2/health/live": {},
};

let server: FakeServer;
let client: InferenceClient;
const last = (): SeenRequest => server.requests.at(-1)!;
const bodyOf = (r: SeenRequest) => (r.body.length === 0 ? undefined : JSON.parse(r.body.toString()));

before(async () => {
  server = await startFakeServer((req, res) => {
    const answer = ANSWERS[`${req.method} ${req.url}`];
    if (answer === undefined) sendJson(res, 404, { error: `no route ${req.method} ${req.url}` });
    else sendJson(res, 200, answer);
  });
});
after(async () => {
  await server.close();
});

for (const engine of ["undici", "fetch"] as const) {
  describe(`engine ${engine}`, () => {
    before(() => {
      client = createHttpClient({ url: `${server.url}/prefix/`, engine });
    });
    after(async () => {
      await client.close();
    });

    describe("metadata", () => {
      test("server metadata", async () => {
        assert.deepEqual(await client.serverMetadata(), ANSWERS["GET /prefix/v2"]);
      });
      test("model metadata with a version; names are percent-encoded", async () => {
        const meta = await client.modelMetadata("my model", "3");
        assert.deepEqual(meta.inputs[0], { name: "x", datatype: "FP32", shape: [-1, 4] });
        assert.equal(last().method, "GET");
      });
      test("model config", async () => {
        assert.equal((await client.modelConfig("m")).max_batch_size, 8);
      });
    });

    describe("repository", () => {
      test("index: POST with {} or {ready: true}", async () => {
        const index = await client.repositoryIndex();
        assert.deepEqual(bodyOf(last()), {});
        assert.equal(last().headers["content-type"], "application/json");
        assert.deepEqual(index, [
          { name: "m", version: "1", state: "READY", reason: "" },
          { name: "n", state: "UNAVAILABLE", reason: "unloaded" },
          { name: "o" },
        ]);
        await client.repositoryIndex({ readyOnly: true });
        assert.deepEqual(bodyOf(last()), { ready: true });
      });
      test("load: config as a JSON string parameter, files as base64 `file:` parameters", async () => {
        await client.loadModel("m");
        assert.deepEqual(bodyOf(last()), {});
        await client.loadModel("m", {
          config: { name: "m", max_batch_size: 4 },
          files: { "file:1/model.onnx": new Uint8Array([1, 2, 3]) },
        });
        assert.deepEqual(bodyOf(last()), {
          parameters: { config: '{"name":"m","max_batch_size":4}', "file:1/model.onnx": "AQID" },
        });
        await assert.rejects(
          client.loadModel("m", { files: { "file:1/model.onnx": new Uint8Array(1) } }),
          /requires `config`/,
        );
        await assert.rejects(
          client.loadModel("m", { config: "{}", files: { "1/model.onnx": new Uint8Array(1) } }),
          /must start with "file:"/,
        );
      });
      test("unload: the unload_dependents parameter", async () => {
        await client.unloadModel("m");
        assert.deepEqual(bodyOf(last()), { parameters: { unload_dependents: false } });
        await client.unloadModel("m", { unloadDependents: true });
        assert.deepEqual(bodyOf(last()), { parameters: { unload_dependents: true } });
      });
    });

    describe("statistics", () => {
      test("per model, camelCase, absent optional stats zeroed", async () => {
        const [s] = await client.modelStatistics("m");
        assert.equal(s!.inferenceCount, 64);
        assert.equal(s!.executionCount, 2);
        assert.equal(s!.lastInference, 1700000000000);
        assert.deepEqual(s!.inferenceStats.computeInfer, { count: 2, ns: 1500 });
        assert.deepEqual(s!.inferenceStats.cacheMiss, { count: 0, ns: 0 });
        assert.deepEqual(s!.batchStats, [
          {
            batchSize: 32,
            computeInput: { count: 2, ns: 10 },
            computeInfer: { count: 2, ns: 1500 },
            computeOutput: { count: 2, ns: 20 },
          },
        ]);
        assert.deepEqual(await client.modelStatistics(), []);
      });
    });

    describe("trace and log settings", () => {
      test("trace: GET global, POST per model with values as strings", async () => {
        assert.deepEqual(await client.traceSettings(), {
          trace_level: ["TIMESTAMPS"],
          trace_rate: "1000",
          trace_file: "",
        });
        const updated = await client.updateTraceSettings(
          { trace_level: ["OFF"], trace_rate: 10, trace_file: null },
          "m",
        );
        assert.deepEqual(bodyOf(last()), { trace_level: ["OFF"], trace_rate: "10", trace_file: null });
        assert.deepEqual(updated, { trace_level: ["OFF"], trace_rate: "10" });
      });
      test("logging: GET and POST", async () => {
        assert.equal((await client.logSettings()).log_verbose_level, 0);
        await client.updateLogSettings({ log_verbose_level: 1 });
        assert.deepEqual(bodyOf(last()), { log_verbose_level: 1 });
      });
    });

    describe("system shared memory", () => {
      test("status of all and of one region", async () => {
        assert.deepEqual(await client.systemSharedMemoryStatus(), [
          { name: "r", key: "/shm", offset: 0, byteSize: 64 },
        ]);
        assert.deepEqual(await client.systemSharedMemoryStatus("r"), [
          { name: "r", key: "/shm", offset: 8, byteSize: 64 },
        ]);
      });
      test("register sends key, offset, byte_size; unregister sends an empty body", async () => {
        await client.systemSharedMemoryRegister("r", { key: "/shm", byteSize: 64 });
        assert.deepEqual(bodyOf(last()), { key: "/shm", offset: 0, byte_size: 64 });
        await client.systemSharedMemoryUnregister("r");
        assert.equal(last().body.length, 0);
        await client.systemSharedMemoryUnregister();
        assert.equal(last().url, "/prefix/v2/systemsharedmemory/unregister");
      });
    });

    describe("missing extensions", () => {
      test("a plain 404 on an extension endpoint is UnsupportedError; a 404 about a model stays NOT_FOUND", async () => {
        const bare = await startFakeServer((req, res) => {
          if (req.url.startsWith("/v2/models/gone"))
            sendJson(res, 404, { error: "Request for unknown model: 'gone' is not found" });
          else sendJson(res, 404, { error: "Not Found" });
        });
        const c = createHttpClient({ url: bare.url, engine });
        try {
          await assert.rejects(
            c.logSettings(),
            (e: unknown) =>
              e instanceof UnsupportedError && /'logging' extension/.test(e.message) && e.status === 404,
          );
          await assert.rejects(
            c.traceSettings("m"),
            (e: unknown) => e instanceof UnsupportedError && /'trace'/.test(e.message),
          );
          await assert.rejects(
            c.systemSharedMemoryStatus(),
            (e: unknown) => e instanceof UnsupportedError && /'system_shared_memory'/.test(e.message),
          );
          await assert.rejects(c.modelStatistics("gone"), ModelNotFoundError);
          await assert.rejects(c.modelMetadata("other"), ModelNotFoundError);
        } finally {
          await c.close();
          await bare.close();
        }
      });
    });

    describe("answers that do not match the documented shape", () => {
      test("statistics without model_stats", async () => {
        const bad = await startFakeServer((_req, res) => sendJson(res, 200, { stats: [] }));
        const c = createHttpClient({ url: bad.url, engine });
        try {
          await assert.rejects(
            c.modelStatistics(),
            (e: unknown) => e instanceof MalformedResponseError && /'model_stats'/.test(e.message),
          );
          await assert.rejects(
            c.repositoryIndex(),
            (e: unknown) => e instanceof MalformedResponseError && /repositoryIndex/.test(e.message),
          );
        } finally {
          await c.close();
          await bad.close();
        }
      });
    });
  });
}
