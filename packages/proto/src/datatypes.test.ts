import assert from "node:assert/strict";
import { test } from "node:test";
import {
  allDatatypes,
  DATATYPES,
  datatypeFromConfigType,
  datatypeFromOnnxType,
  datatypeFromOrtType,
  datatypeInfo,
  isDatatype,
} from "./datatypes.js";

test("every v2 datatype has exactly one row, in protocol order", () => {
  assert.deepEqual(
    allDatatypes().map((row) => row.datatype),
    [...DATATYPES],
  );
});

test("byte sizes agree with the TypedArray that holds each datatype", () => {
  for (const row of allDatatypes()) {
    if (row.datatype === "BYTES") {
      assert.equal(row.byteSize, undefined);
      assert.equal(row.typedArray, undefined);
      continue;
    }
    assert.equal(row.typedArray?.BYTES_PER_ELEMENT, row.byteSize, row.datatype);
  }
});

test("BYTES is TYPE_STRING in model configs and string in onnxruntime", () => {
  assert.equal(datatypeInfo("BYTES")?.configType, "TYPE_STRING");
  assert.equal(datatypeFromConfigType("TYPE_STRING")?.datatype, "BYTES");
  assert.equal(datatypeFromOrtType("string")?.datatype, "BYTES");
});

test("lookups go both ways for every row", () => {
  for (const row of allDatatypes()) {
    assert.equal(datatypeFromConfigType(row.configType), row);
    assert.equal(datatypeFromOnnxType(row.onnxType), row);
    if (row.ortType !== undefined) assert.equal(datatypeFromOrtType(row.ortType), row);
  }
});

test("BF16 has no onnxruntime-node type; FP16 is float16", () => {
  assert.equal(datatypeInfo("BF16")?.ortType, undefined);
  assert.equal(datatypeInfo("FP16")?.ortType, "float16");
});

test("unknown names are rejected, case-sensitively", () => {
  assert.equal(isDatatype("FP32"), true);
  assert.equal(isDatatype("fp32"), false);
  assert.equal(isDatatype("FLOAT"), false);
  assert.equal(datatypeInfo("TYPE_FP32"), undefined);
});
