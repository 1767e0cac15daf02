/**
 * How a stream picks its next token from one row of logits: greedy (the highest logit, the lowest id on a
 * tie) when the temperature is 0, else a draw from softmax(logits / temperature) with the stream's own
 * generator, seeded from the request's seed so that the same seed gives the same text.
 */

/** Picks a token id from a row of logits. */
export type Sampler = (logits: Float32Array) => number;

/** The id of the largest value (the first of equals). */
export function argmax(logits: Float32Array): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
  return best;
}

/** mulberry32: a small, fast 32-bit generator; uniform floats in [0, 1). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A sampler for `temperature` (0: greedy) seeded by `seed` (a uint64; its two halves folded). */
export function createSampler(temperature: number, seed: bigint): Sampler {
  if (temperature <= 0) return argmax;
  const random = mulberry32(Number(BigInt.asUintN(32, seed) ^ BigInt.asUintN(32, seed >> 32n)));
  let scratch = new Float64Array(0);
  return (logits) => {
    if (scratch.length !== logits.length) scratch = new Float64Array(logits.length);
    let max = Number.NEGATIVE_INFINITY;
    for (const value of logits) max = Math.max(max, value);
    let total = 0;
    for (let i = 0; i < logits.length; i++) {
      const weight = Math.exp((logits[i]! - max) / temperature);
      scratch[i] = weight;
      total += weight;
    }
    let draw = random() * total;
    for (let i = 0; i < logits.length; i++) {
      draw -= scratch[i]!;
      if (draw < 0) return i;
    }
    return argmax(logits);
  };
}
