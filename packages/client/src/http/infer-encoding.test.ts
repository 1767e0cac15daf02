import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { InvalidArgumentError } from "../errors.js";
import type { InferInput } from "../tensor-types.js";
import { encodeInferRequest } from "./infer-encoding.js";

/** Bytes `0` to `end` of `bytes` as UTF-8 text. */
function utf8(bytes: Uint8Array, end = bytes.length): string {
  return new TextDecoder().decode(bytes.subarray(0, end));
}

function split(body: Uint8Array, jsonLength: number | undefined) {
  const n = jsonLength ?? body.length;
  return { json: JSON.parse(utf8(body, n)), binary: body.subarray(n) };
}

describe("binary encoding (extension_binary_data.md)", () => {
  test("the documented example: UINT32 [2,2] and BOOL [3], output asked as binary", () => {
    const { body, jsonLength } = encodeInferRequest({
      inputs: [
        { name: "input0", datatype: "UINT32", shape: [2, 2], data: new Uint32Array([1, 2, 3, 4]) },
        { name: "input1", datatype: "BOOL", shape: [3], data: [true, false, true] },
      ],
      outputs: [{ name: "output0" }],
    });
    const { json, binary } = split(body, jsonLength);
    assert.deepEqual(json, {
      inputs: [
        { name: "input0", shape: [2, 2], datatype: "UINT32", parameters: { binary_data_size: 16 } },
        { name: "input1", shape: [3], datatype: "BOOL", parameters: { binary_data_size: 3 } },
      ],
      outputs: [{ name: "output0", parameters: { binary_data: true } }],
    });
    assert.equal(binary.length, 19); // "the total size of the binary data is 19 bytes"
    assert.deepEqual([...binary], [1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 1, 0, 1]);
  });

  test("without outputs, binary_data_output asks for every output as binary", () => {
    const { body, jsonLength } = encodeInferRequest({
      inputs: [{ name: "x", datatype: "FP32", shape: [1], data: [1.5] }],
      id: "req-1",
      priority: 2,
      timeoutUs: 5000,
      parameters: { custom: "yes" },
    });
    const { json, binary } = split(body, jsonLength);
    assert.equal(json.id, "req-1");
    assert.deepEqual(json.parameters, {
      custom: "yes",
      priority: 2,
      timeout: 5000,
      binary_data_output: true,
    });
    assert.deepEqual([...binary], [...new Uint8Array(new Float32Array([1.5]).buffer)]);
  });

  test("BYTES elements are a 4-byte little-endian length, then the bytes", () => {
    const { body, jsonLength } = encodeInferRequest({
      inputs: [{ name: "s", datatype: "BYTES", shape: [3], data: ["ab", "", "é"] }],
    });
    const { json, binary } = split(body, jsonLength);
    assert.equal(json.inputs[0].parameters.binary_data_size, 4 + 2 + 4 + 0 + 4 + 2);
    assert.deepEqual([...binary], [2, 0, 0, 0, 0x61, 0x62, 0, 0, 0, 0, 2, 0, 0, 0, 0xc3, 0xa9]);
  });

  test("INT64 and FP16 travel as raw little-endian bytes; a TypedArray view's offset is respected", () => {
    const backing = new BigInt64Array([9n, -1n, 2n ** 62n]);
    const view = new BigInt64Array(backing.buffer, 8, 2);
    const { body, jsonLength } = encodeInferRequest({
      inputs: [
        { name: "i", datatype: "INT64", shape: [2], data: view },
        { name: "h", datatype: "FP16", shape: [1], data: new Uint16Array([0x3c00]) },
      ],
    });
    const { binary } = split(body, jsonLength);
    assert.deepEqual(binary.subarray(0, 16), Buffer.from(new BigInt64Array([-1n, 2n ** 62n]).buffer));
    assert.deepEqual([...binary.subarray(16)], [0x00, 0x3c]);
  });
});

describe("JSON encoding", () => {
  test("binaryInputs: false sends flat data arrays, no Inference-Header-Content-Length", () => {
    const { body, jsonLength } = encodeInferRequest({
      inputs: [
        { name: "f", datatype: "FP32", shape: [2, 1], data: new Float32Array([0.5, -2]) },
        { name: "i", datatype: "INT64", shape: [2], data: [9007199254740993n, -5n] },
        { name: "b", datatype: "BOOL", shape: [2], data: new Uint8Array([1, 0]) },
        { name: "s", datatype: "BYTES", shape: [2], data: ["x", new TextEncoder().encode("y")] as string[] },
        { name: "u", datatype: "UINT8", shape: [2], data: [255, 0] },
      ],
      outputs: [{ name: "o", binary: false, classification: 2 }],
      binaryInputs: false,
      binaryOutputs: false,
    });
    assert.equal(jsonLength, undefined);
    const text = utf8(body);
    assert.ok(text.includes('"data":[9007199254740993,-5]'), "64-bit integers are written exactly");
    const json = JSON.parse(text);
    assert.deepEqual(json.inputs[0], { name: "f", shape: [2, 1], datatype: "FP32", data: [0.5, -2] });
    assert.deepEqual(json.inputs[2].data, [true, false]);
    assert.deepEqual(json.inputs[3].data, ["x", "y"]);
    assert.deepEqual(json.inputs[4].data, [255, 0]);
    assert.deepEqual(json.outputs, [{ name: "o", parameters: { binary_data: false, classification: 2 } }]);
    assert.equal(json.parameters, undefined);
  });

  test("FP16 inputs stay binary even when JSON is asked for", () => {
    const { body, jsonLength } = encodeInferRequest({
      inputs: [{ name: "h", datatype: "FP16", shape: [1], data: new Uint16Array([1]) }],
      binaryInputs: false,
    });
    assert.equal(split(body, jsonLength).json.inputs[0].parameters.binary_data_size, 2);
  });

  test("NaN cannot travel as JSON", () => {
    assert.throws(
      () =>
        encodeInferRequest({
          inputs: [{ name: "f", datatype: "FP32", shape: [1], data: [Number.NaN] }],
          binaryInputs: false,
        }),
      /element 0 is NaN/,
    );
  });
});

describe("validation before anything is sent", () => {
  test("shape against element count names the tensor, shape and count", () => {
    assert.throws(
      () =>
        encodeInferRequest({
          inputs: [{ name: "INPUT0", datatype: "INT32", shape: [2, 8], data: new Int32Array(15) }],
        }),
      (e: unknown) =>
        e instanceof InvalidArgumentError &&
        e.message === "input 'INPUT0': shape [2,8] holds 16 elements but data has 15",
    );
  });
  test("negative or fractional dimensions", () => {
    assert.throws(
      () => encodeInferRequest({ inputs: [{ name: "x", datatype: "FP32", shape: [-1], data: [] }] }),
      /shape \[-1\] has dimension -1/,
    );
  });
  test("a wrong TypedArray at run time (from untyped JavaScript)", () => {
    const input = {
      name: "x",
      datatype: "FP32",
      shape: [1],
      data: new Int32Array(1),
    } as unknown as InferInput;
    assert.throws(
      () => encodeInferRequest({ inputs: [input] }),
      /FP32 data must be a Float32Array or an array, got Int32Array/,
    );
  });
  test("unknown datatype; numbers for INT64", () => {
    const bad = { name: "x", datatype: "FLOAT", shape: [1], data: [1] } as unknown as InferInput;
    assert.throws(() => encodeInferRequest({ inputs: [bad] }), /unknown datatype "FLOAT"/);
    const numbers = { name: "x", datatype: "INT64", shape: [1], data: [1] } as unknown as InferInput;
    assert.throws(() => encodeInferRequest({ inputs: [numbers] }), /INT64 elements must be bigints/);
  });
  test("an element its TypedArray would change is refused, never wrapped or truncated", () => {
    const cases: [string, unknown[], RegExp][] = [
      [
        "INT64",
        [2n ** 63n],
        /input 'x': INT64 element 0 is 9223372036854775808, outside \[-9223372036854775808, 9223372036854775807\]/,
      ],
      ["UINT64", [0n, -1n], /input 'x': UINT64 element 1 is -1, outside \[0, 18446744073709551615\]/],
      ["INT8", [300], /input 'x': INT8 element 0 is 300, not an integer in \[-128, 127\]/],
      ["UINT8", [256], /input 'x': UINT8 element 0 is 256, not an integer in \[0, 255\]/],
      ["INT32", [1.5], /input 'x': INT32 element 0 is 1.5, not an integer in/],
      ["INT32", ["7"], /input 'x': INT32 elements must be numbers; element 0 is "7"/],
    ];
    for (const [datatype, data, message] of cases) {
      for (const binaryInputs of [true, false]) {
        const input = { name: "x", datatype, shape: [data.length], data } as unknown as InferInput;
        assert.throws(
          () => encodeInferRequest({ inputs: [input], binaryInputs }),
          message,
          `${datatype} ${data}`,
        );
      }
    }
    const nullFp32 = { name: "x", datatype: "FP32", shape: [1], data: [null] } as unknown as InferInput;
    assert.throws(
      () => encodeInferRequest({ inputs: [nullFp32] }),
      /input 'x': FP32 elements must be numbers; element 0 is null/,
    );
    const edges = encodeInferRequest({
      inputs: [
        { name: "i", datatype: "INT64", shape: [2], data: [2n ** 63n - 1n, -(2n ** 63n)] },
        { name: "u", datatype: "UINT64", shape: [1], data: [2n ** 64n - 1n] },
      ],
      binaryInputs: false,
    });
    assert.match(
      utf8(edges.body),
      /"data":\[9223372036854775807,-9223372036854775808\]\}.*"data":\[18446744073709551615\]/,
    );
  });
  test("BYTES that are not UTF-8 cannot travel as JSON", () => {
    assert.throws(
      () =>
        encodeInferRequest({
          inputs: [{ name: "s", datatype: "BYTES", shape: [1], data: [new Uint8Array([0xff])] }],
          binaryInputs: false,
        }),
      /not UTF-8/,
    );
  });
});

describe("the JSON header's text", () => {
  // The common case (no parameters anywhere) is written by hand; its text must be what JSON.stringify
  // writes for the same members in the same order, byte for byte.
  test("binary inputs without parameters: exactly JSON.stringify's text", () => {
    const inputs: InferInput[] = [
      { name: 'quote " back \\ é 🙂', datatype: "FP32", shape: [1, 0, 2], data: new Float32Array(0) },
      { name: "big", datatype: "INT8", shape: [1e3, 1], data: new Int8Array(1000) },
      { name: "z", datatype: "BOOL", shape: [-0 as number, 4], data: [] },
    ];
    for (const binaryOutputs of [true, false]) {
      const { body, jsonLength } = encodeInferRequest({ inputs, binaryOutputs, id: "i\n1" });
      const expected = JSON.stringify({
        id: "i\n1",
        inputs: inputs.map((x, i) => ({
          name: x.name,
          shape: x.shape,
          datatype: x.datatype,
          parameters: { binary_data_size: [0, 1000, 0][i] },
        })),
        ...(binaryOutputs ? { parameters: { binary_data_output: true } } : {}),
      });
      assert.equal(utf8(body, jsonLength), expected);
    }
  });
});
