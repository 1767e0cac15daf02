/**
 * Batch assembly alone: the requests' inputs concatenated along the batch dimension, and the model's
 * outputs cut back into one response per request, with exact values, shapes and errors.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bytesDataFromArrays, bytesDataToStrings } from "../core/bytes-data.js";
import { ServerError } from "../core/server-error.js";
import type { BytesData, Tensor } from "../core/types.js";
import { validateRequest } from "../lifecycle/request-validation.js";
import type { ModelSpec, TensorSpec } from "../repository/model-spec.js";
import { tensorSpec } from "../testing/tensor-spec.js";
import { assembleBatch, splitOutputs } from "./batch-assembly.js";
import type { ValidatedRequest } from "./scheduler.js";

const io = tensorSpec;

function model(maxBatchSize: number, inputs: TensorSpec[], outputs: TensorSpec[]): ModelSpec {
  return {
    name: "m",
    platform: "onnxruntime_onnx",
    backend: "onnxruntime",
    maxBatchSize,
    inputs,
    outputs,
    instanceGroups: [],
    defaultModelFilename: "model.onnx",
    parameters: new Map(),
  };
}

const fp32 = (shape: number[], values: number[]): Tensor => ({
  name: "IN",
  datatype: "FP32",
  shape,
  data: Float32Array.from(values),
});

const request = (spec: ModelSpec, ...inputs: Tensor[]): ValidatedRequest =>
  validateRequest(spec, { model: "m", inputs });

describe("assembleBatch", () => {
  const spec = model(8, [io("IN", "FP32", [2])], [io("OUT", "FP32", [3])]);

  it("concatenates the requests' rows in order, batch dimension first", () => {
    const batch = assembleBatch(spec, [
      request(spec, fp32([1, 2], [1, 2])),
      request(spec, fp32([2, 2], [3, 4, 5, 6])),
    ]);
    assert.equal(batch.inputs.length, 1);
    const [input] = batch.inputs;
    assert.equal(input?.name, "IN");
    assert.equal(input?.ortType, "float32");
    assert.deepEqual(input?.dims, [3, 2]);
    assert.ok(input?.data instanceof Float32Array);
    assert.deepEqual([...(input!.data as Float32Array)], [1, 2, 3, 4, 5, 6]);
    // 24 bytes: too small to be worth transferring.
    assert.deepEqual(batch.transfer, []);
  });

  it("hands an input of 64 KiB or more over by transfer", () => {
    const wide = model(8, [io("IN", "FP32", [-1])], [io("OUT", "FP32", [3])]);
    const values = Array.from({ length: 16384 }, (_, i) => i);
    const batch = assembleBatch(wide, [request(wide, fp32([1, 16384], values))]);
    assert.equal(batch.transfer.length, 1);
    assert.equal(batch.transfer[0], (batch.inputs[0]!.data as Float32Array).buffer);
  });

  it("without a batch dimension (max_batch_size 0) the single request's shape is the model's", () => {
    const flat = model(0, [io("IN", "FP32", [2])], [io("OUT", "FP32", [3])]);
    const batch = assembleBatch(flat, [request(flat, fp32([2], [7, 8]))]);
    assert.deepEqual(batch.inputs[0]?.dims, [2]);
    assert.deepEqual([...(batch.inputs[0]!.data as Float32Array)], [7, 8]);
  });

  it("BYTES inputs stay in wire form, joined", () => {
    const text = model(4, [io("IN", "BYTES", [1])], [io("OUT", "BYTES", [1])]);
    const bytes = (s: string): Tensor => ({
      name: "IN",
      datatype: "BYTES",
      shape: [1, 1],
      data: bytesDataFromArrays([new TextEncoder().encode(s)]),
    });
    const batch = assembleBatch(text, [request(text, bytes("ab")), request(text, bytes("c"))]);
    assert.equal(batch.inputs[0]?.ortType, "string");
    assert.deepEqual(batch.inputs[0]?.dims, [2, 1]);
    assert.deepEqual(bytesDataToStrings(batch.inputs[0]!.data as BytesData), ["ab", "c"]);
  });

  it("a datatype onnxruntime-node has no tensor for (BF16) is UNSUPPORTED, named", () => {
    const bf16 = model(0, [io("IN", "BF16", [1])], []);
    const validated = request(bf16, { name: "IN", datatype: "BF16", shape: [1], data: new Uint16Array(1) });
    assert.throws(
      () => assembleBatch(bf16, [validated]),
      (error: unknown) =>
        error instanceof ServerError &&
        error.status === "UNSUPPORTED" &&
        error.message === "datatype BF16 has no onnxruntime-node tensor type",
    );
  });
});

describe("splitOutputs", () => {
  const spec = model(8, [io("IN", "FP32", [2])], [io("OUT", "INT32", [3])]);
  const requests = [request(spec, fp32([1, 2], [0, 0])), request(spec, fp32([2, 2], [0, 0, 0, 0]))];

  it("cuts each output into the requests' rows, with the config's datatype and each request's shape", () => {
    const out = splitOutputs(spec, requests, [
      { name: "OUT", ortType: "int32", dims: [3, 3], data: Int32Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9]) },
    ]);
    assert.deepEqual(
      out.map((tensors) => tensors.map((t) => [t.name, t.datatype, t.shape, [...(t.data as Int32Array)]])),
      [[["OUT", "INT32", [1, 3], [1, 2, 3]]], [["OUT", "INT32", [2, 3], [4, 5, 6, 7, 8, 9]]]],
    );
  });

  it("an output the config does not list is FP32", () => {
    const out = splitOutputs(
      spec,
      [requests[0]!],
      [{ name: "EXTRA", ortType: "float32", dims: [1, 1], data: Float32Array.of(1) }],
    );
    assert.equal(out[0]?.[0]?.datatype, "FP32");
  });

  it("an output whose batch dimension is not the batch's is INTERNAL, with both numbers", () => {
    assert.throws(
      () =>
        splitOutputs(spec, requests, [
          { name: "OUT", ortType: "int32", dims: [2, 3], data: new Int32Array(6) },
        ]),
      (error: unknown) =>
        error instanceof ServerError &&
        error.status === "INTERNAL" &&
        error.message === "output 'OUT' of model 'm' has batch dimension 2, expected 3",
    );
  });

  it("without a batch dimension the one request gets the whole output", () => {
    const flat = model(0, [io("IN", "FP32", [2])], [io("OUT", "FP32", [2, 2])]);
    const out = splitOutputs(
      flat,
      [request(flat, fp32([2], [0, 0]))],
      [{ name: "OUT", ortType: "float32", dims: [2, 2], data: Float32Array.from([1, 2, 3, 4]) }],
    );
    assert.deepEqual(out[0]?.[0]?.shape, [2, 2]);
    assert.deepEqual([...(out[0]![0]!.data as Float32Array)], [1, 2, 3, 4]);
  });

  it("a reshaped output is shown with the config's dims; a variable one keeps the model's", () => {
    const reshaped = model(
      8,
      [io("IN", "FP32", [2])],
      [io("OUT", "FP32", [4], { reshape: [2, 2] }), io("VAR", "FP32", [-1], { reshape: [-1, 1] })],
    );
    const out = splitOutputs(
      reshaped,
      [request(reshaped, fp32([1, 2], [0, 0]))],
      [
        { name: "OUT", ortType: "float32", dims: [1, 2, 2], data: new Float32Array(4) },
        { name: "VAR", ortType: "float32", dims: [1, 3, 1], data: new Float32Array(3) },
      ],
    );
    assert.deepEqual(
      out[0]?.map((t) => t.shape),
      [
        [1, 4],
        [1, 3, 1],
      ],
    );
  });

  it("a batch of 0 rows gets empty outputs", () => {
    const empty = request(spec, fp32([0, 2], []));
    const out = splitOutputs(
      spec,
      [empty],
      [{ name: "OUT", ortType: "int32", dims: [0, 3], data: new Int32Array(0) }],
    );
    assert.deepEqual(out[0]?.[0]?.shape, [0, 3]);
    assert.equal((out[0]![0]!.data as Int32Array).length, 0);
  });

  it("BYTES outputs are cut per request in wire form; a short one is INTERNAL", () => {
    const text = model(4, [io("IN", "FP32", [2])], [io("OUT", "BYTES", [1])]);
    const two = [request(text, fp32([1, 2], [0, 0])), request(text, fp32([2, 2], [0, 0, 0, 0]))];
    const data = bytesDataFromArrays(["a", "bb", "ccc"].map((s) => new TextEncoder().encode(s)));
    const out = splitOutputs(text, two, [{ name: "OUT", ortType: "string", dims: [3, 1], data }]);
    assert.deepEqual(
      out.map((tensors) => bytesDataToStrings(tensors[0]!.data as BytesData)),
      [["a"], ["bb", "ccc"]],
    );
    const short = bytesDataFromArrays([new Uint8Array([97])]);
    assert.throws(
      () => splitOutputs(text, two, [{ name: "OUT", ortType: "string", dims: [3, 1], data: short }]),
      (error: unknown) =>
        error instanceof ServerError &&
        error.status === "INTERNAL" &&
        error.message.startsWith("output 'OUT' of model 'm': "),
    );
  });
});
