/** Request validation messages, checked against Triton's text (core src/infer_request.cc). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Datatype } from "@tbench/proto";
import { bytesDataFromArrays, bytesDataToStrings } from "../core/bytes-data.js";
import type { BytesData, InferenceRequest, Tensor } from "../core/types.js";
import type { ModelSpec, TensorSpec } from "../repository/model-spec.js";
import { validateRequest } from "./request-validation.js";

const io = (
  name: string,
  datatype: Datatype,
  dims: number[],
  extra: Partial<TensorSpec> = {},
): TensorSpec => ({
  name,
  datatype,
  dims,
  optional: false,
  allowRaggedBatch: false,
  labelFilename: "",
  ...extra,
});

const simple: ModelSpec = {
  name: "simple",
  platform: "onnxruntime_onnx",
  backend: "onnxruntime",
  maxBatchSize: 8,
  inputs: [io("INPUT0", "INT32", [16]), io("INPUT1", "INT32", [16])],
  outputs: [io("OUTPUT0", "INT32", [16]), io("OUTPUT1", "INT32", [16])],
  instanceGroups: [],
  defaultModelFilename: "model.onnx",
  parameters: new Map(),
};

const int32 = (name: string, shape: number[], length = shape.reduce((a, b) => a * b, 1)): Tensor => ({
  name,
  datatype: "INT32",
  shape,
  data: new Int32Array(length),
});

function message(spec: ModelSpec, request: Partial<InferenceRequest>): string {
  try {
    validateRequest(spec, { model: spec.name, inputs: [], ...request });
  } catch (error) {
    assert.equal((error as { status: string }).status, "INVALID_ARG");
    return (error as Error).message;
  }
  assert.fail("expected validation to fail");
}

describe("request validation (Triton's messages)", () => {
  it("accepts a valid request and reports its batch size", () => {
    const v = validateRequest(simple, {
      model: "simple",
      inputs: [int32("INPUT1", [3, 16]), int32("INPUT0", [3, 16])],
    });
    assert.equal(v.batchSize, 3);
    assert.deepEqual(
      v.inputs.map((i) => [i.spec.name, i.shape]),
      [
        ["INPUT0", [16]],
        ["INPUT1", [16]],
      ],
    );
    assert.deepEqual(
      v.outputs.map((o) => o.name),
      ["OUTPUT0", "OUTPUT1"],
    );
  });

  it("names missing required inputs", () => {
    assert.equal(
      message(simple, { inputs: [int32("INPUT0", [1, 16])] }),
      "[request id: <id_unknown>] expected 2 inputs but got 1 inputs for model 'simple'. Got input(s) ['INPUT0'], " +
        "but missing required input(s) ['INPUT1']. Please provide all required input(s).",
    );
    assert.equal(
      message(simple, { id: "7", inputs: [] }),
      "[request id: 7] expected 2 inputs but got 0 inputs for model 'simple'. Got input(s) [], but missing " +
        "required input(s) ['INPUT0','INPUT1']. Please provide all required input(s).",
    );
  });

  it("uses the range form when the model has optional inputs", () => {
    const spec = {
      ...simple,
      maxBatchSize: 0,
      inputs: [io("A", "INT32", [1]), io("B", "INT32", [1], { optional: true })],
    };
    assert.equal(
      message(spec, {}),
      "[request id: <id_unknown>] expected number of inputs between 1 and 2 but got 0 inputs for model 'simple'. " +
        "Got input(s) [], but missing required input(s) ['A']. Please provide all required input(s).",
    );
  });

  it("rejects unknown inputs and outputs", () => {
    assert.equal(
      message(simple, { inputs: [int32("INPUT0", [1, 16]), int32("INPUTX", [1, 16])] }),
      "unexpected inference input 'INPUTX' for model 'simple'",
    );
    assert.equal(
      message(simple, {
        inputs: [int32("INPUT0", [1, 16]), int32("INPUT1", [1, 16])],
        outputs: [{ name: "OUT9" }],
      }),
      "unexpected inference output 'OUT9' for model 'simple'",
    );
  });

  it("checks datatype, shape, batch size and byte size", () => {
    const fp32: Tensor = { name: "INPUT1", datatype: "FP32", shape: [1, 16], data: new Float32Array(16) };
    assert.equal(
      message(simple, { inputs: [int32("INPUT0", [1, 16]), fp32] }),
      "[request id: <id_unknown>] inference input 'INPUT1' data-type is 'FP32', but model 'simple' expects 'INT32'",
    );
    assert.equal(
      message(simple, { inputs: [int32("INPUT0", [1, 8]), int32("INPUT1", [1, 8])] }),
      "[request id: <id_unknown>] unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16], got [1,8]. " +
        "NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to " +
        "each input shape. If you want to specify the full shape including the batch dim in your input dims config, " +
        "try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.",
    );
    assert.equal(
      message(simple, { inputs: [int32("INPUT0", [9, 16]), int32("INPUT1", [9, 16])] }),
      "[request id: <id_unknown>] inference request batch-size must be <= 8 for 'simple'",
    );
    assert.equal(
      message(simple, { inputs: [int32("INPUT0", [2, 16]), int32("INPUT1", [1, 16])] }),
      "[request id: <id_unknown>] input 'INPUT1' batch size does not match other inputs for 'simple'",
    );
    // A first input with 0 rows before one with 2 (the HTTP fuzz test's case #66821 answered 500).
    assert.equal(
      message(simple, { inputs: [int32("INPUT0", [0, 16]), int32("INPUT1", [2, 16])] }),
      "[request id: <id_unknown>] input 'INPUT0' batch size does not match other inputs for 'simple'",
    );
    assert.equal(
      message(simple, { inputs: [int32("INPUT0", [1, 16], 8), int32("INPUT1", [1, 16])] }),
      "[request id: <id_unknown>] input byte size mismatch for input 'INPUT0' for model 'simple'. Expected 64, got 32",
    );
    assert.equal(
      message(simple, { inputs: [int32("INPUT0", []), int32("INPUT1", [1, 16])] }),
      "[request id: <id_unknown>] input 'INPUT0' has no shape but model requires batch dimension for 'simple'",
    );
  });

  it("checks shapes exactly without a batch dimension when max_batch_size is 0", () => {
    const spec = { ...simple, maxBatchSize: 0 };
    assert.equal(
      message(spec, { inputs: [int32("INPUT0", [1, 16]), int32("INPUT1", [1, 16])] }),
      "[request id: <id_unknown>] unexpected shape for input 'INPUT0' for model 'simple'. Expected [16], got [1,16]. ",
    );
    assert.equal(
      validateRequest(spec, { model: "simple", inputs: [int32("INPUT0", [16]), int32("INPUT1", [16])] })
        .batchSize,
      0,
    );
  });

  it("counts BYTES elements", () => {
    const spec = { ...simple, maxBatchSize: 0, inputs: [io("TEXT", "BYTES", [-1])], outputs: [] };
    const text: Tensor = {
      name: "TEXT",
      datatype: "BYTES",
      shape: [3],
      data: bytesDataFromArrays([new Uint8Array([104, 105])]),
    };
    assert.equal(
      message(spec, { inputs: [text] }),
      "[request id: <id_unknown>] expected 3 string elements for inference input 'TEXT' for model 'simple', got 1",
    );
  });

  it("walks BYTES wire data in Triton's order, with its messages (ValidateBytesInputs)", () => {
    const spec = { ...simple, maxBatchSize: 0, inputs: [io("TEXT", "BYTES", [-1])], outputs: [] };
    // As the HTTP layer hands BYTES over: the count from the shape, the wire unchecked.
    const wire = (shape: number, ...parts: number[][]): Tensor => ({
      name: "TEXT",
      datatype: "BYTES",
      shape: [shape],
      data: { count: shape, wire: new Uint8Array(parts.flat()) },
    });
    const len = (n: number) => [n, 0, 0, 0];
    assert.equal(
      message(spec, { id: "r1", inputs: [wire(2, len(1), [97], len(1), [98], len(0))] }),
      "[request id: r1] unexpected number of string elements 3 for inference input 'TEXT' for model 'simple', expecting 2",
    );
    assert.equal(
      message(spec, { inputs: [wire(2, len(1), [97], [1, 0])] }),
      "[request id: <id_unknown>] incomplete string length indicator for inference input 'TEXT' for model 'simple', " +
        "expecting 4 bytes but only 2 bytes available. Please make sure the string length indicator is in one buffer.",
    );
    assert.equal(
      message(spec, { inputs: [wire(3, len(1), [97])] }),
      "[request id: <id_unknown>] expected 3 string elements for inference input 'TEXT' for model 'simple', got 1",
    );
    // Triton's core lets an element that runs past the end through (its backend refuses it); we refuse it.
    assert.equal(
      message(spec, { inputs: [wire(1, len(5), [97])] }),
      "[request id: <id_unknown>] input 'TEXT' of model 'simple': BYTES element 0 declares 5 bytes, 1 are left",
    );
  });

  it("refuses a repeated input before a repeated output, and both before an unknown output (Triton's order)", () => {
    const inputs = [int32("INPUT0", [1, 16]), int32("INPUT1", [1, 16])];
    assert.equal(
      message(simple, {
        inputs: [...inputs, int32("INPUT0", [1, 16])],
        outputs: [{ name: "X" }, { name: "X" }],
      }),
      "[request id: <id_unknown>] input 'INPUT0' already exists in request",
    );
    assert.equal(
      message(simple, { inputs, outputs: [{ name: "X" }, { name: "Y" }, { name: "Y" }] }),
      "[request id: <id_unknown>] output 'Y' already exists in request",
    );
  });

  it("refuses an empty tensor with a dimension onnxruntime-node cannot take", () => {
    const spec = { ...simple, maxBatchSize: 0, inputs: [io("INPUT0", "FP32", [-1, -1])], outputs: [] };
    const empty: Tensor = {
      name: "INPUT0",
      datatype: "FP32",
      shape: [0, 2 ** 32],
      data: new Float32Array(0),
    };
    assert.equal(
      message(spec, { inputs: [empty] }),
      "[request id: <id_unknown>] input 'INPUT0' of model 'simple' has dimension 4294967296; onnxruntime-node takes dimensions up to 4294967295",
    );
  });

  it("refuses BYTES elements a string tensor would change (NUL byte, invalid UTF-8), naming the element", () => {
    const spec = {
      ...simple,
      name: "identity_bytes",
      maxBatchSize: 0,
      inputs: [io("INPUT0", "BYTES", [-1])],
    };
    const bytes = (...elements: number[][]): Tensor => ({
      name: "INPUT0",
      datatype: "BYTES",
      shape: [elements.length],
      data: bytesDataFromArrays(elements.map((e) => new Uint8Array(e))),
    });
    assert.equal(
      message(spec, { id: "7", inputs: [bytes([104], [], [0xc3, 0xa9], [97, 0, 98])] }),
      "[request id: 7] input 'INPUT0' of model 'identity_bytes': element 3 contains a NUL byte, which the onnxruntime backend cannot carry",
    );
    assert.equal(
      message(spec, { inputs: [bytes([104], [0xc3])] }),
      "[request id: <id_unknown>] input 'INPUT0' of model 'identity_bytes': element 1 is not valid UTF-8, which the onnxruntime backend cannot carry",
    );
    // A lone surrogate's UTF-8 form (CESU) and an overlong NUL are not UTF-8 either.
    assert.match(message(spec, { inputs: [bytes([0xed, 0xa0, 0x80])] }), /element 0 is not valid UTF-8/);
    assert.match(message(spec, { inputs: [bytes([0xc0, 0x80])] }), /element 0 is not valid UTF-8/);
    const ok = validateRequest(spec, {
      model: spec.name,
      inputs: [bytes([], [0xf0, 0x9f, 0x98, 0x80], [9])],
    });
    assert.deepEqual(bytesDataToStrings(ok.inputs[0]!.tensor.data as BytesData), ["", "\u{1f600}", "\t"]);
  });
});
