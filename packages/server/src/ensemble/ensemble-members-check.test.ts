/**
 * The ensemble checks against its members, each with Triton's exact message (model_repository_manager.cc
 * ConnectDependencyGraph / CheckNode / CircularDependencyCheck, ensemble_utils.cc ValidateEnsembleConfig),
 * on the bundled ensemble_pipeline and its members' configs, edited.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { type ModelConfig, parseModelConfig } from "@tbench/proto";
import { ensembleMemberNames, findEnsembleCycle, validateEnsembleConfig } from "./ensemble-dependencies.js";
import { type MemberInfo, validateEnsembleMembers } from "./ensemble-members-check.js";

const bundledText = (name: string) =>
  readFileSync(new URL(`../../../../examples/models/${name}/config.pbtxt`, import.meta.url), "utf8");

/** A bundled config, its text edited first. */
const config = (name: string, edit: (text: string) => string = (t) => t): ModelConfig =>
  parseModelConfig(edit(bundledText(name)));

const ready = (c: ModelConfig, versions: readonly string[] = ["1"]): MemberInfo => ({
  state: "ready",
  config: c,
  versions,
});

/** The bundled members, with `overrides` replacing some. */
function members(overrides: Record<string, MemberInfo | undefined> = {}): Map<string, MemberInfo> {
  const map = new Map<string, MemberInfo>([
    ["resnet_like", ready(config("resnet_like"))],
    ["label_head", ready(config("label_head"))],
  ]);
  for (const [name, info] of Object.entries(overrides)) {
    if (info) map.set(name, info);
    else map.delete(name);
  }
  return map;
}

const pipeline = (edit?: (text: string) => string) => config("ensemble_pipeline", edit);
const head = (edit: (text: string) => string) => ready(config("label_head", edit));

describe("validateEnsembleMembers", () => {
  it("accepts the bundled ensemble_pipeline with its bundled members", () => {
    assert.equal(validateEnsembleConfig(pipeline(), members()), undefined);
  });

  it("names the first member the repository does not have, as Triton does", () => {
    assert.equal(
      validateEnsembleMembers(pipeline(), members({ resnet_like: undefined, label_head: undefined })),
      "ensemble ensemble_pipeline contains models that are not available or ambiguous: resnet_like",
    );
  });

  it("refuses a member whose config is not valid, with the member's error", () => {
    const info: MemberInfo = {
      state: "invalid",
      error: "'max_batch_size' must be non-negative value for label_head",
    };
    assert.equal(
      validateEnsembleMembers(pipeline(), members({ label_head: info })),
      "ensemble 'ensemble_pipeline' depends on 'label_head' which is not valid. Model 'label_head' failed with " +
        "error: 'max_batch_size' must be non-negative value for label_head",
    );
  });

  it("refuses a member with no loaded version, with its load error when there is one", () => {
    assert.equal(
      validateEnsembleMembers(pipeline(), members({ resnet_like: { state: "unavailable" } })),
      "ensemble 'ensemble_pipeline' depends on 'resnet_like' which has no loaded version.",
    );
    assert.equal(
      validateEnsembleMembers(
        pipeline(),
        members({ resnet_like: { state: "unavailable", error: "model file missing" } }),
      ),
      "ensemble 'ensemble_pipeline' depends on 'resnet_like' which has no loaded version. Model 'resnet_like' " +
        "loading failed with error: model file missing",
    );
  });

  it("refuses a step version that is not loaded (an unset model_version is 0)", () => {
    const v3 = pipeline((t) =>
      t.replace(
        'model_name: "resnet_like"\n      model_version: -1',
        'model_name: "resnet_like"\n      model_version: 3',
      ),
    );
    assert.equal(
      validateEnsembleMembers(v3, members()),
      "ensemble 'ensemble_pipeline' depends on 'resnet_like' whose required version 3 is not loaded.",
    );
    assert.equal(
      validateEnsembleMembers(v3, members({ resnet_like: ready(config("resnet_like"), ["1", "3"]) })),
      undefined,
    );
    const unset = pipeline((t) =>
      t.replace('model_name: "label_head"\n      model_version: -1', 'model_name: "label_head"'),
    );
    assert.equal(
      validateEnsembleMembers(unset, members()),
      "ensemble 'ensemble_pipeline' depends on 'label_head' whose required version 0 is not loaded.",
    );
  });

  it("refuses a batching member whose max_batch_size is below the ensemble's", () => {
    assert.equal(
      validateEnsembleMembers(
        pipeline(),
        members({ label_head: head((t) => t.replace("max_batch_size: 32", "max_batch_size: 16")) }),
      ),
      "ensemble ensemble_pipeline allows maximum batch size 32, but it contains model label_head which only " +
        "allows maximum batch size to be 16",
    );
  });

  it("accepts a non-batching member whose dims carry the batch dimension", () => {
    const nonBatching = head((t) =>
      t
        .replace("max_batch_size: 32", "max_batch_size: 0")
        .replace("dims: [ 1000 ]", "dims: [ -1, 1000 ]")
        .replace("dims: [ 1 ]", "dims: [ -1, 1 ]"),
    );
    assert.equal(validateEnsembleMembers(pipeline(), members({ label_head: nonBatching })), undefined);
  });

  it("refuses a step input that is not an input of its member", () => {
    const renamed = pipeline((t) => t.replace('key: "emb"', 'key: "embedding"'));
    assert.equal(
      validateEnsembleMembers(renamed, members()),
      "in ensemble ensemble_pipeline, ensemble tensor EMBED is mapping to non-existing input embedding in model label_head",
    );
  });

  it("refuses a required member input left unmapped, and accepts an optional one", () => {
    const extra = (optional: string) =>
      head((t) =>
        t.replace(
          "input [\n  {",
          `input [\n  { name: "mask" data_type: TYPE_FP32 dims: [ 1 ] ${optional} },\n  {`,
        ),
      );
    assert.equal(
      validateEnsembleMembers(pipeline(), members({ label_head: extra("") })),
      "in ensemble ensemble_pipeline, input mask in model label_head is not mapped to any ensemble tensors",
    );
    assert.equal(
      validateEnsembleMembers(pipeline(), members({ label_head: extra("optional: true") })),
      undefined,
    );
  });

  it("refuses a step output that is not an output of its member", () => {
    const renamed = pipeline((t) => t.replace('key: "label"', 'key: "labels"'));
    assert.equal(
      validateEnsembleMembers(renamed, members()),
      "in ensemble ensemble_pipeline, ensemble tensor LABEL is mapped from non-existing output labels in model label_head",
    );
  });

  it("refuses a tensor whose datatype differs between the members", () => {
    const fp16 = head((t) => t.replace("TYPE_FP32", "TYPE_FP16"));
    assert.equal(
      validateEnsembleMembers(pipeline(), members({ label_head: fp16 })),
      "in ensemble ensemble_pipeline, ensemble tensor EMBED: inconsistent data type: TYPE_FP32 is inferred from " +
        "model resnet_like while TYPE_FP16 is inferred from model label_head",
    );
  });

  it("refuses a tensor whose shape differs, printing full dims with the batch dimension", () => {
    const narrow = head((t) => t.replace("dims: [ 1000 ]", "dims: [ 500 ]"));
    assert.equal(
      validateEnsembleMembers(pipeline(), members({ label_head: narrow })),
      "in ensemble ensemble_pipeline, ensemble tensor EMBED: inconsistent shape: [-1,1000] is inferred from model " +
        "resnet_like while [-1,500] is inferred from model label_head",
    );
  });

  it("accepts a variable dimension against a fixed one", () => {
    const variable = head((t) => t.replace("dims: [ 1000 ]", "dims: [ -1 ]"));
    assert.equal(validateEnsembleMembers(pipeline(), members({ label_head: variable })), undefined);
  });

  it("checks the ensemble's own inputs and outputs against the members", () => {
    const wideImage = pipeline((t) => t.replace("dims: [ 3, 224, 224 ]", "dims: [ 3, 224, 225 ]"));
    assert.equal(
      validateEnsembleMembers(wideImage, members()),
      "in ensemble ensemble_pipeline, ensemble tensor IMAGE: inconsistent shape: [-1,3,224,225] is inferred from " +
        "model ensemble_pipeline while [-1,3,224,224] is inferred from model resnet_like",
    );
    const int32Label = pipeline((t) => t.replace("TYPE_INT64", "TYPE_INT32"));
    assert.equal(
      validateEnsembleMembers(int32Label, members()),
      "in ensemble ensemble_pipeline, ensemble tensor LABEL: inconsistent data type: TYPE_INT32 is inferred from " +
        "model ensemble_pipeline while TYPE_INT64 is inferred from model label_head",
    );
  });

  it("uses the ensemble input's reshape, not its dims, as its shape", () => {
    const reshaped = pipeline((t) =>
      t.replace("dims: [ 3, 224, 224 ]", "dims: [ 150528 ]\n    reshape { shape: [ 3, 224, 224 ] }"),
    );
    assert.equal(validateEnsembleMembers(reshaped, members()), undefined);
  });
});

describe("ensemble dependencies", () => {
  it("lists each member once, in step order", () => {
    assert.deepEqual(ensembleMemberNames(pipeline()), ["resnet_like", "label_head"]);
    assert.deepEqual(ensembleMemberNames(config("resnet_like")), []);
  });

  it("finds a loop of ensembles back to the start, in Triton's words", () => {
    const graph: Record<string, string[]> = { a: ["m", "b"], b: ["c"], c: ["a"], m: [] };
    const membersOf = (name: string) => graph[name];
    assert.equal(
      findEnsembleCycle("a", membersOf),
      "circular dependency between ensembles: a -> ... -> c -> a",
    );
    assert.equal(
      findEnsembleCycle("self", () => ["self"]),
      "circular dependency between ensembles: self -> ... -> self -> self",
    );
    assert.equal(findEnsembleCycle("m", membersOf), undefined);
    // A loop that does not come back to the start ends the walk without a report.
    const side: Record<string, string[]> = { x: ["y"], y: ["z"], z: ["y"] };
    assert.equal(
      findEnsembleCycle("x", (name) => side[name]),
      undefined,
    );
  });
});
