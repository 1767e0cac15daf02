import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, test } from "node:test";
import { deflateSync, gunzipSync, gzipSync, inflateSync } from "node:zlib";
import { silentLogger } from "../core/logger.js";
import { createFakeCore, type FakeCore } from "../testing/fake-core.js";
import { binaryBody, rawRequest, splitBinaryResponse } from "../testing/raw-http-client.js";
import { createHttpFrontEnd, type HttpFrontEnd } from "./http-server.js";

const MAX_INPUT = 1 << 20;

function int32Bytes(values: number[]): Buffer {
  return Buffer.from(new Int32Array(values).buffer);
}

function range(n: number, f: (i: number) => number): number[] {
  return Array.from({ length: n }, (_, i) => f(i));
}

describe("HTTP front end (fake core)", { timeout: 60_000 }, () => {
  let core: FakeCore;
  let server: HttpFrontEnd;
  let url: string;

  before(async () => {
    core = createFakeCore();
    server = await createHttpFrontEnd({
      core,
      port: 0,
      address: "127.0.0.1",
      maxInputSize: MAX_INPUT,
      logger: silentLogger,
    });
    url = server.url;
  });
  after(async () => {
    await server.close();
  });

  const postJson = (path: string, body: unknown, headers: Record<string, string | number> = {}) =>
    rawRequest(url, path, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const errorOf = (body: Buffer) => (JSON.parse(body.toString()) as { error: string }).error;

  test("health, server metadata, unknown paths and methods", async () => {
    assert.equal((await rawRequest(url, "/v2/health/live")).status, 200);
    assert.equal((await rawRequest(url, "/v2/health/ready")).status, 200);
    const meta = await rawRequest(url, "/v2");
    assert.equal(meta.status, 200);
    assert.deepEqual(JSON.parse(meta.body.toString()), {
      name: "tbench-server",
      version: "0.1.0",
      extensions: ["binary_tensor_data"],
    });
    const missing = await rawRequest(url, "/v2/nothing");
    assert.equal(missing.status, 404);
    assert.equal(errorOf(missing.body), "Not Found");
    assert.equal((await rawRequest(url, "/v2/models/simple/versions/x")).status, 404);
    const wrongMethod = await rawRequest(url, "/v2/health/live", { method: "POST" });
    assert.equal(wrongMethod.status, 405);
    assert.equal(errorOf(wrongMethod.body), "Method Not Allowed");
    assert.equal((await rawRequest(url, "/v2/models/simple/infer")).status, 405);
  });

  test("model metadata, ready, config, stats; unknown model 400, unknown version 404, like Triton", async () => {
    const meta = await rawRequest(url, "/v2/models/simple");
    assert.equal(meta.status, 200);
    const parsed = JSON.parse(meta.body.toString()) as { inputs: { shape: number[] }[] };
    assert.deepEqual(parsed.inputs[0], { name: "INPUT0", datatype: "INT32", shape: [-1, 16] });
    assert.equal((await rawRequest(url, "/v2/models/simple/versions/1")).status, 200);
    assert.equal((await rawRequest(url, "/v2/models/simple/ready")).status, 200);
    const notReady = await rawRequest(url, "/v2/models/simple/versions/2/ready");
    assert.equal(notReady.status, 400);
    assert.equal(errorOf(notReady.body), "Model version not ready");
    const unknown = await rawRequest(url, "/v2/models/nope");
    assert.equal(unknown.status, 400);
    assert.equal(errorOf(unknown.body), "Request for unknown model: 'nope' is not found");
    // A known model without the asked version is the core's NOT_FOUND: 404 on every endpoint.
    for (const path of ["/v2/models/simple/versions/2", "/v2/models/simple/versions/2/config"]) {
      const noVersion = await rawRequest(url, path);
      assert.equal(noVersion.status, 404, path);
      assert.equal(errorOf(noVersion.body), "Request for unknown model: 'simple' version 2 is not found");
    }
    const config = await rawRequest(url, "/v2/models/simple/config");
    assert.equal(JSON.parse(config.body.toString()).max_batch_size, 8);
    const stats = JSON.parse((await rawRequest(url, "/v2/models/simple/stats")).body.toString());
    assert.equal(stats.model_stats.length, 1);
    assert.equal(stats.model_stats[0].name, "simple");
    const all = JSON.parse((await rawRequest(url, "/v2/models/stats")).body.toString());
    assert.ok(all.model_stats.length > 10);
  });

  test("repository index, unload, load", async () => {
    const index = await postJson("/v2/repository/index", "");
    assert.equal(index.status, 200);
    assert.ok((JSON.parse(index.body.toString()) as unknown[]).length > 10);
    assert.equal((await postJson("/v2/repository/models/scores/unload", {})).status, 200);
    assert.equal((await rawRequest(url, "/v2/models/scores/ready")).status, 400);
    const unloaded = await rawRequest(url, "/v2/models/scores");
    assert.equal(unloaded.status, 404);
    assert.equal(errorOf(unloaded.body), "Request for unknown model: 'scores' has no available versions");
    assert.equal((await postJson("/v2/repository/models/scores/load", "")).status, 200);
    assert.equal((await rawRequest(url, "/v2/models/scores/ready")).status, 200);
    const bad = await postJson("/v2/repository/index", { ready: "yes" });
    assert.equal(bad.status, 400);
    assert.equal(errorOf(bad.body), "Invalid value for 'ready': expected a boolean");
    const failed = await postJson("/v2/repository/models/absent/load", "");
    assert.equal(failed.status, 500);
    assert.equal(errorOf(failed.body), "failed to load 'absent', failed to poll from model repository");
  });

  test("infer with JSON tensors (flat and nested) computes sum and difference, echoes id", async () => {
    const a = range(16, (i) => i);
    const b = range(16, (i) => 100 - 3 * i);
    const res = await postJson("/v2/models/simple/infer", {
      id: "req-1",
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: a },
        { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: [b] },
      ],
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers["content-type"], "application/json");
    const body = JSON.parse(res.body.toString());
    assert.equal(body.id, "req-1");
    assert.equal(body.model_name, "simple");
    assert.equal(body.model_version, "1");
    assert.deepEqual(body.outputs[0], {
      name: "OUTPUT0",
      datatype: "INT32",
      shape: [1, 16],
      data: a.map((x, i) => x + b[i]!),
    });
    assert.deepEqual(
      body.outputs[1].data,
      a.map((x, i) => x - b[i]!),
    );
  });

  test("infer with binary inputs and binary outputs; header length and sizes", async () => {
    const a = range(32, (i) => i * 7);
    const b = range(32, (i) => -i);
    const { body, headerLength } = binaryBody(
      {
        inputs: [
          { name: "INPUT0", datatype: "INT32", shape: [2, 16], parameters: { binary_data_size: 128 } },
          { name: "INPUT1", datatype: "INT32", shape: [2, 16], parameters: { binary_data_size: 128 } },
        ],
        outputs: [{ name: "OUTPUT1", parameters: { binary_data: true } }, { name: "OUTPUT0" }],
      },
      [int32Bytes(a), int32Bytes(b)],
    );
    const res = await rawRequest(url, "/v2/models/simple/infer", {
      method: "POST",
      headers: { "Inference-Header-Content-Length": headerLength },
      body,
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers["content-type"], "application/octet-stream");
    const { json, rest } = splitBinaryResponse(res);
    const outputs = json["outputs"] as {
      name: string;
      parameters?: { binary_data_size: number };
      data?: number[];
    }[];
    assert.deepEqual(
      outputs.map((o) => o.name),
      ["OUTPUT0", "OUTPUT1"],
    );
    assert.deepEqual(
      outputs[0]!.data,
      a.map((x, i) => x + b[i]!),
    );
    assert.deepEqual(outputs[1]!.parameters, { binary_data_size: 128 });
    assert.deepEqual(
      Array.from(new Int32Array(new Uint8Array(rest).buffer)),
      a.map((x, i) => x - b[i]!),
    );
    // The core saw TypedArrays viewing the body.
    const last = core.received.at(-1)!;
    assert.ok(last.inputs[0]!.data instanceof Int32Array);
  });

  test("binary_data_output sends every output in binary; misaligned binary input is copied", async () => {
    const header = {
      inputs: [{ name: "INPUT0", datatype: "FP64", shape: [1, 3], parameters: { binary_data_size: 24 } }],
      parameters: { binary_data_output: true },
    };
    let json = Buffer.from(JSON.stringify(header));
    if (json.byteLength % 8 === 0) json = Buffer.from(JSON.stringify({ ...header, id: "x" }));
    const values = new Float64Array([1.5, -2.25, 1e300]);
    const res = await rawRequest(url, "/v2/models/identity_fp64/infer", {
      method: "POST",
      headers: { "Inference-Header-Content-Length": json.byteLength },
      body: Buffer.concat([json, Buffer.from(values.buffer)]),
    });
    assert.equal(res.status, 200);
    const { rest } = splitBinaryResponse(res);
    assert.deepEqual(
      Array.from(new Float64Array(rest.buffer.slice(rest.byteOffset, rest.byteOffset + 24))),
      [1.5, -2.25, 1e300],
    );
  });

  test("BYTES, BOOL and FP16 round trips", async () => {
    const words = ["", "hello", "wörld", "x".repeat(300)];
    const json = await postJson("/v2/models/identity_bytes/infer", {
      inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 4], data: words }],
    });
    assert.deepEqual(JSON.parse(json.body.toString()).outputs[0].data, words);
    const bools = await postJson("/v2/models/identity_bool/infer", {
      inputs: [{ name: "INPUT0", datatype: "BOOL", shape: [1, 3], data: [true, false, true] }],
    });
    assert.deepEqual(JSON.parse(bools.body.toString()).outputs[0].data, [true, false, true]);
    const encoded = Buffer.concat(
      words.map((w) => {
        const bytes = Buffer.from(w);
        const length = Buffer.alloc(4);
        length.writeUInt32LE(bytes.byteLength);
        return Buffer.concat([length, bytes]);
      }),
    );
    const bin = binaryBody(
      {
        inputs: [
          {
            name: "INPUT0",
            datatype: "BYTES",
            shape: [1, 4],
            parameters: { binary_data_size: encoded.byteLength },
          },
        ],
        outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }],
      },
      [encoded],
    );
    const res = await rawRequest(url, "/v2/models/identity_bytes/infer", {
      method: "POST",
      headers: { "Inference-Header-Content-Length": bin.headerLength },
      body: bin.body,
    });
    const split = splitBinaryResponse(res);
    assert.deepEqual(split.rest, encoded);
    const half = Buffer.from(new Uint16Array([0x3c00, 0xc000]).buffer);
    const fp16 = binaryBody(
      { inputs: [{ name: "INPUT0", datatype: "FP16", shape: [1, 2], parameters: { binary_data_size: 4 } }] },
      [half],
    );
    const jsonOut = await rawRequest(url, "/v2/models/identity_fp16/infer", {
      method: "POST",
      headers: { "Inference-Header-Content-Length": fp16.headerLength },
      body: fp16.body,
    });
    assert.equal(jsonOut.status, 400);
    assert.equal(
      errorOf(jsonOut.body),
      "sending FP16 data via JSON is not supported. Please use the binary data format for output",
    );
    const fp16Json = await postJson("/v2/models/identity_fp16/infer", {
      inputs: [{ name: "INPUT0", datatype: "FP16", shape: [1, 1], data: [1] }],
    });
    assert.equal(fp16Json.status, 400);
    assert.equal(
      errorOf(fp16Json.body),
      "receiving FP16 data via JSON is not supported. Please use the binary data format for input INPUT0",
    );
  });

  test("classification returns Triton's value:index strings per batch row", async () => {
    const res = await postJson("/v2/models/scores/infer", {
      inputs: [
        {
          name: "INPUT0",
          datatype: "FP32",
          shape: [2, 5],
          data: [
            [0.1, 0.7, 0.2, 0.7, 0],
            [5, 4, 3, 2, 1],
          ],
        },
      ],
      outputs: [{ name: "OUTPUT0", parameters: { classification: 2 } }],
    });
    assert.equal(res.status, 200);
    const out = JSON.parse(res.body.toString()).outputs[0];
    assert.equal(out.datatype, "BYTES");
    assert.deepEqual(out.shape, [2, 2]);
    assert.deepEqual(out.data, ["0.700000:1", "0.700000:3", "5.000000:0", "4.000000:1"]);
  });

  test("gzip and deflate request bodies, Accept-Encoding responses", async () => {
    const request = {
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: range(16, (i) => i) },
        { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: range(16, () => 1) },
      ],
    };
    const gz = await rawRequest(url, "/v2/models/simple/infer", {
      method: "POST",
      headers: { "Content-Encoding": "gzip", "Accept-Encoding": "gzip" },
      body: gzipSync(JSON.stringify(request)),
    });
    assert.equal(gz.status, 200);
    assert.equal(gz.headers["content-encoding"], "gzip");
    assert.deepEqual(
      JSON.parse(gunzipSync(gz.body).toString()).outputs[0].data,
      range(16, (i) => i + 1),
    );
    const df = await rawRequest(url, "/v2/models/simple/infer", {
      method: "POST",
      headers: { "Content-Encoding": "deflate", "Accept-Encoding": "gzip;q=0.5, deflate;q=0.9" },
      body: deflateSync(JSON.stringify(request)),
    });
    assert.equal(df.headers["content-encoding"], "deflate");
    assert.deepEqual(
      JSON.parse(inflateSync(df.body).toString()).outputs[1].data,
      range(16, (i) => i - 1),
    );
    const bad = await rawRequest(url, "/v2/models/simple/infer", {
      method: "POST",
      headers: { "Content-Encoding": "gzip" },
      body: "not gzip at all",
    });
    assert.equal(bad.status, 400);
    assert.match(errorOf(bad.body), /^unable to decompress the gzip request body: /);
    // Triton inflates with zlib's automatic header detection: a zlib stream sent as gzip is taken too.
    const swapped = await rawRequest(url, "/v2/models/simple/infer", {
      method: "POST",
      headers: { "Content-Encoding": "gzip" },
      body: deflateSync(JSON.stringify(request)),
    });
    assert.equal(swapped.status, 200);
    const empty = await rawRequest(url, "/v2/models/simple/infer", {
      method: "POST",
      headers: { "Content-Encoding": "deflate" },
      body: "",
    });
    assert.equal(empty.status, 400);
    assert.equal(errorOf(empty.body), "nothing to be decompressed");
    const unsupported = await rawRequest(url, "/v2/models/simple/infer", {
      method: "POST",
      headers: { "Content-Encoding": "br" },
      body: "{}",
    });
    assert.equal(unsupported.status, 501);
    assert.equal(errorOf(unsupported.body), "Unsupported compression type");
  });

  test("bad wire input answers with Triton's status and words", async () => {
    // TritonJson's failures are INTERNAL in Triton's HTTP server (500); its own checks are 400.
    const cases: [string, Record<string, string | number>, string | Buffer, number, RegExp | string][] = [
      ["malformed JSON", {}, "{not json", 500, /^failed to parse the request JSON buffer: /],
      ["blank JSON", {}, "  ", 500, "failed to parse the request JSON buffer: The document is empty. at 2"],
      [
        "no inputs",
        {},
        "{}",
        500,
        "Unable to parse 'inputs': attempt to access non-existing object member 'inputs'",
      ],
      [
        "unknown datatype with JSON data",
        {},
        JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "FP128", shape: [1], data: [1] }] }),
        400,
        "invalid datatype for input INPUT0",
      ],
      [
        "data count short of the shape",
        {},
        JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 16], data: [1, 2, 3] }] }),
        500,
        "Failed to parse 'data' field: shape does not match true shape",
      ],
      [
        "wrong element type",
        {},
        JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1], data: ["a"] }] }),
        500,
        "Unable to parse 'data': attempt to access JSON non-signed-integer as signed-integer",
      ],
      [
        "header length beyond body",
        { "Inference-Header-Content-Length": 5000 },
        "{}",
        400,
        "inference header size should be in range (0, 2), got: 5000",
      ],
      [
        "negative header length",
        { "Inference-Header-Content-Length": -1 },
        "{}",
        400,
        "inference header size should be in range (0, 2), got: -1",
      ],
      [
        "header length not a number",
        { "Inference-Header-Content-Length": "twelve" },
        "{}",
        400,
        "Unable to parse Inference-Header-Content-Length, got: twelve",
      ],
      [
        "binary section truncated",
        { "Inference-Header-Content-Length": 120 },
        Buffer.concat([
          Buffer.from(
            JSON.stringify({
              inputs: [
                { name: "INPUT0", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 64 } },
              ],
            }).padEnd(120, " "),
          ),
          Buffer.alloc(60),
        ]),
        400,
        "unexpected size for input 'INPUT0', expecting 4 additional bytes for model 'simple'",
      ],
      [
        "byte size mismatch",
        { "Inference-Header-Content-Length": 120 },
        Buffer.concat([
          Buffer.from(
            JSON.stringify({
              inputs: [
                { name: "INPUT0", datatype: "INT32", shape: [1, 16], parameters: { binary_data_size: 60 } },
              ],
            }).padEnd(120, " "),
          ),
          Buffer.alloc(60),
        ]),
        400,
        "[request id: <id_unknown>] input byte size mismatch for input 'INPUT0' for model 'simple'. Expected 64, got 60",
      ],
      [
        "extra binary data",
        { "Inference-Header-Content-Length": 2 },
        '{"inputs":[]}',
        500,
        /^failed to parse the request JSON buffer/,
      ],
    ];
    for (const [what, headers, body, status, expected] of cases) {
      const res = await rawRequest(url, "/v2/models/simple/infer", { method: "POST", headers, body });
      assert.equal(res.status, status, what);
      if (typeof expected === "string") assert.equal(errorOf(res.body), expected, what);
      else assert.match(errorOf(res.body), expected, what);
    }
    const extra = await rawRequest(url, "/v2/models/simple/infer", {
      method: "POST",
      headers: { "Inference-Header-Content-Length": 13 },
      body: '{"inputs":[]}xyz',
    });
    assert.equal(errorOf(extra.body), "unexpected additional input data for model 'simple'");
  });

  test("core errors map to Triton's statuses and keep the core's message", async () => {
    const unknown = await postJson("/v2/models/nope/infer", { inputs: [] });
    assert.equal(unknown.status, 400);
    assert.equal(errorOf(unknown.body), "Request for unknown model: 'nope' is not found");
    const noVersion = await postJson("/v2/models/simple/versions/2/infer", { inputs: [] });
    assert.equal(noVersion.status, 404);
    assert.equal(errorOf(noVersion.body), "Request for unknown model: 'simple' version 2 is not found");
    const wrongType = await postJson("/v2/models/simple/infer", {
      inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 16], data: range(16, () => 0) }],
    });
    assert.equal(wrongType.status, 400);
    assert.match(errorOf(wrongType.body), /'INPUT0' data-type is 'FP32', but model 'simple' expects 'INT32'/);
  });

  test("bodies over the limit are refused before being read whole", async () => {
    const declared = await rawRequest(url, "/v2/models/simple/infer", {
      method: "POST",
      headers: { "Content-Length": MAX_INPUT + 1 },
      body: Buffer.alloc(MAX_INPUT + 1),
    });
    assert.equal(declared.status, 400);
    assert.equal(
      errorOf(declared.body),
      `request JSON size of ${MAX_INPUT + 1} bytes exceeds the maximum allowed input size of ${MAX_INPUT} bytes. Use --http-max-input-size to increase the limit.`,
    );
    // With binary data after the JSON the whole body is limited too, which Triton does not do.
    const binary = await rawRequest(url, "/v2/models/simple/infer", {
      method: "POST",
      headers: { "Content-Length": MAX_INPUT + 1, "Inference-Header-Content-Length": 2 },
      body: Buffer.alloc(MAX_INPUT + 1),
    });
    assert.equal(binary.status, 400);
    assert.equal(
      errorOf(binary.body),
      `request body size of ${MAX_INPUT + 1} bytes exceeds the maximum allowed input size of ${MAX_INPUT} bytes. Use --http-max-input-size to increase the limit.`,
    );
    const chunked = await rawRequest(url, "/v2/models/simple/infer", {
      method: "POST",
      headers: { "Transfer-Encoding": "chunked" },
      body: Buffer.alloc(MAX_INPUT + 10),
    });
    assert.equal(chunked.status, 400);
    assert.match(errorOf(chunked.body), /exceeds the maximum allowed input size/);
    const bomb = await rawRequest(url, "/v2/models/simple/infer", {
      method: "POST",
      headers: { "Content-Encoding": "gzip" },
      body: gzipSync(Buffer.alloc(MAX_INPUT * 2)),
    });
    assert.equal(bomb.status, 400);
    assert.equal(
      errorOf(bomb.body),
      `Decompressed data size exceeds the maximum allowed value of ${MAX_INPUT} bytes. Use --http-max-input-size to increase the limit.`,
    );
    // Still serving.
    assert.equal((await rawRequest(url, "/v2/health/live")).status, 200);
  });
});

describe("HTTP front end, broken HTTP", { timeout: 30_000 }, () => {
  test("a body cut short by the client, and malformed HTTP, leave the server serving", async () => {
    const core = createFakeCore();
    const server = await createHttpFrontEnd({
      core,
      port: 0,
      address: "127.0.0.1",
      maxInputSize: MAX_INPUT,
      logger: silentLogger,
    });
    try {
      const exchange = (payload: string) =>
        new Promise<string>((resolve, reject) => {
          const socket = connect(server.port, "127.0.0.1", () => socket.end(payload));
          let answer = "";
          socket.on("data", (chunk: Buffer) => (answer += chunk.toString()));
          socket.on("close", () => resolve(answer));
          socket.on("error", reject);
          socket.setTimeout(10_000, () => {
            socket.destroy();
            reject(new Error("no answer within 10 s"));
          });
        });
      // Declares 100 bytes, sends 10, then closes its side: the parser reports the early end, answered 400.
      const truncated = await exchange(
        'POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"inputs":',
      );
      assert.match(truncated, /^HTTP\/1\.1 400 Bad Request/);
      const garbage = await exchange("NOT HTTP AT ALL\r\n\r\n");
      assert.match(garbage, /^HTTP\/1\.1 400 Bad Request/);
      const badLength = await exchange(
        "POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
      );
      assert.match(badLength, /^HTTP\/1\.1 400 Bad Request/);
      assert.equal(core.received.length, 0);
      assert.equal((await rawRequest(server.url, "/v2/health/live")).status, 200);
    } finally {
      await server.close();
    }
  });
});

describe("HTTP front end lifetime", { timeout: 30_000 }, () => {
  test("a client that disconnects aborts the core request; close() waits for in-flight requests", async () => {
    const core = createFakeCore({ holdInfer: true });
    const server = await createHttpFrontEnd({
      core,
      port: 0,
      address: "127.0.0.1",
      maxInputSize: MAX_INPUT,
      logger: silentLogger,
    });
    try {
      const body = JSON.stringify({
        inputs: [{ name: "INPUT0", datatype: "INT32", shape: [1, 1], data: [1] }],
      });
      const controller = new AbortController();
      const gone = fetch(`${server.url}/v2/models/identity_int32/infer`, {
        method: "POST",
        body,
        signal: controller.signal,
      });
      await core.waitForHeld(1);
      controller.abort();
      await assert.rejects(gone);
      await core.waitForAborted(1);
      assert.equal(core.aborted, 1);
      const inFlight = rawRequest(server.url, "/v2/models/identity_int32/infer", { method: "POST", body });
      await core.waitForHeld(2);
      const closing = server.close();
      core.release();
      const answered = await inFlight;
      assert.equal(answered.status, 200);
      await closing;
      await server.close();
      await assert.rejects(rawRequest(server.url, "/v2/health/live"));
    } finally {
      core.release();
      await server.close();
    }
  });
});
