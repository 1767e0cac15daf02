/**
 * `heavy` / `heavy_nobatch` / `heavy_gpu`: the batching benchmark model, a deep MLP,
 * input [batch, 256] -> Gemm 384 + Relu -> 48 x (Gemm 384x384 + Relu) -> Gemm -> output [batch, 16].
 *
 * Every hidden layer has weights of its own (27 MiB in all, more than a CPU cache holds), so a batch-1
 * run is bound by reading the weights from memory, about 1.5-2 ms on one core, as small batches are on
 * a GPU. A batch of 16 reads the same weights once for 16 rows and costs about twice a batch-1 run; a
 * batch of 32 about 3-4 times (`measure-heavy.ts` prints the figures on this machine). That gap is
 * what dynamic batching turns into throughput. (A weight-tied stack that fits in cache batches far less
 * well: its batch-1 run is already compute-bound.)
 */
import { createGraphBuilder, intAttr } from "../graph-builder.js";
import { createMulberry32, uniformFloat32 } from "../prng.js";

/** Layer sizes of `heavy`. */
export const HEAVY_SIZES = { inputs: 256, hidden: 384, hiddenLayers: 48, outputs: 16 } as const;

const HEAVY_SEED = 0x68656176;

/**
 * Builds the `heavy` model file; `heavy_nobatch` and `heavy_gpu` use the same bytes (only configs differ).
 * `hiddenLayers` makes a shallower (faster) variant of the same stack: the server benchmark's stand-in for
 * `heavy` on a fast device, where the model's run no longer hides the server's own cost.
 */
export function buildHeavyModel(hiddenLayers: number = HEAVY_SIZES.hiddenLayers): Uint8Array {
  const { inputs, hidden, outputs } = HEAVY_SIZES;
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
  g.initializer("w_out", "FP32", [outputs, hidden], he(hidden, outputs));
  g.initializer("b_out", "FP32", [outputs], uniformFloat32(random, outputs, 0.01));
  let x = g.node("Relu", [g.node("Gemm", ["input", "w_in", "b_in"], ["gemm_in"], transB)], ["relu_in"]);
  for (let i = 0; i < hiddenLayers; i++) {
    g.initializer(`w${i}`, "FP32", [hidden, hidden], he(hidden, hidden));
    g.initializer(`b${i}`, "FP32", [hidden], uniformFloat32(random, hidden, 0.01));
    const pre = g.node("Gemm", [x, `w${i}`, `b${i}`], [`gemm${i}`], transB);
    x = g.node("Relu", [pre], [`relu${i}`]);
  }
  g.node("Gemm", [x, "w_out", "b_out"], ["output"], transB);
  g.output("output", "FP32", ["batch", outputs]);
  return g.build();
}
