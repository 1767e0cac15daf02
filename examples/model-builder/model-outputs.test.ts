// The computing models' outputs against independent computations in plain TypeScript.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import * as ort from "onnxruntime-node";
import { MLP_SIZES, mlpForward } from "./mlp-reference.js";
import { buildHeavyModel, HEAVY_SIZES } from "./models/heavy.js";
import { buildLabelHeadModel } from "./models/label-head.js";
import { buildMlpModel } from "./models/mlp.js";
import { buildResnetLikeModel, RESNET_LIKE_CLASSES } from "./models/resnet-like.js";
import { buildSentimentModel, SENTIMENT_SIZES, sentimentWeights } from "./models/sentiment.js";
import { buildSimpleModel, SIMPLE_WIDTH } from "./models/simple.js";
import { createMulberry32, uniformFloat32 } from "./prng.js";

const sessions: ort.InferenceSession[] = [];
after(async () => {
  for (const session of sessions) await session.release();
});

async function open(bytes: Uint8Array): Promise<ort.InferenceSession> {
  const session = await ort.InferenceSession.create(bytes);
  sessions.push(session);
  return session;
}

async function runOne(session: ort.InferenceSession, feeds: Record<string, ort.Tensor>): Promise<ort.Tensor> {
  const outputs = await session.run(feeds);
  const name = session.outputNames[0]!;
  const out = outputs[name];
  assert.ok(out, `output ${name}`);
  return out;
}

function assertClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance: number): void {
  assert.equal(actual.length, expected.length);
  let worst = 0;
  for (let i = 0; i < actual.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
  assert.ok(worst <= tolerance, `largest difference ${worst} exceeds ${tolerance}`);
}

function argmax(values: ArrayLike<number>, start: number, count: number): number {
  let best = 0;
  for (let i = 1; i < count; i++) if (values[start + i]! > values[start + best]!) best = i;
  return best;
}

describe("model outputs", () => {
  it("simple: OUTPUT0 is the sum, OUTPUT1 the difference (int32 wrap-around)", async () => {
    const session = await open(buildSimpleModel());
    const random = createMulberry32(7);
    const n = 3 * SIMPLE_WIDTH;
    const a = Int32Array.from({ length: n }, () => Math.floor(random() * 2 ** 32) | 0);
    const b = Int32Array.from({ length: n }, () => Math.floor(random() * 2 ** 32) | 0);
    a[0] = 2 ** 31 - 1;
    b[0] = 1; // overflows to -2^31
    const dims = [3, SIMPLE_WIDTH];
    const { OUTPUT0: sum, OUTPUT1: diff } = await session.run({
      INPUT0: new ort.Tensor("int32", a, dims),
      INPUT1: new ort.Tensor("int32", b, dims),
    });
    assert.ok(sum && diff, "OUTPUT0 and OUTPUT1");
    assert.deepEqual(sum.dims, dims);
    assert.deepEqual(diff.dims, dims);
    assert.deepEqual(
      [...(sum.data as Int32Array)],
      [...a].map((x, i) => (x + b[i]!) | 0),
    );
    assert.deepEqual(
      [...(diff.data as Int32Array)],
      [...a].map((x, i) => (x - b[i]!) | 0),
    );
    assert.equal((sum.data as Int32Array)[0], -(2 ** 31));
  });

  it("mlp: matches mlp-reference.ts within 1e-5, at batch 1 and batch 7", async () => {
    const session = await open(buildMlpModel());
    for (const batch of [1, 7]) {
      const input = uniformFloat32(createMulberry32(batch), batch * MLP_SIZES.inputs, 2);
      const out = await runOne(session, {
        input: new ort.Tensor("float32", input, [batch, MLP_SIZES.inputs]),
      });
      assert.deepEqual(out.dims, [batch, MLP_SIZES.classes]);
      const expected = mlpForward(input);
      assertClose(out.data as Float32Array, expected, 1e-5);
      const firstRow = [...expected.subarray(0, MLP_SIZES.classes)];
      assert.ok(Math.abs(firstRow.reduce((x, y) => x + y, 0) - 1) < 1e-5, "probabilities sum to 1");
      // The classes are not all alike: the model actually discriminates.
      assert.ok(Math.max(...firstRow) - Math.min(...firstRow) > 0.01);
    }
    assert.throws(() => mlpForward(new Float32Array(65)), /multiple of 64 values, got 65/);
  });

  it("label_head: the index of the highest score, first index on a tie, as INT64 [batch, 1]", async () => {
    const session = await open(buildLabelHeadModel());
    const scores = uniformFloat32(createMulberry32(3), 3 * RESNET_LIKE_CLASSES, 1);
    scores[417] = 5; // row 0
    scores[RESNET_LIKE_CLASSES + 999] = 5; // row 1, last index
    scores[2 * RESNET_LIKE_CLASSES + 12] = 7; // row 2: a tie between 12 and 600
    scores[2 * RESNET_LIKE_CLASSES + 600] = 7;
    const out = await runOne(session, { emb: new ort.Tensor("float32", scores, [3, RESNET_LIKE_CLASSES]) });
    assert.equal(out.type, "int64");
    assert.deepEqual(out.dims, [3, 1]);
    assert.deepEqual([...(out.data as BigInt64Array)], [417n, 999n, 12n]);
  });

  it("sentiment: matches a TypeScript mean-of-embeddings, ids taken modulo the vocabulary", async () => {
    const session = await open(buildSentimentModel());
    const { sequence, vocabulary, embedding, classes } = SENTIMENT_SIZES;
    const random = createMulberry32(11);
    const ids = BigInt64Array.from({ length: 2 * sequence }, () => BigInt(Math.floor(random() * vocabulary)));
    // Out-of-table ids: negative, exactly the vocabulary size, and beyond 2^53.
    ids.set([-1n, BigInt(vocabulary), 2n ** 62n + 5n, -(2n ** 63n)], sequence);
    const out = await runOne(session, { input_ids: new ort.Tensor("int64", ids, [2, sequence]) });
    assert.deepEqual(out.dims, [2, classes]);
    const w = sentimentWeights();
    const expected = new Float64Array(2 * classes);
    for (let row = 0; row < 2; row++) {
      const mean = new Float64Array(embedding);
      for (let t = 0; t < sequence; t++) {
        const id = Number(
          ((ids[row * sequence + t]! % BigInt(vocabulary)) + BigInt(vocabulary)) % BigInt(vocabulary),
        );
        for (let e = 0; e < embedding; e++) mean[e]! += w.embedding[id * embedding + e]! / sequence;
      }
      for (let c = 0; c < classes; c++) {
        let sum = w.bias[c]!;
        for (let e = 0; e < embedding; e++) sum += mean[e]! * w.projection[c * embedding + e]!;
        expected[row * classes + c] = sum;
      }
    }
    assertClose(out.data as Float32Array, expected, 1e-5);
  });

  it("resnet_like: [batch, 1000] finite scores, deterministic, distinct per image; label_head picks their argmax", async () => {
    const bytes = buildResnetLikeModel();
    assert.ok(bytes.length < 4 * 1024 * 1024, `resnet_like is ${bytes.length} bytes`);
    const session = await open(bytes);
    const again = await open(buildResnetLikeModel());
    const image = uniformFloat32(createMulberry32(5), 2 * 3 * 224 * 224, 1);
    const feeds = { input: new ort.Tensor("float32", image, [2, 3, 224, 224]) };
    const out = await runOne(session, feeds);
    assert.deepEqual(out.dims, [2, RESNET_LIKE_CLASSES]);
    const scores = out.data as Float32Array;
    assert.ok(scores.every(Number.isFinite));
    assert.deepEqual((await runOne(again, feeds)).data, scores);
    assert.notDeepEqual(scores.subarray(0, RESNET_LIKE_CLASSES), scores.subarray(RESNET_LIKE_CLASSES));
    const head = await open(buildLabelHeadModel());
    const label = await runOne(head, { emb: new ort.Tensor("float32", scores, [2, RESNET_LIKE_CLASSES]) });
    const expected = [0, 1].map((row) =>
      BigInt(argmax(scores, row * RESNET_LIKE_CLASSES, RESNET_LIKE_CLASSES)),
    );
    assert.deepEqual([...(label.data as BigInt64Array)], expected);
  });

  it("heavy: rows of a batch give what they give alone (batching changes nothing but speed)", async () => {
    const session = await open(buildHeavyModel());
    const { inputs, outputs } = HEAVY_SIZES;
    const batch = 4;
    const input = uniformFloat32(createMulberry32(9), batch * inputs, 1);
    const together = await runOne(session, { input: new ort.Tensor("float32", input, [batch, inputs]) });
    assert.deepEqual(together.dims, [batch, outputs]);
    const all = together.data as Float32Array;
    assert.ok(all.every(Number.isFinite));
    for (let row = 0; row < batch; row++) {
      const single = input.slice(row * inputs, (row + 1) * inputs);
      const alone = await runOne(session, { input: new ort.Tensor("float32", single, [1, inputs]) });
      const expected = all.subarray(row * outputs, (row + 1) * outputs);
      // Matrix-vector and matrix-matrix kernels sum in different orders; values are O(1).
      assertClose(alone.data as Float32Array, expected, 1e-3);
    }
    assert.notDeepEqual(all.subarray(0, outputs), all.subarray(outputs, 2 * outputs));
  });
});
