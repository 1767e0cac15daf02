// Wire forms that protobuf text cannot express, hand-crafted as bytes and judged by protoc: repeated
// scalars unpacked (proto3 parsers must accept them although protoc writes packed), unknown fields, map
// entries in any order or repeated, a oneof written twice, and the ten-byte varint of a negative int32.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { skipWithout } from "../../../../scripts/testing/system-tools.js";
import { inference } from "../index.js";
import { hexBytes, JSON_FORM } from "./testing/golden-cases.js";
import { protocDecode, protocEncode } from "./testing/protoc-cli.js";

const withoutProtoc = skipWithout("protoc");

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");
const concat = (...parts: Uint8Array[]): Uint8Array => new Uint8Array(Buffer.concat(parts));
/** A length-delimited field (tag byte given), for lengths under 128. */
const lengthDelimited = (tag: number, body: Uint8Array): Uint8Array => {
  assert.ok(body.length < 128);
  return concat(new Uint8Array([tag, body.length]), body);
};

const contentsText = `bool_contents: true
bool_contents: false
int_contents: -1
int_contents: 2147483647
int64_contents: -9223372036854775808
int64_contents: 9223372036854775807
uint_contents: 4294967295
uint64_contents: 18446744073709551615
fp32_contents: 0.5
fp64_contents: -2.5
`;
const contentsValues = {
  bool_contents: [true, false],
  int_contents: [-1, 2147483647],
  int64_contents: ["-9223372036854775808", "9223372036854775807"],
  uint_contents: [4294967295],
  uint64_contents: ["18446744073709551615"],
  fp32_contents: [0.5],
  fp64_contents: [-2.5],
};
// The same values, one tag per element (wire types 0, 5 and 1 instead of 2).
const contentsUnpacked = hexBytes(`
  0801 0800
  10ffffffffffffffffff01 10ffffffff07
  1880808080808080808001 18ffffffffffffffff7f
  20ffffffff0f
  28ffffffffffffffffff01
  350000003f
  3900000000000004c0`);

describe("repeated scalars: packed and unpacked", { skip: withoutProtoc }, () => {
  test("protoc writes packed (one length-delimited field per repeated scalar)", () => {
    const packed = protocEncode("inference.InferTensorContents", contentsText);
    assert.equal(hex(packed.subarray(0, 4)), "0a020100"); // field 1, wire type 2, two bools
  });

  test("unpacked bytes decode to the same values as protoc's packed bytes", () => {
    const type = inference.InferTensorContents;
    const packed = protocEncode("inference.InferTensorContents", contentsText);
    assert.deepStrictEqual(type.toObject(type.decode(packed), JSON_FORM), contentsValues);
    assert.deepStrictEqual(type.toObject(type.decode(contentsUnpacked), JSON_FORM), contentsValues);
    // protoc reads the hand-crafted bytes as the same message, so they are what we claim they are.
    assert.equal(protocDecode("inference.InferTensorContents", contentsUnpacked), contentsText);
  });

  test("what we decode from unpacked bytes we write back packed, as protoc does", () => {
    const type = inference.InferTensorContents;
    const again = type.encode(type.decode(contentsUnpacked)).finish();
    assert.equal(hex(again), hex(protocEncode("inference.InferTensorContents", contentsText)));
  });

  test("packed and unpacked runs of one field concatenate in wire order", () => {
    // int_contents: packed [1, 2], then 3 unpacked, then packed [4].
    const bytes = hexBytes("12020102 1003 120104");
    const decoded = inference.InferTensorContents.decode(bytes);
    assert.deepEqual(decoded.int_contents, [1, 2, 3, 4]);
    assert.equal(
      protocDecode("inference.InferTensorContents", bytes),
      "int_contents: 1\nint_contents: 2\nint_contents: 3\nint_contents: 4\n",
    );
  });

  test("an unpacked int64 shape, negative dimension included", () => {
    // InferInputTensor { name: "X", shape: -1, shape: 16 } with shape written one tag per element.
    const bytes = hexBytes("0a0158 18ffffffffffffffffff01 1810");
    const type = inference.ModelInferRequest.InferInputTensor;
    assert.deepStrictEqual(type.toObject(type.decode(bytes), JSON_FORM), { name: "X", shape: ["-1", "16"] });
    assert.equal(
      protocDecode("inference.ModelInferRequest.InferInputTensor", bytes),
      'name: "X"\nshape: -1\nshape: 16\n',
    );
  });

  test("a negative int32 travels as a ten-byte varint, as protoc writes it", () => {
    const ours = inference.InferTensorContents.encode({ int_contents: [-1] }).finish();
    assert.equal(hex(ours), "120a" + "ff".repeat(9) + "01");
    assert.equal(hex(ours), hex(protocEncode("inference.InferTensorContents", "int_contents: -1")));
  });
});

describe("unknown fields", { skip: withoutProtoc }, () => {
  // Field numbers 99-103, one of each wire type: varint, length-delimited, fixed64, fixed32, group.
  const unknowns = hexBytes("980605 a20603616263 a9060102030405060708 b50601020304 bb060801bc06");
  const unknownsText = '99: 5\n100: "abc"\n101: 0x0807060504030201\n102: 0x04030201\n103 {\n  1: 1\n}\n';

  test("are skipped at the top level and inside nested messages", () => {
    const contents = concat(inference.InferTensorContents.encode({ int_contents: [7] }).finish(), unknowns);
    const input = concat(hexBytes("0a0158 1a0101"), unknowns, lengthDelimited(0x2a, contents));
    const bytes = concat(hexBytes("0a0173"), unknowns, lengthDelimited(0x2a, input), unknowns);
    const decoded = inference.ModelInferRequest.decode(bytes);
    assert.deepStrictEqual(inference.ModelInferRequest.toObject(decoded, JSON_FORM), {
      model_name: "s",
      inputs: [{ name: "X", shape: ["1"], contents: { int_contents: [7] } }],
    });
    // protoc sees the same known fields and reports the others as unknown, by number.
    const text = protocDecode("inference.ModelInferRequest", bytes);
    const indent = (by: string) => unknownsText.replace(/^(?=.)/gm, by);
    assert.equal(
      text,
      `model_name: "s"\ninputs {\n  name: "X"\n  shape: 1\n  contents {\n    int_contents: 7\n${indent("    ")}  }\n${indent("  ")}}\n${unknownsText}${unknownsText}`,
    );
  });

  test("a known field number with the wrong wire type is skipped, as protoc treats it as unknown", () => {
    // model_name (field 1, a string) sent as a varint, then as the string it is.
    const bytes = hexBytes("0805 0a0173");
    assert.deepStrictEqual(inference.ModelInferRequest.toObject(inference.ModelInferRequest.decode(bytes)), {
      model_name: "s",
    });
    assert.equal(protocDecode("inference.ModelInferRequest", bytes), 'model_name: "s"\n1: 5\n');
  });
});

describe("map fields", { skip: withoutProtoc }, () => {
  const entry = (key: string, valueHex: string) =>
    lengthDelimited(
      0x22,
      concat(lengthDelimited(0x0a, Buffer.from(key)), lengthDelimited(0x12, hexBytes(valueHex))),
    );
  const unsortedText = ["z", "a", "m"]
    .map((key, i) => `parameters { key: "${key}" value { int64_param: ${i + 1} } }\n`)
    .join("");
  const sortedText = ["a", "m", "z"]
    .map((key) => {
      const value = { z: 1, a: 2, m: 3 }[key];
      return `parameters {\n  key: "${key}"\n  value {\n    int64_param: ${value}\n  }\n}\n`;
    })
    .join("");

  test("entry order on the wire carries no meaning: protoc keeps text order, prints sorted", () => {
    const protocBytes = protocEncode("inference.ModelInferRequest", unsortedText);
    assert.equal(hex(protocBytes), hex(concat(entry("z", "1001"), entry("a", "1002"), entry("m", "1003"))));
    const decoded = inference.ModelInferRequest.decode(protocBytes);
    assert.deepStrictEqual(inference.ModelInferRequest.toObject(decoded, JSON_FORM).parameters, {
      z: { int64_param: "1" },
      a: { int64_param: "2" },
      m: { int64_param: "3" },
    });
    // We write entries in the object's order: the same bytes protoc wrote for the same order.
    assert.equal(hex(inference.ModelInferRequest.encode(decoded).finish()), hex(protocBytes));
    const sorted = inference.ModelInferRequest.fromObject({
      parameters: { a: { int64_param: 2 }, m: { int64_param: 3 }, z: { int64_param: 1 } },
    });
    const sortedBytes = inference.ModelInferRequest.encode(sorted).finish();
    assert.equal(protocDecode("inference.ModelInferRequest", protocBytes), sortedText);
    assert.equal(protocDecode("inference.ModelInferRequest", sortedBytes), sortedText);
  });

  test("a repeated key keeps the last entry, as the protobuf encoding rules require", () => {
    const bytes = concat(entry("k", "0801"), entry("k", "1005"));
    const decoded = inference.ModelInferRequest.toObject(
      inference.ModelInferRequest.decode(bytes),
      JSON_FORM,
    );
    assert.deepStrictEqual(decoded.parameters, { k: { int64_param: "5" } });
  });

  test("an entry may carry its value before its key; a missing key or value is the default", () => {
    const valueFirst = lengthDelimited(0x22, hexBytes("12020801 0a016b"));
    const noKey = lengthDelimited(0x22, hexBytes("12021007"));
    const noValue = lengthDelimited(0x22, hexBytes("0a0178"));
    const decoded = inference.ModelInferRequest.decode(concat(valueFirst, noKey, noValue));
    assert.deepStrictEqual(inference.ModelInferRequest.toObject(decoded, JSON_FORM).parameters, {
      k: { bool_param: true },
      "": { int64_param: "7" },
      x: {},
    });
  });
});

describe("oneof written twice", { skip: withoutProtoc }, () => {
  test("the last member on the wire wins (InferParameter)", () => {
    for (const [bytes, expected, text] of [
      ["0801 1005", { int64_param: "5" }, "int64_param: 5\n"],
      ["1005 0801", { bool_param: true }, "bool_param: true\n"],
    ] as const) {
      const decoded = inference.InferParameter.decode(hexBytes(bytes));
      assert.deepStrictEqual(inference.InferParameter.toObject(decoded, JSON_FORM), expected);
      assert.equal(protocDecode("inference.InferParameter", hexBytes(bytes)), text);
    }
  });

  test("the last scheduler on the wire wins (ModelConfig.scheduling_choice)", () => {
    // name "x", dynamic_batching {} (field 11), ensemble_scheduling {} (field 15), and the reverse.
    for (const [bytes, choice] of [
      ["0a0178 5a00 7a00", "ensemble_scheduling"],
      ["0a0178 7a00 5a00", "dynamic_batching"],
    ] as const) {
      const decoded = inference.ModelConfig.decode(hexBytes(bytes));
      assert.equal(decoded.scheduling_choice, choice);
      assert.deepStrictEqual(inference.ModelConfig.toObject(decoded, JSON_FORM), { name: "x", [choice]: {} });
      assert.equal(protocDecode("inference.ModelConfig", hexBytes(bytes)), `name: "x"\n${choice} {\n}\n`);
    }
  });
});
