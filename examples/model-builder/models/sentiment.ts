/**
 * `sentiment`: a bag-of-embeddings text classifier, INT64 `input_ids` [batch, 128] -> FP32 `logits`
 * [batch, 2]. Each id is reduced modulo the vocabulary size (a hashing trick, so the arbitrary int64 values a
 * load generator sends never fall outside the table), looked up in a [30522, 16] embedding (Gather),
 * averaged over the 128 positions (ReduceMean) and projected to 2 logits (Gemm).
 */
import { createGraphBuilder, intAttr, intsAttr } from "../graph-builder.js";
import { createMulberry32, uniformFloat32 } from "../prng.js";

/** Shape constants of `sentiment`. */
export const SENTIMENT_SIZES = { sequence: 128, vocabulary: 30522, embedding: 16, classes: 2 } as const;

const SEED = 0x73656e74;

/** `sentiment`'s parameters; `projection` is row-major [classes, embedding]. */
export interface SentimentWeights {
  /** [vocabulary, embedding] */
  readonly embedding: Float32Array;
  /** [classes, embedding] */
  readonly projection: Float32Array;
  /** [classes] */
  readonly bias: Float32Array;
}

/** The weights `sentiment` is built with; identical on every call. */
export function sentimentWeights(): SentimentWeights {
  const random = createMulberry32(SEED);
  const { vocabulary, embedding, classes } = SENTIMENT_SIZES;
  return {
    embedding: uniformFloat32(random, vocabulary * embedding, 1),
    projection: uniformFloat32(random, classes * embedding, Math.sqrt(6 / embedding)),
    bias: uniformFloat32(random, classes, 0.1),
  };
}

/** Builds `sentiment/1/model.onnx`. */
export function buildSentimentModel(): Uint8Array {
  const { sequence, vocabulary, embedding, classes } = SENTIMENT_SIZES;
  const weights = sentimentWeights();
  const g = createGraphBuilder({
    name: "sentiment",
    docString: "mean of token embeddings (ids modulo vocabulary) projected to 2 logits",
  });
  g.input("input_ids", "INT64", ["batch", sequence]);
  g.initializer("vocabulary", "INT64", [], new BigInt64Array([BigInt(vocabulary)]));
  g.initializer("embedding", "FP32", [vocabulary, embedding], weights.embedding);
  g.initializer("projection", "FP32", [classes, embedding], weights.projection);
  g.initializer("bias", "FP32", [classes], weights.bias);
  // Integer Mod (fmod=0) takes the divisor's sign, so negative ids land in [0, vocabulary) too.
  const ids = g.node("Mod", ["input_ids", "vocabulary"], ["ids"], { fmod: intAttr(0) });
  const vectors = g.node("Gather", ["embedding", ids], ["vectors"], { axis: intAttr(0) });
  const mean = g.node("ReduceMean", [vectors], ["mean"], { axes: intsAttr([1]), keepdims: intAttr(0) });
  g.node("Gemm", [mean, "projection", "bias"], ["logits"], { transB: intAttr(1) });
  g.output("logits", "FP32", ["batch", classes]);
  return g.build();
}
