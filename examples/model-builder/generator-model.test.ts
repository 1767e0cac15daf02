// `char_generator`, the step model of the bundled character-level generator: its signature is the contract
// the server's generation backend codes against, onnxruntime's step agrees with generator-reference.ts, the
// greedy next token is always the next character whatever the state, and its committed tokenizer.json is
// the vocabulary the model is built for.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as ort from "onnxruntime-node";
import {
  generatorDecode,
  generatorEncode,
  generatorGreedyText,
  generatorStep,
} from "./generator-reference.js";
import {
  buildCharGeneratorModel,
  GENERATOR_EOS_ID,
  GENERATOR_SIZES,
  generatorSuccessor,
  generatorTokenizerJson,
  generatorVocabulary,
} from "./models/generator.js";
import { createMulberry32, uniformFloat32 } from "./prng.js";
import { BUNDLED_MODEL_REPOSITORY } from "./write-model-repository.js";

const { vocabulary: V, hidden: H } = GENERATOR_SIZES;

let session: ort.InferenceSession;
before(async () => {
  session = await ort.InferenceSession.create(buildCharGeneratorModel());
});
after(async () => {
  await session.release();
});

async function step(
  ids: readonly number[],
  state: Float32Array,
): Promise<{ logits: Float32Array; state: Float32Array }> {
  const outputs = await session.run({
    input_ids: new ort.Tensor("int64", BigInt64Array.from(ids, BigInt), [ids.length, 1]),
    state: new ort.Tensor("float32", state, [ids.length, H]),
  });
  const logits = outputs["logits"];
  const next = outputs["state_out"];
  assert.ok(logits && next, "logits and state_out");
  assert.deepEqual(logits.dims, [ids.length, V]);
  assert.deepEqual(next.dims, [ids.length, H]);
  return { logits: logits.data as Float32Array, state: next.data as Float32Array };
}

/** `count` states of a stream that has run a while: uniform in (-0.9, 0.9). */
function randomStates(seed: number, count: number): Float32Array {
  return uniformFloat32(createMulberry32(seed), count * H, 0.9);
}

function largestDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

/** Feeds `prompt` from a zero state, then decodes greedily until `</s>` or `maxTokens`; the ids made. */
async function greedyIds(prompt: string, maxTokens: number): Promise<number[]> {
  let state: Float32Array = new Float32Array(H);
  let logits: Float32Array = new Float32Array(V);
  for (const id of generatorEncode(prompt)) ({ logits, state } = await step([id], state));
  const made: number[] = [];
  while (made.length < maxTokens) {
    let best = 0;
    for (let v = 1; v < V; v++) if (logits[v]! > logits[best]!) best = v;
    made.push(best);
    if (best === GENERATOR_EOS_ID) break;
    ({ logits, state } = await step([best], state));
  }
  return made;
}

describe("char_generator", () => {
  it("has the step signature: input_ids INT64 [batch, 1], state FP32 [batch, H] -> logits [batch, 96], state_out", () => {
    const shape = (m: ort.InferenceSession.ValueMetadata) =>
      m.isTensor ? { name: m.name, type: m.type, shape: m.shape } : { name: m.name };
    assert.deepEqual(session.inputMetadata.map(shape), [
      { name: "input_ids", type: "int64", shape: ["batch", 1] },
      { name: "state", type: "float32", shape: ["batch", H] },
    ]);
    assert.deepEqual(session.outputMetadata.map(shape), [
      { name: "logits", type: "float32", shape: ["batch", V] },
      { name: "state_out", type: "float32", shape: ["batch", H] },
    ]);
  });

  it("steps as generator-reference.ts does (within 1e-4), from a zero state and from others, batch 1 and 5", async () => {
    const cases: { ids: number[]; state: Float32Array }[] = [
      { ids: [generatorEncode("H")[0]!], state: new Float32Array(H) },
      { ids: [0, 1, 42, 94, 95], state: randomStates(1, 5) },
    ];
    for (const { ids, state } of cases) {
      const got = await step(ids, state);
      const expected = generatorStep(ids, state);
      assert.ok(largestDifference(got.logits, expected.logits) <= 1e-4, `logits of ${ids}`);
      assert.ok(largestDifference(got.state, expected.state) <= 1e-4, `state_out of ${ids}`);
    }
  });

  it("makes the next character the greedy token for every id, by a margin of 5, in any state", async () => {
    const ids = Array.from({ length: V }, (_, t) => t);
    // Two running states and an extreme one (tanh makes |state_out| < 1 whatever comes in).
    for (const one of [randomStates(2, 1), randomStates(3, 1), new Float32Array(H).fill(5)]) {
      const state = new Float32Array(V * H);
      for (let t = 0; t < V; t++) state.set(one, t * H); // one state, every id
      const { logits } = await step(ids, state);
      for (const t of ids) {
        const row = logits.subarray(t * V, (t + 1) * V);
        const succ = generatorSuccessor(t);
        const others = Math.max(...row.filter((_, v) => v !== succ));
        assert.ok(row[succ]! - others >= 5, `id ${t}: successor ${succ} leads by ${row[succ]! - others}`);
      }
    }
    assert.equal(generatorSuccessor(0), GENERATOR_EOS_ID);
    assert.equal(generatorSuccessor(95), GENERATOR_EOS_ID);
    assert.equal(generatorSuccessor(1), 2);
  });

  it("lets the state move the logits (slightly): onnxruntime cannot fold it away", async () => {
    const id = generatorEncode("q");
    const zero = await step(id, new Float32Array(H));
    const other = await step(id, randomStates(5, 1));
    const moved = largestDifference(zero.logits, other.logits);
    assert.ok(moved > 1e-3 && moved < 3, `the state moved the logits by ${moved}`);
    assert.ok(largestDifference(zero.state, other.state) > 0.1, "the state carries over");
  });

  it("keeps a running state inside tanh's useful range (neither dying out nor saturated)", async () => {
    let state: Float32Array = new Float32Array(H);
    for (const id of generatorEncode("The quick brown fox jumps over the lazy dog"))
      ({ state } = await step([id], state));
    const magnitudes = Array.from(state, Math.abs);
    const mean = magnitudes.reduce((a, b) => a + b, 0) / H;
    const saturated = magnitudes.filter((m) => m > 0.99).length / H;
    assert.ok(mean > 0.2 && mean < 0.9, `mean |state| ${mean}`);
    assert.ok(saturated < 0.2, `${(saturated * 100).toFixed(1)}% of the state is saturated`);
  });

  it("gives the successor about 97% of the probability at temperature 1 (e^8 / (e^8 + 95))", async () => {
    const { logits } = await step(generatorEncode("abc"), randomStates(6, 3));
    for (let n = 0; n < 3; n++) {
      const row = Array.from(logits.subarray(n * V, (n + 1) * V));
      const total = row.reduce((sum, x) => sum + Math.exp(x), 0);
      const p = Math.exp(row[generatorSuccessor(generatorEncode("abc")[n]!)]!) / total;
      assert.ok(p > 0.95 && p < 0.985, `p(successor) = ${p}`);
    }
  });

  it("decodes greedily to the known text: Hello -> pqrstuvwxyz{|}~ then </s>", async () => {
    const hello = await greedyIds("Hello", 100);
    assert.equal(hello.at(-1), GENERATOR_EOS_ID);
    assert.equal(generatorDecode(hello), "pqrstuvwxyz{|}~");
    assert.equal(generatorGreedyText("Hello"), "pqrstuvwxyz{|}~");
    assert.equal(generatorDecode(await greedyIds("a", 5)), "bcdef");
    assert.equal(generatorGreedyText("a", 5), "bcdef");
    assert.equal(generatorGreedyText("a").length, 126 - 98 + 1); // b .. ~
    assert.equal(generatorGreedyText("~"), "");
    assert.equal(generatorGreedyText(""), "");
  });

  it("takes ids modulo 96, so any INT64 is valid input", async () => {
    const state = randomStates(7, 4);
    const wrapped = await step([96 + 5, -1, 96 * 1000 + 40, 5], state);
    const plain = await step([5, 95, 40, 5], state);
    assert.deepEqual(wrapped.logits, plain.logits);
    assert.deepEqual(wrapped.state, plain.state);
  });

  it("ships tokenizer.json with the vocabulary it is built for: </s>, then ASCII 32..126 (id = code - 31)", () => {
    const file = join(BUNDLED_MODEL_REPOSITORY, "char_generator", "tokenizer.json");
    assert.equal(
      readFileSync(file, "utf8"),
      generatorTokenizerJson(),
      "tokenizer.json differs from generatorTokenizerJson() in models/generator.ts",
    );
    const vocabulary = generatorVocabulary();
    assert.equal(vocabulary.length, V);
    assert.equal(vocabulary[0], "</s>");
    assert.equal(vocabulary[1], " ");
    assert.equal(vocabulary[95], "~");
    assert.equal(vocabulary[generatorEncode("A")[0]!], "A");
    assert.deepEqual(generatorEncode(" ~"), [1, 95]);
    assert.equal(generatorDecode(generatorEncode("Hello, world!")), "Hello, world!");
    assert.throws(() => generatorEncode("tab\there"), /no token for "\\t" \(character 3\)/);
  });
});
