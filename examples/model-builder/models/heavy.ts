/**
 * `heavy` / `heavy_nobatch`: the batching benchmark model, a deep MLP with wide layers,
 * input [batch, 256] -> Gemm 1024 + Relu -> 32 x (Gemm 1024x1024 + Relu) -> Gemm -> output [batch, 16].
 *
 * At batch 1 every layer is a matrix-vector product (about 1.5 ms in all on one core); at batch 32 the
 * same weights serve 32 rows at once and run at matrix-matrix speed, so a batch-32 run costs about 13
 * batch-1 runs, not 32 (`measure-heavy.ts` prints the figures). That gap is what dynamic batching turns
 * into throughput. The 32 hidden layers share one weight matrix and bias (a weight-tied stack, like an
 * unrolled recurrent block): the work per run is that of 32 distinct layers, while the file stays ~5 MB
 * and is generated in milliseconds.
 */
import { createGraphBuilder, intAttr } from "../graph-builder.js";
import { createMulberry32, uniformFloat32 } from "../prng.js";

/** Layer sizes of `heavy`. */
export const HEAVY_SIZES = { inputs: 256, hidden: 1024, hiddenLayers: 32, outputs: 16 } as const;

const HEAVY_SEED = 0x68656176;

/** Builds the `heavy` model file; `heavy_nobatch` uses the same bytes (only their configs differ). */
export function buildHeavyModel(): Uint8Array {
  const { inputs, hidden, hiddenLayers, outputs } = HEAVY_SIZES;
  const random = createMulberry32(HEAVY_SEED);
  const g = createGraphBuilder({
    name: "heavy",
    docString: `batching benchmark: ${inputs} -> ${hiddenLayers + 1} x ${hidden} (ReLU) -> ${outputs}`,
  });
  const transB = { transB: intAttr(1) };
  // He-uniform scale (sqrt(6 / fanIn)) keeps activations about the same size through a deep ReLU stack.
  const he = (fanIn: number, fanOut: number) => uniformFloat32(random, fanIn * fanOut, Math.sqrt(6 / fanIn));
  g.input("input", "FP32", ["batch", inputs]);
  g.initializer("w_in", "FP32", [hidden, inputs], he(inputs, hidden));
  g.initializer("b_in", "FP32", [hidden], uniformFloat32(random, hidden, 0.01));
  g.initializer("w_hidden", "FP32", [hidden, hidden], he(hidden, hidden));
  g.initializer("b_hidden", "FP32", [hidden], uniformFloat32(random, hidden, 0.01));
  g.initializer("w_out", "FP32", [outputs, hidden], he(hidden, outputs));
  g.initializer("b_out", "FP32", [outputs], uniformFloat32(random, outputs, 0.01));
  let x = g.node("Relu", [g.node("Gemm", ["input", "w_in", "b_in"], ["gemm_in"], transB)], ["relu_in"]);
  for (let i = 0; i < hiddenLayers; i++) {
    const pre = g.node("Gemm", [x, "w_hidden", "b_hidden"], [`gemm${i}`], transB);
    x = g.node("Relu", [pre], [`relu${i}`]);
  }
  g.node("Gemm", [x, "w_out", "b_out"], ["output"], transB);
  g.output("output", "FP32", ["batch", outputs]);
  return g.build();
}
