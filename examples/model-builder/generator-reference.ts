/**
 * A plain TypeScript step of the bundled `char_generator` model, with the same seeded weights the model file
 * is built with, and its tokenizer's encoding. Tests anywhere in the repo compute expected logits, states and
 * greedy text with it, independently of onnxruntime (float64 arithmetic over the float32 weights, so results
 * agree with onnxruntime's float32 to about 1e-5).
 */
import {
  GENERATOR_EOS_ID,
  GENERATOR_SIZES,
  type GeneratorWeights,
  generatorSuccessor,
  generatorWeights,
} from "./models/generator.js";

export { GENERATOR_EOS_ID, GENERATOR_SIZES, generatorSuccessor } from "./models/generator.js";

/** One step's outputs for a batch, row-major like the model's. */
export interface GeneratorStepResult {
  /** [batch, 96] */
  readonly logits: Float32Array;
  /** [batch, H] */
  readonly state: Float32Array;
}

let cached: GeneratorWeights | undefined;

/**
 * Computes `char_generator`'s step for a batch: state_out = tanh(state @ W + E[id]),
 * logits = N[id] + state_out @ U (ids taken modulo 96, as the model does).
 * @param inputIds - one token id per row.
 * @param state - row-major [batch, H] states (zeros start a stream).
 * @throws Error when `state` does not hold H values per id.
 */
export function generatorStep(
  inputIds: ArrayLike<number | bigint>,
  state: ArrayLike<number>,
): GeneratorStepResult {
  const { vocabulary, hidden } = GENERATOR_SIZES;
  const batch = inputIds.length;
  if (state.length !== batch * hidden) {
    throw new Error(`char_generator state must hold ${batch} x ${hidden} values, got ${state.length}`);
  }
  cached ??= generatorWeights();
  const { embedding, recurrent, output, successor } = cached;
  const logits = new Float32Array(batch * vocabulary);
  const next = new Float32Array(batch * hidden);
  const pre = new Float64Array(hidden);
  const row = new Float64Array(hidden);
  for (let n = 0; n < batch; n++) {
    const id = Number(((BigInt(inputIds[n]!) % 96n) + 96n) % 96n);
    pre.fill(0);
    // state @ W, row by row of W (W is [in, out]).
    for (let i = 0; i < hidden; i++) {
      const s = state[n * hidden + i]!;
      if (s === 0) continue;
      const base = i * hidden;
      for (let j = 0; j < hidden; j++) pre[j]! += s * recurrent[base + j]!;
    }
    for (let j = 0; j < hidden; j++) {
      row[j] = Math.tanh(pre[j]! + embedding[id * hidden + j]!);
      next[n * hidden + j] = row[j]!;
    }
    for (let v = 0; v < vocabulary; v++) {
      let sum = successor[id * vocabulary + v]!;
      for (let j = 0; j < hidden; j++) sum += row[j]! * output[j * vocabulary + v]!;
      logits[n * vocabulary + v] = sum;
    }
  }
  return { logits, state: next };
}

/**
 * The ids of `text` in `char_generator`'s vocabulary (id = character code - 31), as its tokenizer.json maps
 * them; no end-of-sequence token is added.
 * @throws RangeError naming the first character outside printable ASCII (32..126).
 */
export function generatorEncode(text: string): number[] {
  return Array.from(text, (char, i) => {
    const code = char.codePointAt(0)!;
    if (code < 32 || code > 126) {
      throw new RangeError(`char_generator has no token for ${JSON.stringify(char)} (character ${i})`);
    }
    return code - 31;
  });
}

/** The text of `ids`, ending at the first end-of-sequence token (not included). */
export function generatorDecode(ids: Iterable<number>): string {
  let text = "";
  for (const id of ids) {
    if (id === GENERATOR_EOS_ID) break;
    text += String.fromCharCode(id + 31);
  }
  return text;
}

/**
 * The text greedy decoding appends to `prompt`, up to `maxTokens` tokens (the end-of-sequence token counts
 * as one and is not part of the text): each next token is the successor of the last, whatever the state, so
 * only the prompt's last character matters ("Hello" -> "pqrstuvwxyz{|}~"; an empty prompt, which feeds
 * `</s>`, -> "").
 */
export function generatorGreedyText(prompt: string, maxTokens = Number.POSITIVE_INFINITY): string {
  const ids = generatorEncode(prompt);
  let last = ids.at(-1) ?? GENERATOR_EOS_ID;
  const out: number[] = [];
  while (out.length < maxTokens) {
    last = generatorSuccessor(last);
    out.push(last);
    if (last === GENERATOR_EOS_ID) break;
  }
  return generatorDecode(out);
}
