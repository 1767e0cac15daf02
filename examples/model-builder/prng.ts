/**
 * Seeded pseudo-random numbers for model weights. mulberry32 is a tiny 32-bit generator whose sequence
 * depends only on the seed, so every run (and every machine) produces the same weights and therefore
 * byte-identical model files.
 */

/** A generator of floats in [0, 1). */
export type Random = () => number;

/**
 * Creates a mulberry32 generator.
 * @param seed - any 32-bit integer; different seeds give unrelated sequences.
 */
export function createMulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` float32 values drawn uniformly from [-scale, scale).
 * @param random - the generator to draw from (advanced by `count` draws).
 */
export function uniformFloat32(random: Random, count: number, scale: number): Float32Array {
  const values = new Float32Array(count);
  for (let i = 0; i < count; i++) values[i] = (random() * 2 - 1) * scale;
  return values;
}

/**
 * Glorot-style uniform weights for a layer with `fanIn` inputs and `fanOut` outputs: keeps activations in a
 * sensible range through deep stacks, so outputs stay finite and distinguishable.
 */
export function layerWeights(random: Random, fanIn: number, fanOut: number): Float32Array {
  return uniformFloat32(random, fanIn * fanOut, Math.sqrt(6 / (fanIn + fanOut)));
}
