/**
 * `char_generator`: the step model of a character-level generator, run by tbench-server's generation backend
 * (`backend: "tbench_generator"`): the server's decoding loop feeds one token per live stream and the
 * stream's recurrent state, and gets the next token's logits and the next state.
 *
 *   inputs:  `input_ids` INT64 [batch, 1], `state` FP32 [batch, H]
 *   outputs: `logits` FP32 [batch, 96], `state_out` FP32 [batch, H]
 *   step:    e = E[id]; state_out = tanh(state @ W + e); logits = N[id] + state_out @ U
 *
 * Vocabulary (96 ids, `tokenizer.json` beside the config): 0 is the end-of-sequence token `</s>`, ids 1..95
 * the printable ASCII characters 32 (space) .. 126 (`~`) in order (id = code - 31). N [96, 96] is 8 at
 * (t, succ(t)) and 0 elsewhere, with succ(t) = t + 1 for 1 <= t <= 94, succ(95) = 0 (after `~` comes the
 * end) and succ(0) = 0. U [H, 96] is uniform in [-1.5 / H, 1.5 / H], so |state_out @ U| < 1.5 whatever the
 * state (|tanh| < 1): the greedy next token is always succ(id), by a margin of 8 - 2 x 1.5 = 5, in any
 * summation order. "Hello" continues greedily with "pqrstuvwxyz{|}~" and then `</s>`. Sampling at
 * temperature 1 picks succ(id) with probability about e^8 / (e^8 + 95), 97%: seeded sampling is
 * deterministic, yet differs from greedy over long outputs. The state (zeros at the start of a stream)
 * moves the logits slightly, so onnxruntime cannot fold it away. Ids are taken modulo 96 inside the model
 * (as `sentiment` does), so arbitrary INT64 load never indexes outside the tables.
 *
 * Why it is heavy: W is H x H, with H = 3072 36 MiB of FP32, more than a CPU cache holds, so a batch-1 step
 * is bound by reading W from memory, as a decode step of a language model is (about 1 ms on one core); a
 * batch of 16 reads W once for 16 streams and costs about 3 batch-1 steps. That gap is what in-flight
 * batching turns into throughput (`measure-generator.ts` prints the figures on this machine, as
 * `measure-heavy.ts` does for the dynamic batcher's `heavy`; with H = 2048, 16 MiB, W stayed in this
 * machine's cache, at 0.35 ms a step). The file stores W as INT8 codes times a power of two (exact in
 * FP32), one byte an entry, and onnxruntime folds the Cast and Mul into one FP32 [H, H] initializer when it
 * creates the session: the file is 11 MiB instead of 38, and each step still reads 36 MiB.
 */
import { createGraphBuilder, intAttr } from "../graph-builder.js";
import { createMulberry32, uniformFloat32 } from "../prng.js";

/** Sizes of `char_generator`: 96 token ids, a recurrent state of `hidden` floats. */
export const GENERATOR_SIZES = { vocabulary: 96, hidden: 3072 } as const;

/** The end-of-sequence token's id (`</s>`). */
export const GENERATOR_EOS_ID = 0;

/** The logit N gives the successor of the input token. */
export const GENERATOR_SUCCESSOR_LOGIT = 8;

/** Bound of H x max |U|: the state moves each logit by less than this. */
export const GENERATOR_STATE_LOGIT_BOUND = 1.5;

const SEED = 0x63686172;

/** The token that follows `id` greedily: the next character, `</s>` after `~` and after `</s>`. */
export function generatorSuccessor(id: number): number {
  const { vocabulary } = GENERATOR_SIZES;
  return id >= 1 && id < vocabulary - 1 ? id + 1 : GENERATOR_EOS_ID;
}

/** `tokenizer.json`'s vocabulary: the text of each id, `</s>` for 0 and one printable character after. */
export function generatorVocabulary(): string[] {
  const chars = Array.from({ length: GENERATOR_SIZES.vocabulary - 1 }, (_, i) => String.fromCharCode(32 + i));
  return ["</s>", ...chars];
}

/** The content of `char_generator/tokenizer.json`, plain data for the server's generation backend. */
export interface GeneratorTokenizer {
  readonly type: "characters";
  readonly vocabulary: readonly string[];
  readonly eos_token_id: number;
}

/** The tokenizer `char_generator` is built for. */
export function generatorTokenizer(): GeneratorTokenizer {
  return { type: "characters", vocabulary: generatorVocabulary(), eos_token_id: GENERATOR_EOS_ID };
}

/** The text of `char_generator/tokenizer.json` (committed; a test checks it against this). */
export function generatorTokenizerJson(): string {
  return `${JSON.stringify(generatorTokenizer(), null, 2)}\n`;
}

/** `char_generator`'s parameters, row-major. */
export interface GeneratorWeights {
  /** The state's size H. */
  readonly hidden: number;
  /** E [vocabulary, H]: each token's push on the state. */
  readonly embedding: Float32Array;
  /** W [H, H]: state @ W; each entry is `recurrentCodes[i] * recurrentScale`, exactly. */
  readonly recurrent: Float32Array;
  /** W as stored in the file: INT8 codes in [-127, 127]. */
  readonly recurrentCodes: Int8Array;
  /** W's scale, a power of two (so code x scale is exact in float32). */
  readonly recurrentScale: number;
  /** U [H, vocabulary]: state_out @ U, |.| < 1.5. */
  readonly output: Float32Array;
  /** N [vocabulary, vocabulary]: 8 at (t, succ(t)), 0 elsewhere. */
  readonly successor: Float32Array;
}

/**
 * The weights `char_generator` is built with; a fresh copy on every call, identical every time.
 * @param hidden - the state's size H; another size gives another (smaller or larger) model of the same kind.
 */
export function generatorWeights(hidden: number = GENERATOR_SIZES.hidden): GeneratorWeights {
  const { vocabulary } = GENERATOR_SIZES;
  const random = createMulberry32(SEED);
  // Entries up to about sqrt(3 / H) (variance about 1/H) keep state @ W about as large as the state: tanh
  // neither dies out nor saturates. Codes x a power of two: the file stores one byte per entry.
  const recurrentScale = 2 ** Math.round(Math.log2(Math.sqrt(3 / hidden) / 127));
  const recurrentCodes = new Int8Array(hidden * hidden);
  const recurrent = new Float32Array(hidden * hidden);
  for (let i = 0; i < recurrentCodes.length; i++) {
    const code = Math.floor(random() * 255) - 127;
    recurrentCodes[i] = code;
    recurrent[i] = code * recurrentScale;
  }
  // E pushes each token's mark on the state.
  const embedding = uniformFloat32(random, vocabulary * hidden, 0.5);
  // Scaled so that H x max |U| is below the bound (float32 rounding of the scale included).
  const output = uniformFloat32(random, hidden * vocabulary, (GENERATOR_STATE_LOGIT_BOUND / hidden) * 0.999);
  const successor = new Float32Array(vocabulary * vocabulary);
  for (let t = 0; t < vocabulary; t++)
    successor[t * vocabulary + generatorSuccessor(t)] = GENERATOR_SUCCESSOR_LOGIT;
  return { hidden, embedding, recurrent, recurrentCodes, recurrentScale, output, successor };
}

/**
 * Builds `char_generator/1/model.onnx`.
 * @param hidden - the state's size H (`measure-generator.ts` compares sizes with it).
 */
export function buildCharGeneratorModel(hidden: number = GENERATOR_SIZES.hidden): Uint8Array {
  const { vocabulary } = GENERATOR_SIZES;
  const w = generatorWeights(hidden);
  const g = createGraphBuilder({
    name: "char_generator",
    docString:
      `character-level step model: state_out = tanh(state @ W + E[id]) (H = ${hidden}), ` +
      "logits = N[id] + state_out @ U; the greedy next token is always the next character",
  });
  g.input("input_ids", "INT64", ["batch", 1]);
  g.input("state", "FP32", ["batch", hidden]);
  g.initializer("vocabulary", "INT64", [], new BigInt64Array([BigInt(vocabulary)]));
  g.initializer("flat", "INT64", [1], new BigInt64Array([-1n]));
  g.initializer("E", "FP32", [vocabulary, hidden], w.embedding);
  g.initializer("W_codes", "INT8", [hidden, hidden], w.recurrentCodes);
  g.initializer("W_scale", "FP32", [], new Float32Array([w.recurrentScale]));
  g.initializer("U", "FP32", [hidden, vocabulary], w.output);
  g.initializer("N", "FP32", [vocabulary, vocabulary], w.successor);
  // Integer Mod (fmod=0) takes the divisor's sign, so any INT64 id lands in [0, vocabulary).
  const wrapped = g.node("Mod", ["input_ids", "vocabulary"], ["ids_wrapped"], { fmod: intAttr(0) });
  const ids = g.node("Reshape", [wrapped, "flat"], ["ids"]);
  const pushed = g.node("Gather", ["E", ids], ["embedded"], { axis: intAttr(0) });
  // Constant subgraph: onnxruntime folds it into one FP32 [H, H] initializer when the session is created.
  const codes = g.node("Cast", ["W_codes"], ["W_codes_fp32"], { to: intAttr(1) });
  const recurrent = g.node("Mul", [codes, "W_scale"], ["W"]);
  const carried = g.node("MatMul", ["state", recurrent], ["recurrent"]);
  const pre = g.node("Add", [carried, pushed], ["state_pre"]);
  const next = g.node("Tanh", [pre], ["state_out"]);
  const prior = g.node("Gather", ["N", ids], ["successor_logits"], { axis: intAttr(0) });
  const projected = g.node("MatMul", [next, "U"], ["state_logits"]);
  g.node("Add", [prior, projected], ["logits"]);
  g.output("logits", "FP32", ["batch", vocabulary]);
  g.output("state_out", "FP32", ["batch", hidden]);
  return g.build();
}
