import assert from "node:assert/strict";
import { test } from "node:test";
import { MalformedResponseError } from "../errors.js";
import type { InferResult } from "../infer-result.js";
import { createInferDecoder } from "./infer-decoder.js";
import { decodeInferResponse } from "./infer-decoding.js";

const HEADER = {
  model_name: "m",
  model_version: "1",
  id: "7",
  parameters: { sequence_end: false },
  outputs: [
    { name: "a", shape: [2], datatype: "FP32", parameters: { binary_data_size: 8 } },
    { name: "b", shape: [1, 3], datatype: "INT8", parameters: { binary_data_size: 3 } },
  ],
};

function answer(header: unknown, a: number[], b: number[], extra = 0): { body: Buffer; length: string } {
  const json = Buffer.from(JSON.stringify(header));
  const body = Buffer.concat([
    json,
    Buffer.from(new Float32Array(a).buffer),
    Buffer.from(new Int8Array(b).buffer),
    Buffer.alloc(extra),
  ]);
  return { body, length: String(json.length) };
}

/** Everything a caller can see of a result, as plain data. */
function seen(r: InferResult) {
  return {
    modelName: r.modelName,
    modelVersion: r.modelVersion,
    id: r.id,
    parameters: r.parameters,
    outputs: r.outputs.map((o) => ({
      name: o.name,
      datatype: o.datatype,
      shape: o.shape,
      parameters: o.parameters,
      size: o.size,
      raw: o.raw === undefined ? undefined : [...o.raw],
      values: o.toArray(),
    })),
  };
}

test("a repeated header gives what a full decode gives, with the new body's values as views of it", () => {
  const decode = createInferDecoder();
  const first = answer(HEADER, [1, 2], [3, 4, 5]);
  const second = answer(HEADER, [6, 7], [-1, -2, -3]);
  assert.deepEqual(
    seen(decode(first.body, first.length)),
    seen(decodeInferResponse(first.body, first.length)),
  );
  const repeat = decode(second.body, second.length);
  assert.deepEqual(seen(repeat), seen(decodeInferResponse(second.body, second.length)));
  assert.deepEqual(repeat.output("b")!.toArray(), [-1, -2, -3]);
  assert.equal(repeat.output("b")!.raw!.buffer, second.body.buffer, "a view of the body, not a copy");
});

test("results built from a remembered header share no objects", () => {
  const decode = createInferDecoder();
  const { body, length } = answer(HEADER, [1, 2], [3, 4, 5]);
  const one = decode(body, length);
  const two = decode(body, length);
  (one.outputs[0]!.shape as number[])[0] = 99;
  (one.outputs[0]!.parameters as Record<string, unknown>)["binary_data_size"] = 0;
  (one.parameters as Record<string, unknown>)["sequence_end"] = true;
  const three = decode(body, length);
  for (const r of [two, three]) {
    assert.deepEqual(r.outputs[0]!.shape, [2]);
    assert.deepEqual(r.outputs[0]!.parameters, { binary_data_size: 8 });
    assert.deepEqual(r.parameters, { sequence_end: false });
  }
});

test("the same header over a body of another length fails as a full decode does", () => {
  const decode = createInferDecoder();
  const good = answer(HEADER, [1, 2], [3, 4, 5]);
  decode(good.body, good.length);
  const long = answer(HEADER, [1, 2], [3, 4, 5], 2);
  const expected = (() => {
    try {
      decodeInferResponse(long.body, long.length);
    } catch (error) {
      return (error as Error).message;
    }
    return "no error";
  })();
  assert.throws(
    () => decode(long.body, long.length),
    (error) => error instanceof MalformedResponseError && error.message === expected,
  );
  const short = { body: good.body.subarray(0, good.body.length - 1), length: good.length };
  assert.throws(() => decode(short.body, short.length), MalformedResponseError);
});

test("another header in between, and JSON data answers, decode as a full decode does", () => {
  const decode = createInferDecoder();
  const other = { ...HEADER, model_name: "other", id: "8" };
  // Written as text: 2^53 + 1 survives only where the decoder reads the digits.
  const json = Buffer.from(
    '{"model_name":"m","model_version":"1","outputs":[{"name":"c","shape":[2],"datatype":"INT64","data":[9007199254740993,1]}]}',
  );

  const bodies = [
    answer(HEADER, [1, 2], [3, 4, 5]),
    answer(other, [3, 4], [5, 6, 7]),
    answer(HEADER, [5, 6], [7, 8, 9]),
    { body: json, length: String(json.length) },
    { body: json, length: String(json.length) },
    answer(HEADER, [0, 1], [1, 1, 1]),
  ];
  for (const { body, length } of bodies) {
    assert.deepEqual(seen(decode(body, length)), seen(decodeInferResponse(body, length)));
  }
  const exact = decode(json, String(json.length)).output("c")!.toArray();
  assert.deepEqual(exact, [9007199254740993n, 1n]);
});
