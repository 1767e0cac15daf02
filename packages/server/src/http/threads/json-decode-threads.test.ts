/**
 * Large JSON infer bodies are decoded in a thread (issue 36, item 6), against the real front end and core:
 * while one decode is held in its thread (a gate the test controls), another client's request is answered;
 * and whatever is decoded in a thread answers byte for byte as when decoded on the front end's thread,
 * 64-bit integers, BYTES and Triton's errors included. Nothing here depends on how long a decode takes.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { silentLogger } from "../../core/logger.js";
import type { InferenceCore } from "../../core/types.js";
import { createInferenceCore } from "../../lifecycle/create-inference-core.js";
import { type RawResponse, rawRequest } from "../../testing/raw-http-client.js";
import { createHttpFrontEnd, type HttpFrontEnd } from "../http-server.js";

const REPOSITORY = new URL("../../../../../examples/models", import.meta.url).pathname;
const MODELS = ["identity_fp32", "identity_int64", "identity_uint64", "identity_bytes", "identity_int8"];

let core: InferenceCore & { close(): Promise<void> };
const frontEnds: HttpFrontEnd[] = [];

before(async () => {
  core = await createInferenceCore({
    modelRepository: REPOSITORY,
    modelControlMode: "explicit",
    loadModels: MODELS,
    logger: silentLogger,
  });
});
after(async () => {
  await Promise.all(frontEnds.map((frontEnd) => frontEnd.close()));
  await core.close();
});

async function start(options: { jsonDecodeMinBytes?: number; jsonDecodeGate?: SharedArrayBuffer }) {
  const http = await createHttpFrontEnd({
    core,
    port: 0,
    address: "127.0.0.1",
    maxInputSize: 64 * 1024 * 1024,
    logger: silentLogger,
    ...options,
  });
  frontEnds.push(http);
  return http;
}

function post(http: HttpFrontEnd, model: string, text: string): Promise<RawResponse> {
  return rawRequest(http.url, `/v2/models/${model}/infer`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: text,
  });
}

function request(datatype: string, values: readonly string[], binaryOutput = false): string {
  return (
    `{"inputs":[{"name":"INPUT0","datatype":"${datatype}","shape":[1,${values.length}],` +
    `"data":[${values.join(",")}]}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":${binaryOutput}}}]}`
  );
}

/** Polls `condition` every millisecond; fails only when it never holds (a bound, not a measure). */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe("JSON infer bodies decoded in threads", { timeout: 90_000 }, () => {
  test("another client is answered while a large JSON body is held in its decode thread", async () => {
    const gate = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT);
    const cells = new Int32Array(gate);
    const http = await start({ jsonDecodeMinBytes: 1024, jsonDecodeGate: gate });
    const values = Array.from({ length: 2000 }, (_, i) => String(i / 4));
    const large = request("FP32", values);
    assert.ok(large.length >= 1024);
    let largeAnswered = false;
    const largeAnswer = post(http, "identity_fp32", large).then((res) => {
      largeAnswered = true;
      return res;
    });
    await until(() => Atomics.load(cells, 0) === 1, "the large body reached its decode thread");

    const small = await post(http, "identity_fp32", request("FP32", ["1.5", "2"]));
    assert.equal(small.status, 200);
    assert.deepEqual(
      (JSON.parse(small.body.toString()) as { outputs: [{ data: number[] }] }).outputs[0].data,
      [1.5, 2],
    );
    assert.equal(largeAnswered, false, "the large body was answered before its decode was let go");

    Atomics.store(cells, 1, 1);
    Atomics.notify(cells, 1);
    const answer = await largeAnswer;
    assert.equal(answer.status, 200);
    const data = (JSON.parse(answer.body.toString()) as { outputs: [{ data: number[] }] }).outputs[0].data;
    assert.deepEqual(data, values.map(Number));
  });

  test("decoded in a thread, every answer is byte for byte the one decoded on the front end's thread", async () => {
    const onThread = await start({});
    // An open gate only counts the decodes that went through a thread.
    const gate = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT);
    const cells = new Int32Array(gate);
    Atomics.store(cells, 1, 1);
    const inThread = await start({ jsonDecodeMinBytes: 0, jsonDecodeGate: gate });
    const cases: [string, string][] = [
      [
        "identity_int64",
        request("INT64", ["9007199254740993", "9223372036854775807", "-9223372036854775808"]),
      ],
      ["identity_int64", request("INT64", ["9007199254740993", "-1"], true)],
      ["identity_uint64", request("UINT64", ["18446744073709551615", "9007199254740993", "0"])],
      ["identity_fp32", request("FP32", ["0.1", "1e-7", "-3.25"])],
      ["identity_bytes", request("BYTES", ['"a"', '"\\u00e9t\\u00e9"', '""'])],
      ["identity_bytes", request("BYTES", ['"x"', '"yz"'], true)],
      // Triton's errors: out of range, a wrong JSON type, malformed JSON, a missing member, a bad shape.
      ["identity_int64", request("INT64", ["9223372036854775808"])],
      ["identity_int8", request("INT8", ["128"])],
      ["identity_fp32", request("FP32", ['"1"'])],
      ["identity_fp32", '{"inputs":[{"name":"INPUT0",'],
      ["identity_fp32", '{"outputs":[]}'],
      ["identity_fp32", '{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,3],"data":[1,2]}]}'],
      ["identity_fp32", '{"id":"r1","inputs":[{"name":"NOPE","datatype":"FP32","shape":[1],"data":[1]}]}'],
    ];
    for (const [model, text] of cases) {
      const [expected, actual] = await Promise.all([
        post(onThread, model, text),
        post(inThread, model, text),
      ]);
      assert.equal(actual.status, expected.status, text);
      assert.equal(actual.headers["content-type"], expected.headers["content-type"], text);
      assert.equal(
        actual.headers["inference-header-content-length"],
        expected.headers["inference-header-content-length"],
        text,
      );
      assert.ok(actual.body.equals(expected.body), `${text}\n${actual.body}\n${expected.body}`);
    }
    // Every case was decoded in a thread, errors included.
    assert.equal(Atomics.load(cells, 0), cases.length);
  });
});
