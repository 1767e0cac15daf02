/**
 * A plain TypeScript forward pass of the bundled `mlp` model, using the same seeded weights the model file
 * is built with. Tests anywhere in the repo compute expected `probabilities` with it, independently of
 * onnxruntime (float64 arithmetic, so results agree with onnxruntime's float32 to about 1e-6).
 */
import { MLP_SIZES, type MlpWeights, mlpWeights } from "./models/mlp.js";

export { MLP_SIZES } from "./models/mlp.js";

let cached: MlpWeights | undefined;

/**
 * Computes `mlp`'s output for a batch.
 * @param input - row-major [batch, 64] values.
 * @returns row-major [batch, 10] class probabilities (each row sums to 1).
 * @throws Error when `input.length` is not a multiple of 64.
 */
export function mlpForward(input: ArrayLike<number>): Float32Array {
  const { inputs, hidden, classes } = MLP_SIZES;
  if (input.length % inputs !== 0) {
    throw new Error(`mlp input must hold a multiple of ${inputs} values, got ${input.length}`);
  }
  cached ??= mlpWeights();
  const { w1, b1, w2, b2 } = cached;
  const batch = input.length / inputs;
  const out = new Float32Array(batch * classes);
  const h = new Float64Array(hidden);
  const logits = new Float64Array(classes);
  for (let n = 0; n < batch; n++) {
    for (let j = 0; j < hidden; j++) {
      let sum = b1[j]!;
      for (let k = 0; k < inputs; k++) sum += input[n * inputs + k]! * w1[j * inputs + k]!;
      h[j] = Math.max(sum, 0); // ReLU
    }
    let max = Number.NEGATIVE_INFINITY;
    for (let c = 0; c < classes; c++) {
      let sum = b2[c]!;
      for (let j = 0; j < hidden; j++) sum += h[j]! * w2[c * hidden + j]!;
      logits[c] = sum;
      if (sum > max) max = sum;
    }
    let total = 0;
    for (let c = 0; c < classes; c++) {
      logits[c] = Math.exp(logits[c]! - max);
      total += logits[c]!;
    }
    for (let c = 0; c < classes; c++) out[n * classes + c] = logits[c]! / total;
  }
  return out;
}
