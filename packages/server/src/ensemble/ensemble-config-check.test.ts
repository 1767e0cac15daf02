/**
 * The ensemble's own config checks, each with Triton's exact message (model_config_utils.cc
 * ValidateEnsembleSchedulingConfig / BuildEnsembleGraph), on configs written as config.pbtxt text.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { parseModelConfig } from "@tbench/proto";
import { validateEnsembleScheduling } from "./ensemble-config-check.js";

const bundled = (name: string) =>
  readFileSync(new URL(`../../../../examples/models/${name}/config.pbtxt`, import.meta.url), "utf8");

/** An ensemble `e` with input IMAGE and output LABEL around the given steps, plus `extra` config text. */
function ensemble(steps: string, extra = ""): string {
  return `
name: "e"
platform: "ensemble"
max_batch_size: 8
input [ { name: "IMAGE" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "LABEL" data_type: TYPE_INT64 dims: [ 1 ] } ]
ensemble_scheduling { step [ ${steps} ] }
${extra}`;
}

const step = (model: string, inputs: Record<string, string>, outputs: Record<string, string>) => {
  const maps = (field: string, map: Record<string, string>) =>
    Object.entries(map)
      .map(([key, value]) => `${field} { key: "${key}" value: "${value}" }`)
      .join(" ");
  return `{ model_name: "${model}" model_version: -1 ${maps("input_map", inputs)} ${maps("output_map", outputs)} }`;
};

const pipeline = [
  step("embed", { input: "IMAGE" }, { output: "EMBED" }),
  step("head", { emb: "EMBED" }, { label: "LABEL" }),
];

const check = (text: string) => validateEnsembleScheduling(parseModelConfig(text));

describe("validateEnsembleScheduling", () => {
  it("accepts the bundled ensemble_pipeline and a valid two-step pipeline", () => {
    assert.equal(check(bundled("ensemble_pipeline")), undefined);
    assert.equal(check(ensemble(pipeline.join(", "))), undefined);
  });

  it("ignores models that are not ensembles", () => {
    assert.equal(check(bundled("resnet_like")), undefined);
  });

  it("refuses an ensemble platform without ensemble_scheduling", () => {
    assert.equal(
      check('name: "e" platform: "ensemble"'),
      "ensemble scheduling must be set for ensemble e whose platform is ensemble",
    );
  });

  it("refuses ensemble_scheduling on another platform", () => {
    const text = ensemble(pipeline.join(", ")).replace(
      'platform: "ensemble"',
      'platform: "onnxruntime_onnx"',
    );
    assert.equal(
      check(text),
      "ensemble scheduling cannot be set for model 'e' whose platform is not ensemble",
    );
  });

  it("refuses instance_group, optimization and model_warmup", () => {
    const steps = pipeline.join(", ");
    assert.equal(
      check(ensemble(steps, "instance_group [ { count: 1 kind: KIND_CPU } ]")),
      "instance group should not be specified for ensemble 'e'",
    );
    assert.equal(
      check(ensemble(steps, "optimization { priority: PRIORITY_MAX }")),
      "optimization should not be specified for ensemble 'e'",
    );
    assert.equal(
      check(ensemble(steps, 'model_warmup [ { name: "w" batch_size: 1 } ]')),
      "model_warmup can not be specified for ensemble 'e'",
    );
  });

  it("refuses an ensemble without steps", () => {
    assert.equal(check(ensemble("")), "must specify 'step' for ensemble 'e'");
  });

  it("refuses a step without model_name, input_map or output_map, naming the step", () => {
    assert.equal(
      check(
        ensemble(
          `${pipeline[0]}, { input_map { key: "emb" value: "EMBED" } output_map { key: "label" value: "LABEL" } }`,
        ),
      ),
      "must specify 'model_name' in step 1 of ensemble 'e'",
    );
    assert.equal(
      check(ensemble(`{ model_name: "embed" output_map { key: "output" value: "EMBED" } }, ${pipeline[1]}`)),
      "must specify 'input_map' in step 0 of ensemble 'e'",
    );
    assert.equal(
      check(ensemble(`${pipeline[0]}, { model_name: "head" input_map { key: "emb" value: "EMBED" } }`)),
      "must specify 'output_map' in step 1 of ensemble 'e'",
    );
  });

  it("refuses a tensor written twice", () => {
    const twice = [...pipeline, step("other", { x: "IMAGE" }, { y: "EMBED" })];
    assert.equal(
      check(ensemble(twice.join(", "))),
      "ensemble tensor 'EMBED' can appear in an output map only once for ensemble 'e' step 2",
    );
    const sameStep = step("embed", { input: "IMAGE" }, { a: "EMBED", b: "EMBED" });
    assert.equal(
      check(ensemble(`${sameStep}, ${pipeline[1]}`)),
      "ensemble tensor 'EMBED' can appear in an output map only once for ensemble 'e' step 0",
    );
  });

  it("refuses an ensemble input no step reads (Triton's text, unbalanced quote included)", () => {
    const text = ensemble(pipeline.join(", ")).replace(
      "input [ {",
      'input [ { name: "EXTRA" data_type: TYPE_FP32 dims: [ 1 ] }, {',
    );
    assert.equal(check(text), "ensemble input 'EXTRA' for ensemble e' is not used");
  });

  it("refuses an ensemble output no step mentions", () => {
    const text = ensemble(pipeline.join(", ")).replace(
      "output [ {",
      'output [ { name: "EXTRA" data_type: TYPE_FP32 dims: [ 1 ] }, {',
    );
    assert.equal(check(text), "ensemble output 'EXTRA' for ensemble e' is not used");
  });

  it("refuses an output that is only read, never written", () => {
    // LABEL is read by a step, written by none: not written, and no source to blame.
    const steps = [
      step("embed", { input: "IMAGE", extra: "LABEL" }, { output: "EMBED" }),
      step("head", { emb: "EMBED" }, { label: "OUT2" }),
    ];
    const text = ensemble(steps.join(", ")).replace(
      "data_type: TYPE_INT64 dims: [ 1 ] } ]",
      'data_type: TYPE_INT64 dims: [ 1 ] }, { name: "OUT2" data_type: TYPE_INT64 dims: [ 1 ] } ]',
    );
    assert.equal(check(text), "output 'LABEL' for ensemble 'e' is not written");
  });

  it("names the unconnected tensor an unwritten output depends on", () => {
    const steps = [
      step("embed", { input: "IMAGE" }, { output: "EMBED" }),
      step("head", { emb: "EMBED", mask: "MASK" }, { label: "LABEL" }),
    ];
    assert.equal(
      check(ensemble(steps.join(", "))),
      "output 'LABEL' for ensemble 'e' is not written: at least one of its depending tensors, 'MASK', is not connected",
    );
  });

  it("refuses steps that feed each other in a cycle on the way to an output", () => {
    const steps = [
      step("a", { x: "IMAGE", y: "B_OUT" }, { o: "A_OUT" }),
      step("b", { x: "A_OUT" }, { o: "B_OUT" }),
      step("head", { emb: "A_OUT" }, { label: "LABEL" }),
    ];
    assert.equal(
      check(ensemble(steps.join(", "))),
      "output 'LABEL' for ensemble 'e' is not written: at least one of its depending tensors, 'B_OUT', is not connected",
    );
  });

  it("refuses a cycle that no output depends on", () => {
    const steps = [...pipeline, step("c1", { x: "L1" }, { o: "L2" }), step("c2", { x: "L2" }, { o: "L1" })];
    assert.equal(check(ensemble(steps.join(", "))), "ensemble tensor 'L2' is unused in ensemble 'e'");
  });

  it("refuses a step output nothing reads", () => {
    const steps = [step("embed", { input: "IMAGE" }, { output: "EMBED", side: "SIDE" }), pipeline[1]];
    assert.equal(check(ensemble(steps.join(", "))), "ensemble tensor 'SIDE' is unused in ensemble 'e'");
  });

  it("refuses a step that writes an ensemble input (tbench-server runs each step once)", () => {
    const steps = [
      step("embed", { input: "IMAGE" }, { output: "EMBED" }),
      step("head", { emb: "EMBED" }, { label: "LABEL", again: "IMAGE" }),
    ];
    assert.equal(
      check(ensemble(steps.join(", "))),
      "ensemble tensor 'IMAGE' is an input of ensemble 'e' and cannot appear in the output map of step 1: " +
        "tbench-server runs each step once per request",
    );
  });
});
