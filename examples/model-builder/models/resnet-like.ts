/**
 * `resnet_like`: an image classifier shaped like ResNet's interface, FP32 `input` [batch, 3, 224, 224] ->
 * `output` [batch, 1000] class scores. Four stride-2 3x3 Conv+Relu stages (3 -> 8 -> 16 -> 32 -> 64 channels,
 * 224 -> 14 pixels), global average pooling, then a 64 -> 1000 Gemm. Small enough (~0.4 MB) to generate on
 * every test run; the first step of `ensemble_pipeline`.
 */
import { createGraphBuilder, intAttr, intsAttr } from "../graph-builder.js";
import { createMulberry32, uniformFloat32 } from "../prng.js";

/** Channels after each Conv stage. */
export const RESNET_LIKE_CHANNELS = [8, 16, 32, 64] as const;

/** Number of classes (scores per image). */
export const RESNET_LIKE_CLASSES = 1000;

const SEED = 0x7265736e;

/** Builds `resnet_like/1/model.onnx`. */
export function buildResnetLikeModel(): Uint8Array {
  const random = createMulberry32(SEED);
  const g = createGraphBuilder({
    name: "resnet_like",
    docString: "image classifier: 4 strided Conv+Relu stages, global average pool, Gemm to 1000 scores",
  });
  g.input("input", "FP32", ["batch", 3, 224, 224]);
  const conv = {
    kernel_shape: intsAttr([3, 3]),
    strides: intsAttr([2, 2]),
    pads: intsAttr([1, 1, 1, 1]),
  };
  let x = "input";
  let channels = 3;
  RESNET_LIKE_CHANNELS.forEach((out, i) => {
    const fanIn = channels * 9;
    const w = g.initializer(
      `conv${i}_w`,
      "FP32",
      [out, channels, 3, 3],
      uniformFloat32(random, out * fanIn, Math.sqrt(6 / fanIn)),
    );
    const b = g.initializer(`conv${i}_b`, "FP32", [out], uniformFloat32(random, out, 0.05));
    x = g.node("Relu", [g.node("Conv", [x, w, b], [`conv${i}`], conv)], [`relu${i}`]);
    channels = out;
  });
  const pooled = g.node("GlobalAveragePool", [x], ["pooled"]);
  const flat = g.node("Flatten", [pooled], ["features"], { axis: intAttr(1) });
  const fcW = uniformFloat32(random, RESNET_LIKE_CLASSES * channels, Math.sqrt(6 / channels));
  g.initializer("fc_w", "FP32", [RESNET_LIKE_CLASSES, channels], fcW);
  g.initializer("fc_b", "FP32", [RESNET_LIKE_CLASSES], uniformFloat32(random, RESNET_LIKE_CLASSES, 0.05));
  g.node("Gemm", [flat, "fc_w", "fc_b"], ["output"], { transB: intAttr(1) });
  g.output("output", "FP32", ["batch", RESNET_LIKE_CLASSES]);
  return g.build();
}
