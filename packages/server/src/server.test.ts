import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { deflateSync, gunzipSync, gzipSync } from "node:zlib";
import { IDENTITY_DATATYPES, type IdentityDatatype } from "@tbench/model-builder";
import { parsePrometheusText } from "@tbench/proto";
import { silentLogger } from "./core/logger.js";
import { type RunningServer, startServer } from "./server.js";
import { binaryBody, type RawResponse, rawRequest, splitBinaryResponse } from "./testing/raw-http-client.js";
import { bundledConfig, createFixtureRepository, type FixtureRepository } from "./testing/test-fixtures.js";

const REPOSITORY = new URL("../../../examples/models", import.meta.url).pathname;
const MAX_INPUT = 4 * 1024 * 1024;

const range = (n: number, f: (i: number) => number) => Array.from({ length: n }, (_, i) => f(i));
const errorOf = (res: RawResponse) => (JSON.parse(res.body.toString()) as { error: string }).error;

/** Values for an identity round trip of `datatype`, as JSON values and as the binary bytes they encode to. */
function sampleValues(datatype: IdentityDatatype): {
  json: unknown[] | undefined;
  bytes: Buffer;
} {
  switch (datatype) {
    case "BOOL":
      return { json: [true, false, true], bytes: Buffer.from([1, 0, 1]) };
    case "UINT8":
      return { json: [0, 7, 255], bytes: Buffer.from(new Uint8Array([0, 7, 255]).buffer) };
    case "UINT16":
      return { json: [0, 7, 65535], bytes: Buffer.from(new Uint16Array([0, 7, 65535]).buffer) };
    case "UINT32":
      return { json: [0, 7, 4294967295], bytes: Buffer.from(new Uint32Array([0, 7, 4294967295]).buffer) };
    case "UINT64":
      return {
        json: [0, 7, 2 ** 53],
        bytes: Buffer.from(new BigUint64Array([0n, 7n, 2n ** 63n + 5n]).buffer),
      };
    case "INT8":
      return { json: [-128, 0, 127], bytes: Buffer.from(new Int8Array([-128, 0, 127]).buffer) };
    case "INT16":
      return { json: [-32768, 0, 32767], bytes: Buffer.from(new Int16Array([-32768, 0, 32767]).buffer) };
    case "INT32":
      return {
        json: [-(2 ** 31), 0, 2 ** 31 - 1],
        bytes: Buffer.from(new Int32Array([-(2 ** 31), 0, 2 ** 31 - 1]).buffer),
      };
    case "INT64":
      return {
        json: [-(2 ** 53), 0, 2 ** 53],
        bytes: Buffer.from(new BigInt64Array([-(2n ** 63n), 0n, 2n ** 62n + 3n]).buffer),
      };
    case "FP16":
      // 1.0, -2.0, NaN bits: FP16 travels only in binary.
      return { json: undefined, bytes: Buffer.from(new Uint16Array([0x3c00, 0xc000, 0x7e01]).buffer) };
    case "FP32":
      return {
        json: [0.5, -1.25, 3.4028234663852886e38],
        bytes: Buffer.from(new Float32Array([0.5, -1.25, Number.NaN]).buffer),
      };
    case "FP64":
      return {
        json: [0.1, -1e-300, 1e300],
        bytes: Buffer.from(new Float64Array([0.1, -1e-300, Number.POSITIVE_INFINITY]).buffer),
      };
    case "BYTES": {
      const words = ["", "tbench", "\u00e9\u00e8 \u{1f600}"];
      const encoded = Buffer.concat(
        words.map((w) => {
          const b = Buffer.from(w);
          const length = Buffer.alloc(4);
          length.writeUInt32LE(b.byteLength);
          return Buffer.concat([length, b]);
        }),
      );
      return { json: words, bytes: encoded };
    }
  }
}

describe("tbench-server end to end (real core, examples/models)", () => {
  let server: RunningServer;
  let url: string;

  before(async () => {
    server = await startServer({
      modelRepository: REPOSITORY,
      httpPort: 0,
      metricsPort: 0,
      modelControlMode: "explicit",
      loadModels: ["simple", ...IDENTITY_DATATYPES.map((t) => `identity_${t.toLowerCase()}`)],
      httpMaxInputSize: MAX_INPUT,
      logger: silentLogger,
    });
    url = server.httpUrl;
  });
  after(async () => {
    await server.close();
    await server.close();
  });

  const post = (path: string, body: unknown, headers: Record<string, string | number> = {}) =>
    rawRequest(url, path, {
      method: "POST",
      headers,
      body: typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body),
    });
  const simpleInputs = (a: number[], b: number[], rows = 1) => [
    { name: "INPUT0", datatype: "INT32", shape: [rows, 16], data: a },
    { name: "INPUT1", datatype: "INT32", shape: [rows, 16], data: b },
  ];

  test("health, server metadata, model metadata, readiness, config, statistics, repository", async () => {
    assert.equal((await rawRequest(url, "/v2/health/live")).status, 200);
    assert.equal((await rawRequest(url, "/v2/health/ready")).status, 200);
    const meta = JSON.parse((await rawRequest(url, "/v2")).body.toString());
    assert.equal(meta.name, "tbench-server");
    assert.ok(meta.extensions.includes("binary_tensor_data"));
    const model = JSON.parse((await rawRequest(url, "/v2/models/simple/versions/1")).body.toString());
    assert.deepEqual(model.inputs[1], { name: "INPUT1", datatype: "INT32", shape: [-1, 16] });
    assert.equal((await rawRequest(url, "/v2/models/simple/ready")).status, 200);
    assert.equal((await rawRequest(url, "/v2/models/mlp/ready")).status, 400);
    const config = JSON.parse((await rawRequest(url, "/v2/models/simple/config")).body.toString());
    assert.equal(config.name, "simple");
    assert.equal(config.max_batch_size, 8);
    assert.equal(config.input[0].data_type, "TYPE_INT32");
    const stats = JSON.parse((await rawRequest(url, "/v2/models/simple/stats")).body.toString());
    assert.equal(stats.model_stats[0].name, "simple");
    assert.equal(typeof stats.model_stats[0].inference_stats.success.count, "number");
    const all = JSON.parse((await rawRequest(url, "/v2/models/stats")).body.toString());
    assert.equal(all.model_stats.length, 1 + IDENTITY_DATATYPES.length);
    const index = JSON.parse((await post("/v2/repository/index", "")).body.toString()) as {
      name: string;
      state?: string;
    }[];
    assert.equal(index.find((e) => e.name === "simple")?.state, "READY");
    assert.ok(index.some((e) => e.name === "heavy"));
    const ready = JSON.parse(
      (await post("/v2/repository/index", { ready: true })).body.toString(),
    ) as unknown[];
    assert.equal(ready.length, 1 + IDENTITY_DATATYPES.length);
    assert.equal((await post("/v2/repository/models/identity_int8/unload", "")).status, 200);
    assert.equal((await rawRequest(url, "/v2/models/identity_int8/ready")).status, 400);
    assert.equal((await post("/v2/repository/models/identity_int8/load", "")).status, 200);
    assert.equal((await rawRequest(url, "/v2/models/identity_int8/ready")).status, 200);
  });

  test("a failed model lookup answers Triton's status for the core's code on every endpoint", async () => {
    const full = range(16, () => 1);
    const infer = (path: string) => post(path, { inputs: simpleInputs(full, full) });
    const expect = async (res: Promise<RawResponse>, status: number, message: string, what: string) => {
      const answer = await res;
      assert.equal(answer.status, status, `${what}: ${answer.body.toString()}`);
      assert.equal(errorOf(answer), message, what);
    };
    // A name the core never loaded (explicit mode): NOT_FOUND, 404 (ModelLifeCycle::GetModel, namespacing
    // off); statistics answer INVALID_ARG, 400, in TRITONSERVER_ServerModelStatistics' words.
    const never = "Request for unknown model: 'mlp' is not found";
    await expect(rawRequest(url, "/v2/models/mlp"), 404, never, "metadata, never loaded");
    await expect(rawRequest(url, "/v2/models/mlp/config"), 404, never, "config, never loaded");
    await expect(infer("/v2/models/mlp/infer"), 404, never, "infer, never loaded");
    const unavailable = "requested model 'mlp' is not available";
    await expect(rawRequest(url, "/v2/models/mlp/stats"), 400, unavailable, "stats, never loaded");
    await expect(
      rawRequest(url, "/v2/models/mlp/ready"),
      400,
      "Model version not ready",
      "ready, never loaded",
    );
    // A load of a name with no directory fails Triton's poll (INTERNAL, 500) and leaves the name unknown.
    const absent = "failed to load 'absent', failed to poll from model repository";
    await expect(post("/v2/repository/models/absent/load", ""), 500, absent, "load, absent");
    const unknown = "Request for unknown model: 'absent' is not found";
    await expect(rawRequest(url, "/v2/models/absent"), 404, unknown, "metadata, absent");
    // A known model without the asked version: NOT_FOUND, 404.
    const noVersion = "Request for unknown model: 'simple' version 7 is not found";
    await expect(rawRequest(url, "/v2/models/simple/versions/7"), 404, noVersion, "metadata, version 7");
    await expect(rawRequest(url, "/v2/models/simple/versions/7/config"), 404, noVersion, "config, version 7");
    const noStatsVersion = "requested model version is not available for model 'simple'";
    await expect(
      rawRequest(url, "/v2/models/simple/versions/7/stats"),
      400,
      noStatsVersion,
      "stats, version 7",
    );
    // An unloaded model: no available versions (NOT_FOUND, 404); its version not ready (UNAVAILABLE, 503).
    assert.equal((await post("/v2/repository/models/simple/unload", "")).status, 200);
    try {
      const none = "Request for unknown model: 'simple' has no available versions";
      await expect(rawRequest(url, "/v2/models/simple"), 404, none, "metadata, unloaded");
      await expect(infer("/v2/models/simple/infer"), 404, none, "infer, unloaded");
      const notReady = "Request for unknown model: 'simple' version 1 is not at ready state";
      await expect(rawRequest(url, "/v2/models/simple/versions/1"), 503, notReady, "metadata, unloaded v1");
      await expect(infer("/v2/models/simple/versions/1/infer"), 503, notReady, "infer, unloaded v1");
      const statsNone = "requested model 'simple' is not available";
      await expect(rawRequest(url, "/v2/models/simple/stats"), 400, statsNone, "stats, unloaded");
      // Readiness keeps its bare 200/400 answer.
      await expect(rawRequest(url, "/v2/models/simple/ready"), 400, "Model version not ready", "ready");
    } finally {
      assert.equal((await post("/v2/repository/models/simple/load", "")).status, 200);
    }
    assert.equal((await infer("/v2/models/simple/infer")).status, 200);
  });

  test("simple: sum and difference in JSON and binary, batch of 3, id echoed", async () => {
    const a = range(48, (i) => i * 1000 - 7);
    const b = range(48, (i) => 2 ** 31 - 1 - i);
    const wrap = (x: number) => x | 0;
    const res = await post("/v2/models/simple/infer", { id: "e2e", inputs: simpleInputs(a, b, 3) });
    assert.equal(res.status, 200);
    const body = JSON.parse(res.body.toString());
    assert.equal(body.id, "e2e");
    assert.equal(body.model_name, "simple");
    assert.equal(body.model_version, "1");
    const byName = new Map<string, { shape: number[]; data: number[] }>(
      body.outputs.map((o: { name: string }) => [o.name, o]),
    );
    assert.deepEqual(byName.get("OUTPUT0")!.shape, [3, 16]);
    assert.deepEqual(
      byName.get("OUTPUT0")!.data,
      a.map((x, i) => wrap(x + b[i]!)),
    );
    assert.deepEqual(
      byName.get("OUTPUT1")!.data,
      a.map((x, i) => wrap(x - b[i]!)),
    );

    const { body: bin, headerLength } = binaryBody(
      {
        inputs: [
          { name: "INPUT0", datatype: "INT32", shape: [3, 16], parameters: { binary_data_size: 192 } },
          { name: "INPUT1", datatype: "INT32", shape: [3, 16], parameters: { binary_data_size: 192 } },
        ],
        parameters: { binary_data_output: true },
      },
      [Buffer.from(new Int32Array(a).buffer), Buffer.from(new Int32Array(b).buffer)],
    );
    const binRes = await post("/v2/models/simple/infer", bin, {
      "Inference-Header-Content-Length": headerLength,
    });
    assert.equal(binRes.status, 200);
    const { json, rest } = splitBinaryResponse(binRes);
    const outputs = json["outputs"] as { name: string; parameters: { binary_data_size: number } }[];
    let offset = 0;
    for (const output of outputs) {
      const size = output.parameters.binary_data_size;
      assert.equal(size, 192);
      const values = Array.from(new Int32Array(new Uint8Array(rest.subarray(offset, offset + size)).buffer));
      offset += size;
      const expected = a.map((x, i) => wrap(output.name === "OUTPUT0" ? x + b[i]! : x - b[i]!));
      assert.deepEqual(values, expected, output.name);
    }
    assert.equal(offset, rest.byteLength);
  });

  test("classification (top-k strings) through the HTTP front end", async () => {
    const res = await post("/v2/models/identity_fp32/infer", {
      inputs: [
        {
          name: "INPUT0",
          datatype: "FP32",
          shape: [2, 4],
          data: [
            [0.25, 2, -1, 0.5],
            [3, 1, 4, 1.5],
          ],
        },
      ],
      outputs: [{ name: "OUTPUT0", parameters: { classification: 2 } }],
    });
    assert.equal(res.status, 200, res.body.toString());
    const out = JSON.parse(res.body.toString()).outputs[0];
    assert.equal(out.datatype, "BYTES");
    assert.deepEqual(out.shape, [2, 2]);
    assert.deepEqual(out.data, ["2.000000:1", "0.500000:3", "4.000000:2", "3.000000:0"]);
  });

  for (const datatype of IDENTITY_DATATYPES) {
    test(`identity_${datatype.toLowerCase()}: JSON and binary round trips`, async () => {
      const model = `/v2/models/identity_${datatype.toLowerCase()}/infer`;
      const sample = sampleValues(datatype);
      if (sample.json !== undefined) {
        const res = await post(model, {
          inputs: [{ name: "INPUT0", datatype, shape: [1, 3], data: sample.json }],
        });
        assert.equal(res.status, 200, res.body.toString());
        const out = JSON.parse(res.body.toString()).outputs[0];
        assert.equal(out.datatype, datatype);
        assert.deepEqual(out.shape, [1, 3]);
        if (datatype === "FP32")
          assert.deepEqual(
            out.data,
            sample.json.map((v) => Math.fround(v as number)),
          );
        else assert.deepEqual(out.data, sample.json);
      }
      const { body, headerLength } = binaryBody(
        {
          inputs: [
            {
              name: "INPUT0",
              datatype,
              shape: [1, 3],
              parameters: { binary_data_size: sample.bytes.byteLength },
            },
          ],
          outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }],
        },
        [sample.bytes],
      );
      const res = await post(model, body, { "Inference-Header-Content-Length": headerLength });
      assert.equal(res.status, 200, res.body.toString());
      const { json, rest } = splitBinaryResponse(res);
      const out = (json["outputs"] as { datatype: string; parameters: { binary_data_size: number } }[])[0]!;
      assert.equal(out.datatype, datatype);
      assert.equal(out.parameters.binary_data_size, sample.bytes.byteLength);
      assert.deepEqual(rest, sample.bytes);
    });
  }

  test("compressed requests and responses", async () => {
    const request = JSON.stringify({
      inputs: simpleInputs(
        range(16, (i) => i),
        range(16, () => 3),
      ),
    });
    const gz = await post("/v2/models/simple/infer", gzipSync(request), {
      "Content-Encoding": "gzip",
      "Accept-Encoding": "deflate;q=0.2, gzip",
    });
    assert.equal(gz.status, 200);
    assert.equal(gz.headers["content-encoding"], "gzip");
    const out = JSON.parse(gunzipSync(gz.body).toString()).outputs;
    assert.deepEqual(
      out.find((o: { name: string }) => o.name === "OUTPUT0").data,
      range(16, (i) => i + 3),
    );
    const df = await post("/v2/models/simple/infer", deflateSync(request), { "Content-Encoding": "deflate" });
    assert.equal(df.status, 200);
    assert.equal(df.headers["content-encoding"], undefined);
  });

  test("bad input: each gets its status and a message naming model, tensor and expectation", async () => {
    const infer = "/v2/models/simple/infer";
    const full = range(16, () => 1);
    const cases: [string, () => Promise<RawResponse>, number, string | RegExp][] = [
      [
        "malformed JSON (TritonJson's INTERNAL error, as Triton answers it)",
        () => post(infer, '{"inputs": ['),
        500,
        /^failed to parse the request JSON buffer: /,
      ],
      [
        "unknown model",
        () => post("/v2/models/nope/infer", { inputs: [] }),
        404,
        "Request for unknown model: 'nope' is not found",
      ],
      [
        "unknown version",
        () => post("/v2/models/simple/versions/7/infer", { inputs: simpleInputs(full, full) }),
        404,
        "Request for unknown model: 'simple' version 7 is not found",
      ],
      [
        "missing input",
        () => post(infer, { inputs: simpleInputs(full, full).slice(0, 1) }),
        400,
        /expected 2 inputs but got 1 inputs for model 'simple'.*missing required input\(s\) \['INPUT1'\]/,
      ],
      [
        "unknown input",
        () =>
          post(infer, {
            inputs: [
              ...simpleInputs(full, full),
              { name: "EXTRA", datatype: "INT32", shape: [1, 1], data: [1] },
            ],
          }),
        400,
        /'EXTRA'.*'simple'|'simple'.*'EXTRA'/,
      ],
      [
        "unknown output",
        () => post(infer, { inputs: simpleInputs(full, full), outputs: [{ name: "OUTPUT9" }] }),
        400,
        /'OUTPUT9'.*'simple'|'simple'.*'OUTPUT9'/,
      ],
      [
        "wrong datatype",
        () =>
          post(infer, {
            inputs: [
              { name: "INPUT0", datatype: "FP32", shape: [1, 16], data: full },
              simpleInputs(full, full)[1],
            ],
          }),
        400,
        /INPUT0.*FP32.*INT32|INPUT0.*INT32.*FP32/,
      ],
      [
        "wrong shape",
        () =>
          post(infer, {
            inputs: simpleInputs(
              range(8, () => 1),
              range(8, () => 1),
            ).map((i) => ({ ...i, shape: [1, 8] })),
          }),
        400,
        /unexpected shape for input 'INPUT0' for model 'simple'. Expected \[-1,16\], got \[1,8\]/,
      ],
      [
        "batch over max_batch_size",
        () =>
          post(infer, {
            inputs: simpleInputs(
              range(16 * 9, () => 1),
              range(16 * 9, () => 1),
              9,
            ),
          }),
        400,
        /batch-size must be <= 8 for 'simple'/,
      ],
      [
        "byte-size mismatch",
        () => {
          const { body, headerLength } = binaryBody(
            {
              inputs: [
                { name: "INPUT0", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 60 } },
                { name: "INPUT1", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } },
              ],
            },
            [Buffer.alloc(60), Buffer.alloc(64)],
          );
          return post(infer, body, { "Inference-Header-Content-Length": headerLength });
        },
        400,
        "[request id: <id_unknown>] input byte size mismatch for input 'INPUT0' for model 'simple'. Expected 64, got 60",
      ],
      [
        "Inference-Header-Content-Length beyond the body",
        () => post(infer, '{"inputs":[]}', { "Inference-Header-Content-Length": 99 }),
        400,
        "inference header size should be in range (0, 13), got: 99",
      ],
      [
        "truncated binary section",
        () => {
          const { body, headerLength } = binaryBody(
            {
              inputs: [
                { name: "INPUT0", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } },
              ],
            },
            [Buffer.alloc(10)],
          );
          return post(infer, body, { "Inference-Header-Content-Length": headerLength });
        },
        400,
        "unexpected size for input 'INPUT0', expecting 54 additional bytes for model 'simple'",
      ],
      [
        "bad compression",
        () => post(infer, Buffer.from("plain text"), { "Content-Encoding": "deflate" }),
        400,
        /^unable to decompress the deflate request body: /,
      ],
      [
        "oversize body",
        () => post(infer, Buffer.alloc(MAX_INPUT + 1, 32)),
        400,
        `request JSON size of ${MAX_INPUT + 1} bytes exceeds the maximum allowed input size of ${MAX_INPUT} bytes. Use --http-max-input-size to increase the limit.`,
      ],
      [
        "FP16 as JSON",
        () =>
          post("/v2/models/identity_fp16/infer", {
            inputs: [{ name: "INPUT0", datatype: "FP16", shape: [1, 1], data: [1] }],
          }),
        400,
        "receiving FP16 data via JSON is not supported. Please use the binary data format for input INPUT0",
      ],
    ];
    for (const [what, send, status, message] of cases) {
      const res = await send();
      assert.equal(res.status, status, `${what}: ${res.body.toString()}`);
      if (typeof message === "string") assert.equal(errorOf(res), message, what);
      else assert.match(errorOf(res), message, what);
    }
    // The server keeps serving.
    const ok = await post(infer, { inputs: simpleInputs(full, full) });
    assert.equal(ok.status, 200);
  });

  test("metrics after known traffic match exactly", async () => {
    const model = "identity_uint16";
    const before = parsePrometheusText(await (await fetch(server.metricsUrl!)).text());
    const labels = { model, version: "1" };
    const success0 = before.get("nv_inference_request_success", labels) ?? 0;
    const count0 = before.get("nv_inference_count", labels) ?? 0;
    const exec0 = before.get("nv_inference_exec_count", labels) ?? 0;
    // 5 requests of batch 2 and 3 of batch 1, sequentially (no dynamic batching on identity models).
    const send = (rows: number) =>
      post(`/v2/models/${model}/infer`, {
        inputs: [{ name: "INPUT0", datatype: "UINT16", shape: [rows, 4], data: range(rows * 4, (i) => i) }],
      });
    for (let i = 0; i < 5; i++) assert.equal((await send(2)).status, 200);
    for (let i = 0; i < 3; i++) assert.equal((await send(1)).status, 200);
    const afterText = await (await fetch(server.metricsUrl!)).text();
    const samples = parsePrometheusText(afterText);
    assert.equal(samples.get("nv_inference_request_success", labels)! - success0, 8);
    assert.equal(samples.get("nv_inference_count", labels)! - count0, 13);
    assert.equal(samples.get("nv_inference_exec_count", labels)! - exec0, 8);
    assert.equal(samples.get("nv_inference_pending_request_count", labels), 0);
    assert.ok(samples.get("nv_inference_request_duration_us", labels)! > 0);
    assert.ok(samples.get("nv_model_load_duration_secs", labels)! > 0);
    // The metrics agree with the statistics extension.
    const stats = JSON.parse((await rawRequest(url, `/v2/models/${model}/stats`)).body.toString())
      .model_stats[0];
    assert.equal(samples.get("nv_inference_request_success", labels), stats.inference_stats.success.count);
    assert.equal(samples.get("nv_inference_count", labels), stats.inference_count);
    for (const name of [
      "nv_inference_queue_duration_us",
      "nv_inference_compute_input_duration_us",
      "nv_inference_compute_infer_duration_us",
      "nv_inference_compute_output_duration_us",
      "nv_cpu_utilization",
      "nv_cpu_memory_total_bytes",
      "nv_cpu_memory_used_bytes",
    ]) {
      assert.ok(
        samples.samples.some((s) => s.name === name),
        name,
      );
    }
  });
});

describe("repository load and unload outside explicit mode", () => {
  let repo: FixtureRepository;
  before(() => {
    const config = bundledConfig("simple") + "\ninstance_group [ { count: 1, kind: KIND_CPU } ]\n";
    repo = createFixtureRepository({ simple: { config } });
  });
  after(() => repo?.remove());

  for (const mode of ["none", "poll"] as const) {
    test(`${mode}: load and unload answer 503 with Triton's message, and the model keeps serving`, async () => {
      const server = await startServer({
        modelRepository: repo.dir,
        httpPort: 0,
        metricsPort: false,
        modelControlMode: mode,
        logger: silentLogger,
      });
      try {
        for (const action of ["load", "unload"]) {
          const res = await rawRequest(server.httpUrl, `/v2/repository/models/simple/${action}`, {
            method: "POST",
            body: "",
          });
          assert.equal(res.status, 503, action);
          assert.equal(errorOf(res), "explicit model load / unload is not allowed if polling is enabled");
        }
        await assert.rejects(server.core.loadModel("absent"), {
          status: "UNAVAILABLE",
          message: "explicit model load / unload is not allowed if polling is enabled",
        });
        assert.equal(server.core.isModelReady("simple"), true);
      } finally {
        await server.close();
      }
    });
  }
});
