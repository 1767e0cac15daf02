import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as ort from "onnxruntime-node";
import { createGraphBuilder, floatAttr, intAttr } from "./graph-builder.js";
import { decodeModelProto } from "./onnx-codec.js";

describe("graph builder", () => {
  it("writes ONNX's fields: IR version, opset, symbolic and fixed dims, raw initializers, attributes", () => {
    const g = createGraphBuilder({ name: "g", docString: "doc" });
    g.input("x", "FP32", ["batch", 2]);
    g.initializer("w", "FP32", [2, 2], new Float32Array([1, 2, 3, 4]));
    g.node("Gemm", ["x", "w"], ["y"], { transB: intAttr(1), alpha: floatAttr(0.5) });
    g.output("y", "FP32", ["batch", 2]);
    const model = decodeModelProto(g.build());
    assert.equal(model["ir_version"], "8");
    assert.equal(model["doc_string"], "doc");
    assert.deepEqual(model["opset_import"], [{ domain: "", version: "17" }]);
    const graph = model["graph"] as Record<string, unknown>;
    const input = (graph["input"] as Record<string, unknown>[])[0];
    assert.deepEqual(input, {
      name: "x",
      type: { tensor_type: { elem_type: 1, shape: { dim: [{ dim_param: "batch" }, { dim_value: "2" }] } } },
    });
    const init = (graph["initializer"] as Record<string, unknown>[])[0]!;
    assert.deepEqual(init["dims"], ["2", "2"]);
    assert.deepEqual(
      new Float32Array(new Uint8Array(init["raw_data"] as Buffer).buffer),
      new Float32Array([1, 2, 3, 4]),
    );
    const node = (graph["node"] as Record<string, unknown>[])[0]!;
    assert.deepEqual(node["attribute"], [
      { name: "transB", type: 2, i: "1" },
      { name: "alpha", type: 1, f: 0.5 },
    ]);
  });

  it("builds a model onnxruntime runs", async () => {
    const g = createGraphBuilder({ name: "g" });
    g.input("x", "FP32", ["batch", 2]);
    g.initializer("w", "FP32", [2, 2], new Float32Array([1, 2, 3, 4]));
    g.node("Gemm", ["x", "w"], ["y"], { transB: intAttr(1), alpha: floatAttr(0.5) });
    g.output("y", "FP32", ["batch", 2]);
    const session = await ort.InferenceSession.create(g.build());
    try {
      const { y } = await session.run({ x: new ort.Tensor("float32", new Float32Array([1, 1]), [1, 2]) });
      // 0.5 * x @ w^T = 0.5 * [1+2, 3+4]
      assert.deepEqual(y?.data, new Float32Array([1.5, 3.5]));
    } finally {
      await session.release();
    }
  });

  it("rejects a name defined twice, a wrong initializer size, and an output no node produces", () => {
    const g = createGraphBuilder({ name: "bad" });
    g.input("x", "FP32", [1]);
    assert.throws(() => g.input("x", "FP32", [1]), /ONNX value "x" is defined twice in graph "bad"/);
    assert.throws(
      () => g.initializer("w", "FP32", [2, 3], new Float32Array(5)),
      /initializer "w": expected 6 FP32 elements for dims \[2, 3\], got 5 elements of 4 bytes/,
    );
    assert.throws(
      () => g.initializer("v", "FP32", [2], new Float64Array(2)),
      /expected 2 FP32 elements .* got 2 elements of 8 bytes/,
    );
    assert.throws(() => g.initializer("s", "BYTES", [1], new Uint8Array(1)), /BYTES has no raw form/);
    g.output("nowhere", "FP32", [1]);
    assert.throws(() => g.build(), /output "nowhere" is produced by no node/);
  });
});
