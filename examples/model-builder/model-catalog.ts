/**
 * The bundled model repository's contents: every model `npm run models` generates, in the order it prints
 * them, with the function that builds its `1/model.onnx`.
 */
import { buildCharGeneratorModel } from "./models/generator.js";
import { buildHeavyModel } from "./models/heavy.js";
import { buildIdentityModel, IDENTITY_DATATYPES, identityModelName } from "./models/identity.js";
import { buildLabelHeadModel } from "./models/label-head.js";
import { buildMlpModel } from "./models/mlp.js";
import { buildResnetLikeModel } from "./models/resnet-like.js";
import { buildSentimentModel } from "./models/sentiment.js";
import { buildSequenceAccumulatorModel, buildSequenceControlsModel } from "./models/sequence.js";
import { buildSimpleModel } from "./models/simple.js";

/** One model of the bundled repository. */
export interface BundledModel {
  /** Directory and model name, e.g. `identity_fp32`. */
  readonly name: string;
  /** What the model is for, one line. */
  readonly purpose: string;
  /**
   * Builds the bytes of `1/model.onnx`; `undefined` for an ensemble, which has no model file, only an empty
   * version directory. Models that share a builder share the file's bytes.
   */
  readonly build: (() => Uint8Array) | undefined;
  /**
   * The committed files of the model's directory, its config first, that a repository written elsewhere gets
   * copies of; `["config.pbtxt"]` when not given (see {@link committedFiles}).
   */
  readonly files?: readonly string[];
  /**
   * Set when tbench-server does not serve the file as it is but runs it in a backend of its own, which the
   * config names: `tbench_generator` runs a generation step model in a decoding loop, and the config declares
   * text tensors, not the file's. Unset: platform `onnxruntime_onnx`, the config declares the file's tensors.
   */
  readonly backend?: string;
}

/** The committed files of `model`'s directory, its config first. */
export function committedFiles(model: BundledModel): readonly string[] {
  return model.files ?? ["config.pbtxt"];
}

/** Every bundled model (a fresh list on each call). */
export function bundledModels(): BundledModel[] {
  return [
    { name: "simple", purpose: "Triton quickstart: INT32 sum and difference", build: buildSimpleModel },
    ...IDENTITY_DATATYPES.map((datatype) => ({
      name: identityModelName(datatype),
      purpose: `${datatype} round trip`,
      build: () => buildIdentityModel(datatype),
    })),
    { name: "mlp", purpose: "FP32 classifier, dynamic batching, TS reference", build: buildMlpModel },
    { name: "heavy", purpose: "batching benchmark, dynamic batching on", build: buildHeavyModel },
    { name: "heavy_nobatch", purpose: "batching benchmark, dynamic batching off", build: buildHeavyModel },
    { name: "heavy_gpu", purpose: "batching benchmark on a KIND_GPU instance", build: buildHeavyModel },
    { name: "resnet_like", purpose: "image classifier [3,224,224] -> [1000]", build: buildResnetLikeModel },
    { name: "label_head", purpose: "scores [1000] -> INT64 label", build: buildLabelHeadModel },
    { name: "ensemble_pipeline", purpose: "ensemble: resnet_like -> label_head", build: undefined },
    { name: "sentiment", purpose: "INT64 token ids [128] -> 2 logits", build: buildSentimentModel },
    {
      name: "sequence_accumulator",
      purpose: "stateful: running sum per sequence (implicit state, direct strategy)",
      build: buildSequenceAccumulatorModel,
    },
    {
      name: "sequence_controls",
      purpose: "stateful: echoes START/END/READY/CORRID (oldest strategy)",
      build: buildSequenceControlsModel,
    },
    {
      name: "char_generator",
      purpose: "streamed generation: character-level step model (decoupled, in-flight batching)",
      build: buildCharGeneratorModel,
      files: ["config.pbtxt", "tokenizer.json"],
      backend: "tbench_generator",
    },
  ];
}
