// Every generated model loads in onnxruntime-node, and its inputs and outputs (names, element types, shapes)
// are exactly what its committed config.pbtxt declares, with the batch dimension in front when
// max_batch_size > 0. The ensemble's steps name real models and tensors of matching types and shapes.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { datatypeFromConfigType } from "@tbench/proto";
import * as ort from "onnxruntime-node";
import { bundledModels } from "./model-catalog.js";
import { IDENTITY_DATATYPES, identityModelName } from "./models/identity.js";
import { BUNDLED_MODEL_REPOSITORY } from "./write-model-repository.js";

interface TensorSpec {
  readonly name: string;
  readonly dataType: string;
  readonly dims: readonly number[];
}

interface ConfigSignature {
  readonly name: string;
  readonly platform: string;
  readonly maxBatchSize: number;
  readonly inputs: readonly TensorSpec[];
  readonly outputs: readonly TensorSpec[];
}

// A deliberately small reader for the fields checked here; `parseModelConfig` from @tbench/proto replaces it
// once that lands. It finds `name/data_type/dims` triples and files each under the closest preceding
// top-level `input [` or `output [`.
function readSignature(text: string): ConfigSignature {
  const field = (re: RegExp): string => {
    const match = re.exec(text);
    if (match?.[1] === undefined) throw new Error(`config lacks ${re.source}`);
    return match[1];
  };
  const sections = [...text.matchAll(/^(input|output)\s*\[/gm)].map((m) => ({ kind: m[1]!, at: m.index }));
  const inputs: TensorSpec[] = [];
  const outputs: TensorSpec[] = [];
  const entry = /name:\s*"([^"]+)"\s*,?\s*data_type:\s*(TYPE_\w+)\s*,?\s*dims:\s*\[([^\]]*)\]/g;
  for (const m of text.matchAll(entry)) {
    const section = sections.filter((s) => s.at < m.index).at(-1);
    if (section === undefined) throw new Error(`tensor "${m[1]}" outside input/output`);
    const dims = m[3]!.split(",").map((d) => Number(d.trim()));
    (section.kind === "input" ? inputs : outputs).push({ name: m[1]!, dataType: m[2]!, dims });
  }
  return {
    name: field(/^name:\s*"([^"]+)"/m),
    platform: field(/^platform:\s*"([^"]+)"/m),
    maxBatchSize: Number(field(/^max_batch_size:\s*(\d+)/m)),
    inputs,
    outputs,
  };
}

function readConfig(model: string): ConfigSignature {
  return readSignature(readFileSync(join(BUNDLED_MODEL_REPOSITORY, model, "config.pbtxt"), "utf8"));
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
    it(`${model.name}: loads, and matches its config.pbtxt`, async () => {
      const config = readConfig(model.name);
      assert.equal(config.name, model.name);
      assert.equal(config.platform, "onnxruntime_onnx");
      const session = await ort.InferenceSession.create(build());
      try {
        assertMatches("input", session.inputMetadata, config.inputs, config.maxBatchSize);
        assertMatches("output", session.outputMetadata, config.outputs, config.maxBatchSize);
      } finally {
        await session.release();
      }
    });
  }

  it("has an identity model for every datatype onnxruntime-node has a tensor type for", () => {
    const names = new Set(bundledModels().map((m) => m.name));
    for (const datatype of IDENTITY_DATATYPES) assert.ok(names.has(identityModelName(datatype)), datatype);
    assert.equal(readConfig("identity_bytes").inputs[0]?.dataType, "TYPE_STRING");
  });

  it("leaves out BF16 because onnxruntime-node cannot make a bfloat16 tensor", () => {
    // If this starts failing, onnxruntime-node gained bfloat16: add BF16 to IDENTITY_DATATYPES.
    assert.throws(() => new ort.Tensor("bfloat16" as ort.Tensor.Type, new Uint16Array(1), [1]), /bfloat16/);
  });

  it("identity_fp32 admits a [1, 262144] (1 MiB) tensor", () => {
    const config = readConfig("identity_fp32");
    assert.ok(config.maxBatchSize >= 1);
    assert.deepEqual(config.inputs[0]?.dims, [-1]);
  });

  it("ensemble_pipeline chains resnet_like and label_head with consistent names, types and shapes", () => {
    const text = readFileSync(join(BUNDLED_MODEL_REPOSITORY, "ensemble_pipeline", "config.pbtxt"), "utf8");
    const ensemble = readSignature(text);
    assert.equal(ensemble.platform, "ensemble");
    const resnet = readConfig("resnet_like");
    const head = readConfig("label_head");
    // Triton rejects an ensemble whose max_batch_size exceeds a composing model's.
    assert.ok(ensemble.maxBatchSize <= Math.min(resnet.maxBatchSize, head.maxBatchSize));
    assert.deepEqual(ensemble.inputs, [{ ...resnet.inputs[0]!, name: "IMAGE" }]);
    assert.deepEqual(ensemble.outputs, [{ ...head.outputs[0]!, name: "LABEL" }]);
    assert.deepEqual(resnet.outputs[0]?.dims, head.inputs[0]?.dims);
    assert.equal(resnet.outputs[0]?.dataType, head.inputs[0]?.dataType);
    const steps = [...text.matchAll(/model_name:\s*"([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(steps, ["resnet_like", "label_head"]);
    const maps = [
      ...text.matchAll(/(input|output)_map\s*\{\s*key:\s*"([^"]+)",?\s*value:\s*"([^"]+)"\s*\}/g),
    ];
    assert.deepEqual(
      maps.map((m) => `${m[1]}:${m[2]}=${m[3]}`),
      ["input:input=IMAGE", "output:output=EMBED", "input:emb=EMBED", "output:label=LABEL"],
    );
  });
});
