/**
 * `label_head`: turns class scores into a label, FP32 `emb` [batch, 1000] -> INT64 `label` [batch, 1]
 * (ArgMax over the scores, keepdims; the first index wins a tie). The second step of `ensemble_pipeline`.
 */
import { createGraphBuilder, intAttr } from "../graph-builder.js";
import { RESNET_LIKE_CLASSES } from "./resnet-like.js";

/** Builds `label_head/1/model.onnx`. */
export function buildLabelHeadModel(): Uint8Array {
  const g = createGraphBuilder({ name: "label_head", docString: "label = argmax(emb), keepdims" });
  g.input("emb", "FP32", ["batch", RESNET_LIKE_CLASSES]);
  g.node("ArgMax", ["emb"], ["label"], { axis: intAttr(1), keepdims: intAttr(1) });
  g.output("label", "INT64", ["batch", 1]);
  return g.build();
}
