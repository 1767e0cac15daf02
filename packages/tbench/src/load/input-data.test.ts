import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildInputData, buildRequestData, type InputDataOptions } from "./input-data.js";

const simpleInputs = [
  { name: "INPUT0", datatype: "INT32" as const, shape: [-1, 16] },
  { name: "INPUT1", datatype: "INT32" as const, shape: [-1, 16] },
];
const base: InputDataOptions = {
  inputs: simpleInputs,
  maxBatchSize: 8,
  batchSize: 1,
  shapes: {},
  source: "zero",
  stringLength: 4,
  stringData: undefined,
};

describe("buildRequestData", () => {
  it("builds zero data of the metadata's shape, with the batch dimension from -b", () => {
    const [request] = buildRequestData({ ...base, batchSize: 3 });
    assert.deepEqual(
      request?.inputs.map((t) => [t.name, t.datatype, t.shape]),
      [
        ["INPUT0", "INT32", [3, 16]],
        ["INPUT1", "INT32", [3, 16]],
      ],
    );
    assert.ok(request?.inputs[0]?.data instanceof Int32Array);
    assert.equal(request?.inputs[0]?.data.length, 48);
    assert.ok([...(request!.inputs[0]!.data as Int32Array)].every((v) => v === 0));
  });

  it("random data is seeded: the same seed gives the same tensors", () => {
    const a = buildRequestData({ ...base, source: "random", seed: 3 })[0]!.inputs[0]!.data;
    const b = buildRequestData({ ...base, source: "random", seed: 3 })[0]!.inputs[0]!.data;
    assert.deepEqual([...(a as Int32Array)], [...(b as Int32Array)]);
  });

  it("asks for --shape when a dimension is variable, and checks the given shape", () => {
    const inputs = [{ name: "x", datatype: "FP32" as const, shape: [-1, -1] }];
    assert.throws(
      () => buildRequestData({ ...base, inputs }),
      /input x has variable dimensions \[-1\]; give its shape with --shape x:N/,
    );
    const [request] = buildRequestData({ ...base, inputs, shapes: { x: [5] } });
    assert.deepEqual(request?.inputs[0]?.shape, [1, 5]);
    assert.throws(
      () => buildRequestData({ ...base, inputs, shapes: { x: [5, 2] } }),
      /--shape x: expected 1 dimension/,
    );
  });

  it("refuses a --shape for an input the model does not have", () => {
    assert.throws(
      () => buildRequestData({ ...base, model: "simple", shapes: { INPUT2: [16] } }),
      /^Error: --shape INPUT2: model 'simple' has no input named INPUT2; its inputs: INPUT0, INPUT1$/,
    );
    // Also with input data from a file: the flag would do nothing.
    const json = { data: [{ INPUT0: Array(16).fill(1), INPUT1: Array(16).fill(2) }] };
    assert.throws(
      () => buildRequestData({ ...base, shapes: { input0: [16] }, source: [{ path: "d.json", json }] }),
      /^Error: --shape input0: the model has no input named input0; its inputs: INPUT0, INPUT1$/,
    );
  });

  it("refuses a --shape that contradicts a fixed dimension; accepts one that restates it", () => {
    assert.throws(
      () => buildRequestData({ ...base, model: "simple", shapes: { INPUT0: [8] } }),
      /^Error: --shape INPUT0: model 'simple' declares \[16\] for INPUT0; --shape can set only its variable \(-1\) dimensions, got \[8\]$/,
    );
    const [request] = buildRequestData({ ...base, shapes: { INPUT0: [16] } });
    assert.deepEqual(request?.inputs[0]?.shape, [1, 16]);
    const inputs = [{ name: "x", datatype: "FP32" as const, shape: [-1, -1, 3] }];
    assert.deepEqual(
      buildRequestData({ ...base, inputs, shapes: { x: [7, 3] } })[0]?.inputs[0]?.shape,
      [1, 7, 3],
    );
    assert.throws(
      () => buildRequestData({ ...base, inputs, shapes: { x: [7, 4] } }),
      /--shape x: the model declares \[-1,3\] for x; --shape can set only its variable \(-1\) dimensions, got \[7,4\]/,
    );
  });

  it("refuses -b > 1 on a model without batching", () => {
    assert.throws(
      () =>
        buildRequestData({
          ...base,
          maxBatchSize: 0,
          inputs: [{ name: "a", datatype: "FP32", shape: [4] }],
          batchSize: 2,
        }),
      /-b 2: the model does not support batching \(max_batch_size 0\); use -b 1/,
    );
  });

  it("strings: --string-data, or random strings of --string-length", () => {
    const inputs = [{ name: "s", datatype: "BYTES" as const, shape: [2] }];
    const fixed = buildRequestData({ ...base, maxBatchSize: 0, inputs, stringData: "hello" })[0]!.inputs[0]!;
    assert.deepEqual(fixed.data, ["hello", "hello"]);
    const random = buildRequestData({ ...base, maxBatchSize: 0, inputs, source: "random" })[0]!.inputs[0]!
      .data as string[];
    assert.ok(random.every((s) => s.length === 4));
  });

  it("reads perf_analyzer's JSON: plain arrays, content+shape, b64, and validation_data", () => {
    const b64 = Buffer.from(new Int32Array(16).fill(7).buffer).toString("base64");
    const json = {
      data: [
        { INPUT0: Array(16).fill(1), INPUT1: { content: Array(16).fill(2), shape: [16] } },
        { INPUT0: { b64 }, INPUT1: Array(16).fill(3) },
      ],
      validation_data: [{ OUTPUT0: Array(16).fill(3) }, { OUTPUT0: { content: Array(16).fill(10) } }],
    };
    const { requests, streamSteps } = buildInputData({ ...base, source: [{ path: "d.json", json }] });
    assert.equal(requests.length, 2);
    assert.deepEqual([...(requests[1]!.inputs[0]!.data as Int32Array)], Array(16).fill(7));
    assert.deepEqual(requests[0]!.expected, [{ name: "OUTPUT0", values: Array(16).fill(3) }]);
    assert.deepEqual(requests[1]!.expected, [{ name: "OUTPUT0", values: Array(16).fill(10) }]);
    assert.deepEqual(streamSteps, [2], "a list of steps is one stream");
  });

  it("reads streams (lists of steps) in order, with validation_data mirroring them", () => {
    const step = (n: number) => ({ INPUT0: Array(16).fill(n), INPUT1: Array(16).fill(0) });
    const out = (n: number) => ({ OUTPUT0: Array(16).fill(n) });
    const json = {
      data: [[step(1), step(2), step(3)], [step(4)], [step(5), step(6)]],
      validation_data: [[out(1), out(2), out(3)], [out(4)], [out(5), out(6)]],
    };
    const more = { data: [[step(7)]] };
    const { requests, streamSteps } = buildInputData({
      ...base,
      source: [
        { path: "a.json", json },
        { path: "b.json", json: more },
      ],
    });
    assert.deepEqual(streamSteps, [3, 1, 2, 1], "every file's streams, appended");
    assert.deepEqual(
      requests.map((r) => (r.inputs[0]!.data as Int32Array)[0]),
      [1, 2, 3, 4, 5, 6, 7],
      "the requests run stream after stream",
    );
    assert.deepEqual(requests[4]!.expected, [{ name: "OUTPUT0", values: Array(16).fill(5) }]);
    assert.equal(requests[6]!.expected, undefined);
    // Two files of steps make one stream, as in perf_analyzer's data loader.
    const flat = { data: [step(1), step(2)] };
    assert.deepEqual(
      buildInputData({
        ...base,
        source: [
          { path: "a.json", json: flat },
          { path: "b.json", json: flat },
        ],
      }).streamSteps,
      [4],
    );
    assert.equal(buildInputData({ ...base, source: "zero" }).streamSteps, undefined);
  });

  it("refuses what perf_analyzer's data loader refuses: mixed forms, unaligned validation_data", () => {
    const step = { INPUT0: Array(16).fill(1), INPUT1: Array(16).fill(0) };
    const mixed =
      "Inconsistency in input-data provided. Can not have a combination of objects and arrays inside of the Data array";
    assert.throws(
      () => buildRequestData({ ...base, source: [{ path: "d.json", json: { data: [step, [step]] } }] }),
      { message: `d.json: ${mixed}` },
    );
    assert.throws(
      () =>
        buildRequestData({
          ...base,
          source: [
            { path: "a.json", json: { data: [[step]] } },
            { path: "b.json", json: { data: [step] } },
          ],
        }),
      { message: `b.json: ${mixed}` },
    );
    const unaligned = "d.json: The 'validation_data' field doesn't align with 'data' field in the json file";
    assert.throws(
      () =>
        buildRequestData({
          ...base,
          source: [{ path: "d.json", json: { data: [[step, step]], validation_data: [[{ OUTPUT0: [1] }]] } }],
        }),
      { message: unaligned },
    );
    assert.throws(
      () =>
        buildRequestData({
          ...base,
          source: [{ path: "d.json", json: { data: [[step]], validation_data: [[], []] } }],
        }),
      { message: unaligned },
    );
    assert.throws(
      () => buildRequestData({ ...base, source: [{ path: "d.json", json: { data: [[step], []] } }] }),
      { message: "d.json: data[1] is an empty stream; a stream needs at least one step" },
    );
  });

  it("names the file, entry and input of a bad JSON entry", () => {
    const short = { data: [{ INPUT0: [1, 2], INPUT1: Array(16).fill(0) }] };
    assert.throws(
      () => buildRequestData({ ...base, source: [{ path: "d.json", json: short }] }),
      /--input-data, data\[0\]\.INPUT0: expected 16 element\(s\) for shape \[16\], got 2/,
    );
    assert.throws(
      () => buildRequestData({ ...base, source: [{ path: "d.json", json: { data: [{ INPUT0: [] }] } }] }),
      /d\.json, data\[0\]: input "INPUT1" is missing/,
    );
    assert.throws(
      () => buildRequestData({ ...base, source: [{ path: "d.json", json: [] }] }),
      /d\.json: expected an object with a "data" array/,
    );
  });
});
