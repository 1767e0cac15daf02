// Every generated model loads in onnxruntime-node, and its inputs and outputs (names, element types, shapes)
// are exactly what its committed config.pbtxt declares, with the batch dimension in front when
// max_batch_size > 0; a step model run by a backend of tbench-server's own has a config naming it. The ensemble's steps name real models and tensors of matching types and shapes.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  datatypeFromConfigType,
  type ModelConfig,
  type ModelInput,
  type ModelOutput,
  parseModelConfig,
} from "@tbench/proto";
import * as ort from "onnxruntime-node";
import { bundledModels, committedFiles } from "./model-catalog.js";
import { IDENTITY_DATATYPES, identityModelName } from "./models/identity.js";
import { BUNDLED_MODEL_REPOSITORY } from "./write-model-repository.js";

interface TensorSpec {
  readonly name: string;
  readonly dataType: string;
  readonly dims: readonly number[];
}

function readConfig(model: string): ModelConfig {
  const file = join(BUNDLED_MODEL_REPOSITORY, model, "config.pbtxt");
  return parseModelConfig(readFileSync(file, "utf8"), { fileName: file });
}

function tensors(list: readonly (ModelInput | ModelOutput)[] | undefined): TensorSpec[] {
  return (list ?? []).map((t) => ({
    name: t.name ?? "",
    dataType: t.data_type ?? "TYPE_INVALID",
    dims: (t.dims ?? []).map(Number),
  }));
}

/**
 * The model inputs and outputs a stateful model has beyond its config's `input` and `output`: the
 * sequence batcher's control inputs ([1] per row, typed by their false/true form or data_type) and its
 * implicit states, in config order.
 */
function sequenceTensors(config: ModelConfig): { inputs: TensorSpec[]; outputs: TensorSpec[] } {
  const sequence = config.sequence_batching;
  const controls = (sequence?.control_input ?? []).map((input) => {
    const control = input.control?.[0];
    const dataType = control?.int32_false_true?.length
      ? "TYPE_INT32"
      : control?.fp32_false_true?.length
        ? "TYPE_FP32"
        : control?.bool_false_true?.length
          ? "TYPE_BOOL"
          : (control?.data_type ?? "TYPE_INVALID");
    return { name: input.name ?? "", dataType, dims: [1] };
  });
  const states = sequence?.state ?? [];
  const state = (name: string | undefined, t: (typeof states)[number]) => ({
    name: name ?? "",
    dataType: t.data_type ?? "TYPE_INVALID",
    dims: (t.dims ?? []).map(Number),
  });
  return {
    inputs: [...controls, ...states.map((t) => state(t.input_name, t))],
    outputs: states.map((t) => state(t.output_name, t)),
  };
}

/** The shape onnxruntime should report for a config tensor: -1 dims and the batch dim are symbolic. */
function expectedShape(spec: TensorSpec, maxBatchSize: number): (number | "symbolic")[] {
  const dims = spec.dims.map((d) => (d === -1 ? "symbolic" : d));
  return maxBatchSize > 0 ? ["symbolic", ...dims] : dims;
}

function assertMatches(
  side: string,
  metadata: readonly ort.InferenceSession.ValueMetadata[],
  specs: readonly TensorSpec[],
  maxBatchSize: number,
): void {
  assert.deepEqual(
    metadata.map((m) => m.name),
    specs.map((s) => s.name),
    `${side} names`,
  );
  specs.forEach((spec, i) => {
    const meta = metadata[i]!;
    assert.ok(meta.isTensor, `${side} ${spec.name} is a tensor`);
    assert.equal(meta.type, datatypeFromConfigType(spec.dataType)?.ortType, `${side} ${spec.name} type`);
    const shape = meta.shape.map((d) => (typeof d === "string" ? "symbolic" : d));
    assert.deepEqual(shape, expectedShape(spec, maxBatchSize), `${side} ${spec.name} shape`);
  });
}

describe("bundled model signatures", () => {
  for (const model of bundledModels()) {
    const build = model.build;
    if (build === undefined) continue;
    if (model.backend !== undefined) {
      // The step model of a backend of tbench-server's own: the config declares the backend's tensors (text),
      // not the file's; the file's signature has a test of its own (generator-model.test.ts).
      const configFile = committedFiles(model)[0]!;
      it(`${model.name}: its ${configFile} names the ${model.backend} backend`, () => {
        const file = join(BUNDLED_MODEL_REPOSITORY, model.name, configFile);
        const config = parseModelConfig(readFileSync(file, "utf8"), { fileName: file });
        assert.equal(config.name, model.name);
        assert.equal(config.backend, model.backend);
        assert.ok((config.max_batch_size ?? 0) > 0, "every bundled model batches");
        assert.equal(config.model_transaction_policy?.decoupled, true);
      });
      continue;
    }
    it(`${model.name}: loads, and matches its config.pbtxt`, async () => {
      const config = readConfig(model.name);
      assert.equal(config.name, model.name);
      assert.equal(config.platform, "onnxruntime_onnx");
      const maxBatchSize = config.max_batch_size ?? 0;
      assert.ok(maxBatchSize > 0, "every bundled model batches");
      const session = await ort.InferenceSession.create(build());
      try {
        const sequence = sequenceTensors(config);
        assertMatches(
          "input",
          session.inputMetadata,
          [...tensors(config.input), ...sequence.inputs],
          maxBatchSize,
        );
        assertMatches(
          "output",
          session.outputMetadata,
          [...tensors(config.output), ...sequence.outputs],
          maxBatchSize,
        );
      } finally {
        await session.release();
      }
    });
  }

  it("has an identity model for every datatype onnxruntime-node has a tensor type for", () => {
    const names = new Set(bundledModels().map((m) => m.name));
    for (const datatype of IDENTITY_DATATYPES) assert.ok(names.has(identityModelName(datatype)), datatype);
    assert.equal(readConfig("identity_bytes").input?.[0]?.data_type, "TYPE_STRING");
  });

  it("leaves out BF16 because onnxruntime-node cannot make a bfloat16 tensor", () => {
    // If this starts failing, onnxruntime-node gained bfloat16: add BF16 to IDENTITY_DATATYPES.
    assert.throws(() => new ort.Tensor("bfloat16" as ort.Tensor.Type, new Uint16Array(1), [1]), /bfloat16/);
  });

  it("identity_fp32 admits a [1, 262144] (1 MiB) tensor", () => {
    const config = readConfig("identity_fp32");
    assert.ok((config.max_batch_size ?? 0) >= 1);
    assert.deepEqual(tensors(config.input)[0]?.dims, [-1]);
  });

  it("heavy and heavy_nobatch differ only in dynamic_batching; one CPU instance, one intra-op thread", () => {
    const heavy = readConfig("heavy");
    const nobatch = readConfig("heavy_nobatch");
    const { dynamic_batching: batching, ...rest } = heavy;
    assert.ok(!("dynamic_batching" in nobatch), "heavy_nobatch has no dynamic_batching");
    assert.deepEqual(nobatch, { ...rest, name: "heavy_nobatch" });
    // No preferred sizes: the batcher takes whatever is queued, up to max_batch_size, within the delay.
    assert.deepEqual(batching, { max_queue_delay_microseconds: "1000" });
    assert.deepEqual(heavy.instance_group, [{ count: 1, kind: "KIND_CPU" }]);
    // The key Triton's onnxruntime backend reads (TryParseModelStringParameter "intra_op_thread_count").
    assert.deepEqual(heavy.parameters, { intra_op_thread_count: { string_value: "1" } });
  });

  it("heavy_gpu is heavy on one KIND_GPU instance, batching on", () => {
    const { instance_group: cpuGroups, ...heavy } = readConfig("heavy");
    const { instance_group: gpuGroups, ...gpu } = readConfig("heavy_gpu");
    assert.deepEqual(gpu, { ...heavy, name: "heavy_gpu" });
    assert.deepEqual(cpuGroups, [{ count: 1, kind: "KIND_CPU" }]);
    assert.deepEqual(gpuGroups, [{ count: 1, kind: "KIND_GPU" }]);
  });

  it("sentiment and mlp schedule as their configs promise", () => {
    const sentiment = readConfig("sentiment");
    assert.equal(sentiment.max_batch_size, 32);
    assert.deepEqual(sentiment.dynamic_batching, {
      preferred_batch_size: [8, 16],
      max_queue_delay_microseconds: "2000",
    });
    assert.deepEqual(readConfig("mlp").dynamic_batching, {});
  });

  it("ensemble_pipeline chains resnet_like and label_head with consistent names, types and shapes", () => {
    const ensemble = readConfig("ensemble_pipeline");
    assert.equal(ensemble.platform, "ensemble");
    const resnet = readConfig("resnet_like");
    const head = readConfig("label_head");
    // Triton rejects an ensemble whose max_batch_size exceeds a composing model's.
    const composing = Math.min(resnet.max_batch_size ?? 0, head.max_batch_size ?? 0);
    assert.ok((ensemble.max_batch_size ?? 0) > 0 && (ensemble.max_batch_size ?? 0) <= composing);
    assert.deepEqual(tensors(ensemble.input), [{ ...tensors(resnet.input)[0]!, name: "IMAGE" }]);
    assert.deepEqual(tensors(ensemble.output), [{ ...tensors(head.output)[0]!, name: "LABEL" }]);
    assert.deepEqual({ ...tensors(resnet.output)[0]!, name: "" }, { ...tensors(head.input)[0]!, name: "" });
    assert.deepEqual(ensemble.ensemble_scheduling?.step, [
      {
        model_name: "resnet_like",
        model_version: "-1",
        input_map: { input: "IMAGE" },
        output_map: { output: "EMBED" },
      },
      {
        model_name: "label_head",
        model_version: "-1",
        input_map: { emb: "EMBED" },
        output_map: { label: "LABEL" },
      },
    ]);
  });
});
