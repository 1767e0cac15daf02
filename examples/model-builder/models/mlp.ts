/**
 * `mlp`: a small FP32 classifier with a dynamic batch dimension,
 * input [batch, 64] -> Gemm -> Relu -> Gemm -> Softmax -> probabilities [batch, 10].
 * Weights come from a seeded generator, so `mlp-reference.ts` can recompute every output in plain TypeScript.
 */
import { createGraphBuilder, intAttr } from "../graph-builder.js";
import { createMulberry32, layerWeights, uniformFloat32 } from "../prng.js";

/** Layer sizes of `mlp`. */
export const MLP_SIZES = { inputs: 64, hidden: 128, classes: 10 } as const;

/** The seed of `mlp`'s weights. */
export const MLP_SEED = 0x6d6c70;

/** `mlp`'s parameters; weight matrices are row-major [out, in] (used with Gemm transB=1). */
export interface MlpWeights {
  /** [hidden, inputs] */
  readonly w1: Float32Array;
  /** [hidden] */
  readonly b1: Float32Array;
  /** [classes, hidden] */
  readonly w2: Float32Array;
  /** [classes] */
  readonly b2: Float32Array;
}

/** The weights `mlp` is built with; a fresh copy on every call, identical every time. */
export function mlpWeights(): MlpWeights {
  const random = createMulberry32(MLP_SEED);
  const { inputs, hidden, classes } = MLP_SIZES;
  const w1 = layerWeights(random, inputs, hidden);
  const b1 = uniformFloat32(random, hidden, 0.1);
  const w2 = layerWeights(random, hidden, classes);
  const b2 = uniformFloat32(random, classes, 0.1);
  return { w1, b1, w2, b2 };
}

/** Builds `mlp/1/model.onnx`. */
export function buildMlpModel(): Uint8Array {
  const { inputs, hidden, classes } = MLP_SIZES;
  const { w1, b1, w2, b2 } = mlpWeights();
  const g = createGraphBuilder({ name: "mlp", docString: "64 -> 128 (ReLU) -> 10 softmax classifier" });
  g.input("input", "FP32", ["batch", inputs]);
  g.initializer("w1", "FP32", [hidden, inputs], w1);
  g.initializer("b1", "FP32", [hidden], b1);
  g.initializer("w2", "FP32", [classes, hidden], w2);
  g.initializer("b2", "FP32", [classes], b2);
  const transB = { transB: intAttr(1) };
  g.node("Gemm", ["input", "w1", "b1"], ["hidden_pre"], transB);
  g.node("Relu", ["hidden_pre"], ["hidden"]);
  g.node("Gemm", ["hidden", "w2", "b2"], ["logits"], transB);
  g.node("Softmax", ["logits"], ["probabilities"], { axis: intAttr(-1) });
  g.output("probabilities", "FP32", ["batch", classes]);
  return g.build();
}
