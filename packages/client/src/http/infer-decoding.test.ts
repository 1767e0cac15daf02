import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MalformedResponseError } from "../errors.js";
import { decodeInferResponse } from "./infer-decoding.js";

function binaryBody(header: unknown, parts: Uint8Array[], pad = 0): { body: Buffer; jsonLength: string } {
  const json = Buffer.from(JSON.stringify(header));
  const whole = Buffer.concat([Buffer.alloc(pad), json, ...parts]);
  return { body: whole.subarray(pad), jsonLength: String(json.length) };
}

const f32 = (values: number[]) => new Uint8Array(new Float32Array(values).buffer);

describe("binary responses", () => {
  test("the documented example: FP32 [3,2] as 24 binary bytes", () => {
    const values = [1, 2, 3, 4, 5, 6];
    const { body, jsonLength } = binaryBody(
      {
        model_name: "mymodel",
        model_version: "1",
        id: "42",
        outputs: [{ name: "output0", shape: [3, 2], datatype: "FP32", parameters: { binary_data_size: 24 } }],
      },
      [f32(values)],
    );
    const result = decodeInferResponse(body, jsonLength);
    assert.equal(result.modelName, "mymodel");
    assert.equal(result.modelVersion, "1");
    assert.equal(result.id, "42");
    const out = result.output("output0")!;
    assert.deepEqual(out.shape, [3, 2]);
    assert.equal(out.size, 6);
    assert.deepEqual([...out.as("FP32")], values);
    assert.deepEqual(out.toArray(), values);
    assert.equal(result.output("nope"), undefined);
  });

  test("aligned outputs are views of the response buffer, not copies", () => {
    // header length chosen so the binary section starts on a 4-byte boundary of the buffer
    const header = {
      model_name: "m",
      model_version: "1",
      outputs: [{ name: "o", shape: [2], datatype: "FP32", parameters: { binary_data_size: 8 } }],
    };
    const json = Buffer.from(JSON.stringify(header));
    const pad = (4 - (json.length % 4)) % 4;
    const backing = new ArrayBuffer(pad + json.length + 8);
    const body = Buffer.from(backing, pad, json.length + 8);
    json.copy(body, 0);
    Buffer.from(f32([7, 8])).copy(body, json.length);
    const typed = decodeInferResponse(body, String(json.length)).outputs[0]!.as("FP32");
    assert.equal(typed.buffer, backing, "same memory");
    body.writeFloatLE(9, json.length);
    assert.equal(typed[0], 9);
  });

  test("misaligned outputs are copied once, with the right values", () => {
    const header = {
      model_name: "m",
      model_version: "1",
      outputs: [{ name: "o", shape: [2], datatype: "FP32", parameters: { binary_data_size: 8 } }],
    };
    const json = Buffer.from(JSON.stringify(header));
    const pad = ((4 - (json.length % 4)) % 4) + 1;
    const backing = new ArrayBuffer(pad + json.length + 8);
    const body = Buffer.from(backing, pad, json.length + 8);
    json.copy(body, 0);
    Buffer.from(f32([7, 8])).copy(body, json.length);
    const typed = decodeInferResponse(body, String(json.length)).outputs[0]!.as("FP32");
    assert.notEqual(typed.buffer, backing);
    assert.deepEqual([...typed], [7, 8]);
  });

  test("several outputs in order; BYTES split by 4-byte lengths; BOOL; INT64", () => {
    const bytes = Buffer.concat([Buffer.from([3, 0, 0, 0]), Buffer.from("abc"), Buffer.from([0, 0, 0, 0])]);
    const { body, jsonLength } = binaryBody(
      {
        model_name: "m",
        model_version: "1",
        outputs: [
          { name: "s", shape: [2], datatype: "BYTES", parameters: { binary_data_size: bytes.length } },
          { name: "b", shape: [3], datatype: "BOOL", parameters: { binary_data_size: 3 } },
          { name: "i", shape: [1], datatype: "INT64", parameters: { binary_data_size: 8 } },
        ],
      },
      [bytes, new Uint8Array([1, 0, 1]), new Uint8Array(new BigInt64Array([-3n]).buffer)],
    );
    const result = decodeInferResponse(body, jsonLength);
    assert.deepEqual(result.output("s")!.strings(), ["abc", ""]);
    assert.deepEqual(result.output("b")!.toArray(), [true, false, true]);
    assert.deepEqual(result.output("i")!.toArray(), [-3n]);
    assert.throws(() => result.output("s")!.typedArray(), /use strings\(\) or bytes\(\)/);
    assert.throws(() => result.output("b")!.as("FP32"), /is BOOL, not FP32/);
  });
});

describe("FP16 and BF16 outputs", () => {
  test("as() gives the bit patterns, toArray() the numbers", () => {
    const { body, jsonLength } = binaryBody(
      {
        model_name: "m",
        outputs: [
          { name: "h", shape: [2], datatype: "FP16", parameters: { binary_data_size: 4 } },
          { name: "b", shape: [1], datatype: "BF16", parameters: { binary_data_size: 2 } },
        ],
      },
      [
        new Uint8Array(new Uint16Array([0x3c00, 0xc000]).buffer),
        new Uint8Array(new Uint16Array([0x4049]).buffer),
      ],
    );
    const result = decodeInferResponse(body, jsonLength);
    assert.deepEqual([...result.output("h")!.as("FP16")], [0x3c00, 0xc000]);
    assert.deepEqual(result.output("h")!.toArray(), [1, -2]);
    assert.deepEqual(result.output("b")!.toArray(), [3.140625]);
  });
});

describe("JSON responses", () => {
  test("data arrays (flat or nested) become TypedArrays; classification strings", () => {
    const body = Buffer.from(
      JSON.stringify({
        model_name: "m",
        model_version: "2",
        parameters: { sequence_id: 3 },
        outputs: [
          {
            name: "f",
            shape: [2, 2],
            datatype: "FP32",
            data: [
              [1, 2],
              [3, 4],
            ],
          },
          { name: "c", shape: [2], datatype: "STRING", data: ["3.3:1", "2.4:3:label"] },
          { name: "i", shape: [1], datatype: "INT64", data: [5] },
          { name: "b", shape: [1], datatype: "BOOL", data: [true] },
        ],
      }),
    );
    const result = decodeInferResponse(body, undefined);
    assert.deepEqual(result.parameters, { sequence_id: 3 });
    assert.deepEqual([...result.output("f")!.as("FP32")], [1, 2, 3, 4]);
    assert.equal(result.output("c")!.datatype, "BYTES");
    assert.deepEqual(result.output("c")!.strings(), ["3.3:1", "2.4:3:label"]);
    assert.deepEqual([...result.output("i")!.as("INT64")], [5n]);
    assert.deepEqual(result.output("b")!.toArray(), [true]);
  });
});

describe("64-bit integers in JSON responses are exact", () => {
  const text = (outputs: string) =>
    Buffer.from(`{"model_name":"m","model_version":"1","outputs":[${outputs}]}`);

  test("INT64 and UINT64 past 2^53 keep every digit (JSON.parse would round them)", () => {
    const body = text(
      '{"name":"f","datatype":"FP32","shape":[1],"data":[0.5]},' +
        '{"name":"i","datatype":"INT64","shape":[2,2],"data":[[9007199254740993,9223372036854775807],[-9223372036854775808,-1]]},' +
        '{"name":"u","datatype":"UINT64","shape":[2],"data":[18446744073709551615,9007199254740993]}',
    );
    const result = decodeInferResponse(body, undefined);
    assert.deepEqual(result.output("i")!.toArray(), [2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n), -1n]);
    assert.deepEqual([...result.output("u")!.as("UINT64")], [2n ** 64n - 1n, 2n ** 53n + 1n]);
    assert.deepEqual([...result.output("f")!.as("FP32")], [0.5]);
  });

  test("the digits are those of the output's own data, whatever the other members hold", () => {
    const body = Buffer.from(
      '{"model_name":"m","model_version":"1","id":"\\"data\\":[1]","outputs":[' +
        '{"name":"x","datatype":"INT64","shape":[1],"parameters":{"data":[2]},"data":[9007199254740995]}]}',
    );
    assert.deepEqual(decodeInferResponse(body, undefined).output("x")!.toArray(), [9007199254740995n]);
  });

  test("a value outside the type, or not an integer, is a MalformedResponseError, never a wrapped value", () => {
    for (const [datatype, value] of [
      ["INT64", "9223372036854775808"],
      ["UINT64", "-1"],
      ["INT64", "1.5"],
      ["INT8", "300"],
      ["UINT32", "-1"],
    ]) {
      const out = decodeInferResponse(
        text(`{"name":"o","datatype":"${datatype}","shape":[1],"data":[${value}]}`),
        undefined,
      ).output("o")!;
      assert.throws(
        () => out.typedArray(),
        (e: unknown) =>
          e instanceof MalformedResponseError && e.message.includes(`is ${value}, not a ${datatype} value`),
        `${datatype} ${value}`,
      );
    }
  });
});

describe("malformed answers are clear errors", () => {
  const header = {
    model_name: "m",
    model_version: "1",
    outputs: [{ name: "o", shape: [2], datatype: "FP32", parameters: { binary_data_size: 8 } }],
  };
  const cases: [string, () => unknown, RegExp][] = [
    ["not JSON", () => decodeInferResponse(Buffer.from("{oops"), undefined), /JSON header does not parse/],
    [
      "no outputs",
      () => decodeInferResponse(Buffer.from('{"model_name":"m"}'), undefined),
      /outputs is missing/,
    ],
    [
      "header length past the body",
      () => decodeInferResponse(Buffer.from("{}"), "99"),
      /Inference-Header-Content-Length is "99"/,
    ],
    [
      "binary_data_size past the body",
      () => {
        const { body, jsonLength } = binaryBody(header, [new Uint8Array(4)]);
        return decodeInferResponse(body, jsonLength);
      },
      /binary_data_size 8 but 4 bytes remain/,
    ],
    [
      "trailing bytes",
      () => {
        const { body, jsonLength } = binaryBody(header, [new Uint8Array(12)]);
        return decodeInferResponse(body, jsonLength);
      },
      /4 bytes after the last binary output/,
    ],
    [
      "unknown datatype",
      () =>
        decodeInferResponse(
          Buffer.from('{"model_name":"m","outputs":[{"name":"o","datatype":"F32","shape":[1],"data":[1]}]}'),
          undefined,
        ),
      /unknown datatype "F32"/,
    ],
    [
      "binary size that does not fit the shape",
      () => {
        const h = { ...header, outputs: [{ ...header.outputs[0], shape: [3] }] };
        const { body, jsonLength } = binaryBody(h, [new Uint8Array(8)]);
        return decodeInferResponse(body, jsonLength).outputs[0]!.typedArray();
      },
      /8 bytes of binary data for shape \[3\] of FP32 \(expected 12\)/,
    ],
    [
      "BYTES length past the end",
      () => {
        const h = {
          model_name: "m",
          outputs: [{ name: "s", shape: [1], datatype: "BYTES", parameters: { binary_data_size: 5 } }],
        };
        const { body, jsonLength } = binaryBody(h, [new Uint8Array([9, 0, 0, 0, 1])]);
        return decodeInferResponse(body, jsonLength).outputs[0]!.strings();
      },
      /BYTES element of 9 bytes runs past the end/,
    ],
  ];
  for (const [name, run, pattern] of cases) {
    test(name, () => {
      assert.throws(run, (e: unknown) => e instanceof MalformedResponseError && pattern.test(e.message));
    });
  }
});
