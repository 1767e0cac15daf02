/** Request validation messages, checked against Triton's text (core src/infer_request.cc). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bytesDataFromArrays, bytesDataToStrings } from "../core/bytes-data.js";
import type { BytesData, InferenceRequest, Tensor } from "../core/types.js";
import type { ModelSpec } from "../repository/model-spec.js";
import { tensorSpec } from "../testing/tensor-spec.js";
import { validateRequest } from "./request-validation.js";

const io = tensorSpec;

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

describe("request validation: the boundaries (each a mutant Stryker found unchecked)", () => {
  const both = [int32("INPUT0", [1, 16]), int32("INPUT1", [1, 16])];

  it("too many inputs: the count message, with Triton's ']' when nothing is missing", () => {
    assert.equal(
      message(simple, { inputs: [...both, int32("EXTRA", [1, 16])] }),
      "[request id: <id_unknown>] expected 2 inputs but got 3 inputs for model 'simple'. Got input(s) " +
        "['INPUT0','INPUT1','EXTRA'], but missing required input(s) ]. Please provide all required input(s).",
    );
  });

  it("no inputs at all: 'Got input(s) []' and every required one named", () => {
    assert.equal(
      message(simple, { inputs: [] }),
      "[request id: <id_unknown>] expected 2 inputs but got 0 inputs for model 'simple'. Got input(s) [], " +
        "but missing required input(s) ['INPUT0','INPUT1']. Please provide all required input(s).",
    );
  });

  it("an optional input may be left out", () => {
    const spec = {
      ...simple,
      inputs: [io("INPUT0", "INT32", [16]), io("INPUT1", "INT32", [16], { optional: true })],
    };
    const v = validateRequest(spec, { model: "simple", inputs: [int32("INPUT0", [2, 16])] });
    assert.deepEqual(
      v.inputs.map((i) => i.spec.name),
      ["INPUT0"],
    );
  });

  it("requested outputs: a subset, in config order; an empty list means all of them", () => {
    const subset = validateRequest(simple, { model: "simple", inputs: both, outputs: [{ name: "OUTPUT1" }] });
    assert.deepEqual(
      subset.outputs.map((o) => o.name),
      ["OUTPUT1"],
    );
    const reordered = validateRequest(simple, {
      model: "simple",
      inputs: both,
      outputs: [{ name: "OUTPUT1" }, { name: "OUTPUT0" }],
    });
    assert.deepEqual(
      reordered.outputs.map((o) => o.name),
      ["OUTPUT0", "OUTPUT1"],
    );
    const none = validateRequest(simple, { model: "simple", inputs: both, outputs: [] });
    assert.deepEqual(
      none.outputs.map((o) => o.name),
      ["OUTPUT0", "OUTPUT1"],
    );
  });

  it("a batch of exactly max_batch_size is accepted; all inputs with 0 rows make a batch of 0", () => {
    const full = validateRequest(simple, {
      model: "simple",
      inputs: [int32("INPUT0", [8, 16]), int32("INPUT1", [8, 16])],
    });
    assert.equal(full.batchSize, 8);
    const empty = validateRequest(simple, {
      model: "simple",
      inputs: [int32("INPUT0", [0, 16]), int32("INPUT1", [0, 16])],
    });
    assert.equal(empty.batchSize, 0);
  });

  it("a shape with too few dimensions, a -1, a negative or a fractional dimension is refused", () => {
    const spec = { ...simple, maxBatchSize: 0, inputs: [io("INPUT0", "INT32", [-1, 16])], outputs: [] };
    const one = (shape: number[]) => message(spec, { inputs: [int32("INPUT0", shape, 0)] });
    assert.equal(
      one([16]),
      "[request id: <id_unknown>] unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16], got [16]. ",
    );
    assert.equal(
      one([-1, 16]),
      "[request id: <id_unknown>] All input dimensions should be specified for input 'INPUT0' for model 'simple', got [-1,16]",
    );
    assert.match(one([-2, 16]), /unexpected shape for input 'INPUT0' .*got \[-2,16\]/);
    assert.match(one([1.5, 16]), /unexpected shape for input 'INPUT0' .*got \[1\.5,16\]/);
  });

  it("reshape: the model sees the configured shape, variable dimensions filled from the request", () => {
    const spec = {
      ...simple,
      maxBatchSize: 4,
      inputs: [
        io("INPUT0", "INT32", [-1, 2], { reshape: [2, -1] }),
        io("INPUT1", "INT32", [4], { reshape: [2, 2] }),
      ],
    };
    const v = validateRequest(spec, {
      model: "simple",
      inputs: [int32("INPUT0", [1, 3, 2]), int32("INPUT1", [1, 4])],
    });
    assert.deepEqual(
      v.inputs.map((i) => i.shape),
      [
        [2, 3],
        [2, 2],
      ],
    );
  });

  it("a numeric input whose data is BYTES data is in the wrong container", () => {
    const tensor: Tensor = { ...int32("INPUT0", [1, 16]), data: bytesDataFromArrays([new Uint8Array(1)]) };
    assert.equal(
      message(simple, { inputs: [tensor, int32("INPUT1", [1, 16])] }),
      "[request id: <id_unknown>] input 'INPUT0' for model 'simple' holds its data in the wrong container for INT32",
    );
  });

  it("BYTES: the element limit counts from the shape, the limit itself allowed", () => {
    const spec = { ...simple, maxBatchSize: 0, inputs: [io("TEXT", "BYTES", [-1])], outputs: [] };
    const text = (n: number): Tensor => ({
      name: "TEXT",
      datatype: "BYTES",
      shape: [n],
      data: bytesDataFromArrays(Array.from({ length: n }, () => new Uint8Array([97]))),
    });
    assert.equal(validateRequest(spec, { model: "simple", inputs: [text(3)] }, 3).inputs.length, 1);
    assert.throws(
      () => validateRequest(spec, { model: "simple", inputs: [text(4)] }, 3),
      (error: unknown) =>
        error instanceof Error &&
        error.message ===
          "[request id: <id_unknown>] input 'TEXT' of model 'simple' has 4 BYTES elements, more than the 3 allowed " +
            "per BYTES tensor. Use --max-bytes-tensor-elements to increase the limit.",
    );
  });

  it("BYTES: data whose own count disagrees with its wire form is refused", () => {
    const spec = { ...simple, maxBatchSize: 0, inputs: [io("TEXT", "BYTES", [-1])], outputs: [] };
    const data = bytesDataFromArrays([new Uint8Array([97]), new Uint8Array([98])]);
    assert.equal(
      message(spec, {
        inputs: [{ name: "TEXT", datatype: "BYTES", shape: [2], data: { ...data, count: 3 } }],
      }),
      "[request id: <id_unknown>] input 'TEXT' for model 'simple': its BYTES data says 3 elements, its wire form holds 2",
    );
  });

  it("BYTES: of two elements a string tensor would change, the first is named", () => {
    const spec = { ...simple, maxBatchSize: 0, inputs: [io("TEXT", "BYTES", [-1])], outputs: [] };
    const data = bytesDataFromArrays([new Uint8Array([97]), new Uint8Array([0]), new Uint8Array([98, 0])]);
    assert.match(
      message(spec, { inputs: [{ name: "TEXT", datatype: "BYTES", shape: [3], data }] }),
      /^\[request id: <id_unknown>\] input 'TEXT' of model 'simple': element 1 /,
    );
  });

  it("an empty tensor may have a dimension of exactly 4294967295", () => {
    const spec = { ...simple, maxBatchSize: 0, inputs: [io("INPUT0", "FP32", [-1, -1])], outputs: [] };
    const empty: Tensor = {
      name: "INPUT0",
      datatype: "FP32",
      shape: [0, 4294967295],
      data: new Float32Array(0),
    };
    assert.equal(validateRequest(spec, { model: "simple", inputs: [empty] }).inputs.length, 1);
  });
});
