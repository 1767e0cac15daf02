/**
 * Test helpers for the ensemble scheduler tests: member and ensemble configs written as config.pbtxt text,
 * members that answer when the test says, and the scheduler set up as the core would (the request validated
 * against the ensemble's config, a fake clock, the real statistics collector). No tests here.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { type ModelConfig, parseModelConfig } from "@tbench/proto";
import type { InferenceRequest, InferenceResponse, Tensor } from "../core/types.js";
import { validateEnsembleConfig } from "../ensemble/ensemble-dependencies.js";
import type { MemberInfo } from "../ensemble/ensemble-members-check.js";
import { createEnsembleScheduler, type InferMember } from "../ensemble/ensemble-scheduler.js";
import type { MemberStatsSink } from "../ensemble/ensemble-stats.js";
import { validateRequest } from "../lifecycle/request-validation.js";
import { modelSpecFromConfig } from "../repository/model-spec.js";
import { createModelStats } from "../stats/model-stats.js";
import { createFakeClock } from "./fake-clock.js";

export const bundled = (name: string) =>
  parseModelConfig(
    readFileSync(new URL(`../../../../examples/models/${name}/config.pbtxt`, import.meta.url), "utf8"),
  );

/** A member model `name`: FP32 inputs and outputs of dims [2]. */
export const member = (name: string, inputs: string[], outputs: string[], maxBatchSize = 4): ModelConfig =>
  parseModelConfig(`name: "${name}" platform: "onnxruntime_onnx" max_batch_size: ${maxBatchSize}
input [ ${inputs.map((i) => `{ name: "${i}" data_type: TYPE_FP32 dims: [ 2 ] }`).join(", ")} ]
output [ ${outputs.map((o) => `{ name: "${o}" data_type: TYPE_FP32 dims: [ 2 ] }`).join(", ")} ]`);

export const step = (
  model: string,
  inputs: Record<string, string>,
  outputs: Record<string, string>,
  version = -1,
) =>
  `{ model_name: "${model}" model_version: ${version} ` +
  Object.entries(inputs)
    .map(([k, v]) => `input_map { key: "${k}" value: "${v}" }`)
    .join(" ") +
  " " +
  Object.entries(outputs)
    .map(([k, v]) => `output_map { key: "${k}" value: "${v}" }`)
    .join(" ") +
  " }";

/** An FP32 [2] ensemble named `name` (max_batch_size 4) over `steps`. */
export const ensemble = (name: string, outputs: string[], steps: string[]): ModelConfig =>
  parseModelConfig(`name: "${name}" platform: "ensemble" max_batch_size: 4
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ ${outputs.map((o) => `{ name: "${o}" data_type: TYPE_FP32 dims: [ 2 ] }`).join(", ")} ]
ensemble_scheduling { step [ ${steps.join(", ")} ] }`);

export const diamondConfig = ensemble(
  "diamond",
  ["OUT"],
  [
    step("left", { x: "IN" }, { y: "L" }),
    step("right", { x: "IN" }, { y: "R" }),
    step("join", { a: "L", b: "R" }, { sum: "OUT" }),
  ],
);
export const diamondMembers = new Map([
  ["left", member("left", ["x"], ["y"])],
  ["right", member("right", ["x"], ["y"])],
  ["join", member("join", ["a", "b"], ["sum"])],
]);

export interface Call {
  readonly request: InferenceRequest;
  readonly stats: MemberStatsSink;
  resolve(outputs: Tensor[]): void;
  reject(error: unknown): void;
}

/** Members that record each request and answer when the test says. */
export function heldMembers() {
  const calls: Call[] = [];
  const inferMember: InferMember = (request, stats) =>
    new Promise<InferenceResponse>((resolve, reject) => {
      calls.push({
        request,
        stats,
        resolve: (outputs) => resolve({ model: request.model, version: "1", outputs }),
        reject,
      });
    });
  const called = (model: string) => calls.filter((c) => c.request.model === model);
  return { calls, inferMember, called };
}

export const flush = () => new Promise((resolve) => setImmediate(resolve));

export function setup(
  config: ModelConfig,
  members: ReadonlyMap<string, ModelConfig>,
  inferMember: InferMember,
  versions: readonly string[] = ["1"],
) {
  const infos = new Map<string, MemberInfo>(
    [...members].map(([n, c]) => [n, { state: "ready", config: c, versions }]),
  );
  assert.equal(validateEnsembleConfig(config, infos), undefined);
  const clock = createFakeClock();
  const stats = createModelStats(config.name ?? "", "1");
  const scheduler = createEnsembleScheduler({ config, version: "1", members, inferMember, clock, stats });
  const spec = modelSpecFromConfig(config);
  const submit = (request: Omit<InferenceRequest, "model">) =>
    scheduler.submit(validateRequest(spec, { model: spec.name, ...request }), clock.nowNs());
  return { clock, stats, scheduler, submit };
}

export const fp32 = (name: string, values: number[], shape = [values.length / 2, 2]): Tensor => ({
  name,
  datatype: "FP32",
  shape,
  data: new Float32Array(values),
});

/** Records whether a promise settled, and how. */
export function watch<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

export const times = (ns: number) => ({
  computeInputNs: ns,
  computeInferNs: 10 * ns,
  computeOutputNs: 2 * ns,
});

/** The bundled ensemble_pipeline's members, as their bundled configs. */
export const pipelineMembers = (): Map<string, ModelConfig> =>
  new Map([
    ["resnet_like", bundled("resnet_like")],
    ["label_head", bundled("label_head")],
  ]);

/** An IMAGE tensor of `rows` zero images for ensemble_pipeline. */
export const image = (rows = 1): Tensor => ({
  name: "IMAGE",
  datatype: "FP32",
  shape: [rows, 3, 224, 224],
  data: new Float32Array(rows * 150528),
});
