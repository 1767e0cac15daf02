/**
 * `simple`: Triton's quickstart model. INPUT0 and INPUT1 (INT32 [16], batched) give OUTPUT0 = INPUT0 + INPUT1
 * and OUTPUT1 = INPUT0 - INPUT1 (int32 wrap-around, as onnxruntime computes it).
 */
import { createGraphBuilder } from "../graph-builder.js";

/** Elements per row of every `simple` tensor. */
export const SIMPLE_WIDTH = 16;

/** Builds `simple/1/model.onnx`. */
export function buildSimpleModel(): Uint8Array {
  const g = createGraphBuilder({
    name: "simple",
    docString: "OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1",
  });
  const shape = ["batch", SIMPLE_WIDTH];
  const a = g.input("INPUT0", "INT32", shape);
  const b = g.input("INPUT1", "INT32", shape);
  g.node("Add", [a, b], ["OUTPUT0"]);
  g.node("Sub", [a, b], ["OUTPUT1"]);
  g.output("OUTPUT0", "INT32", shape);
  g.output("OUTPUT1", "INT32", shape);
  return g.build();
}
