/**
 * Ensembles served by the core: the bundled ensemble_pipeline (resnet_like -> label_head) loads with its
 * members in none mode (so the server is ready with Triton's default strict readiness), answers what the
 * members answer one after the other, counts its request once while each member counts its own, loads its
 * members in explicit mode and unloads them with unload_dependents, and is reloaded when a member is.
 */
import assert from "node:assert/strict";
import { utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { InferenceCore, Tensor } from "../core/types.js";
import {
  bundledConfig,
  createFixtureRepository,
  createRecordingLogger,
  type FixtureRepository,
} from "../testing/test-fixtures.js";
import { createInferenceCore } from "./create-inference-core.js";

function pipelineRepository(): FixtureRepository {
  return createFixtureRepository({
    resnet_like: { config: "bundled" },
    label_head: { config: "bundled" },
    // An ensemble has no model file: an empty version directory.
    ensemble_pipeline: { config: bundledConfig("ensemble_pipeline"), versions: [], extraDirs: ["1"] },
  });
}

/** A deterministic image batch [n, 3, 224, 224]. */
function images(n: number, seed: number): Float32Array {
  return Float32Array.from({ length: n * 3 * 224 * 224 }, (_, i) => Math.sin(i * 0.001 + seed));
}

/** LABEL as calling resnet_like then label_head from the client would give it. */
async function chained(core: InferenceCore, image: Float32Array, n: number): Promise<BigInt64Array> {
  const embedded = await core.infer({
    model: "resnet_like",
    inputs: [{ name: "input", datatype: "FP32", shape: [n, 3, 224, 224], data: image }],
  });
  const output = embedded.outputs.find((o) => o.name === "output") as Tensor;
  const labelled = await core.infer({
    model: "label_head",
    inputs: [{ name: "emb", datatype: "FP32", shape: [n, 1000], data: output.data }],
  });
  return labelled.outputs.find((o) => o.name === "label")?.data as BigInt64Array;
}

const inferPipeline = (core: InferenceCore, image: Float32Array, n: number) =>
  core.infer({
    model: "ensemble_pipeline",
    inputs: [{ name: "IMAGE", datatype: "FP32", shape: [n, 3, 224, 224], data: image }],
  });

describe("ensembles in the core", () => {
  test("none mode: ensemble_pipeline loads, the server is ready, answers equal the members chained", async () => {
    const repo = pipelineRepository();
    const core = await createInferenceCore({ modelRepository: repo.dir, logger: createRecordingLogger() });
    try {
      assert.equal(core.isReady(), true, "strict readiness with the ensemble loaded");
      assert.equal(core.isModelReady("ensemble_pipeline"), true);
      const image = images(3, 1);
      const response = await inferPipeline(core, image, 3);
      assert.equal(response.model, "ensemble_pipeline");
      const label = response.outputs.find((o) => o.name === "LABEL");
      assert.ok(label, "LABEL is answered");
      assert.deepEqual(label.shape, [3, 1]);
      assert.deepEqual([...(label.data as BigInt64Array)], [...(await chained(core, image, 3))]);
      const [ensemble] = core.modelStatistics("ensemble_pipeline");
      assert.equal(ensemble?.inference_stats.success.count, 1, "the ensemble request counted once");
      assert.equal(ensemble?.inference_count, 3);
      assert.ok((ensemble?.inference_stats.compute_infer.ns ?? 0) > 0, "members' compute summed");
      const [resnet] = core.modelStatistics("resnet_like");
      assert.equal(resnet?.inference_stats.success.count, 2, "one from the ensemble, one chained");
      const config = core.modelConfig("ensemble_pipeline");
      assert.equal(config.instance_group, undefined, "an ensemble has no instance group");
    } finally {
      await core.close();
      repo.remove();
    }
  });

  test("explicit mode: loading the ensemble loads its members; unload_dependents unloads them", async () => {
    const repo = pipelineRepository();
    const logger = createRecordingLogger();
    const core = await createInferenceCore({
      modelRepository: repo.dir,
      modelControlMode: "explicit",
      logger,
    });
    try {
      await core.loadModel("ensemble_pipeline");
      assert.equal(core.isModelReady("resnet_like"), true);
      assert.equal(core.isModelReady("label_head"), true);
      assert.equal((await inferPipeline(core, images(1, 2), 1)).outputs.length, 1);
      // A member reloaded (its file changed) reloads the ensemble, which keeps answering.
      const loads = () =>
        logger.lines.filter((l) => l === "I successfully loaded 'ensemble_pipeline' version 1");
      const before = loads().length;
      const later = new Date(Date.now() + 60_000);
      utimesSync(join(repo.dir, "label_head", "1", "model.onnx"), later, later);
      await core.loadModel("label_head");
      for (let i = 0; i < 500 && loads().length === before; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(loads().length, before + 1, "the ensemble reloaded after its member");
      assert.equal((await inferPipeline(core, images(1, 3), 1)).outputs.length, 1);
      await core.unloadModel("ensemble_pipeline", { unloadDependents: true });
      assert.equal(core.isModelReady("ensemble_pipeline"), false);
      assert.equal(core.isModelReady("resnet_like"), false);
      assert.equal(core.isModelReady("label_head"), false);
    } finally {
      await core.close();
      repo.remove();
    }
  });

  test("an ensemble whose member cannot load fails with Triton's reason and the member's", async () => {
    const repo = createFixtureRepository({
      label_head: { config: "bundled" },
      ensemble_pipeline: { config: bundledConfig("ensemble_pipeline"), versions: [], extraDirs: ["1"] },
    });
    const core = await createInferenceCore({
      modelRepository: repo.dir,
      modelControlMode: "explicit",
      logger: createRecordingLogger(),
    });
    try {
      await assert.rejects(core.loadModel("ensemble_pipeline"), (error: Error) => {
        assert.match(
          error.message,
          /^load failed for model 'ensemble_pipeline': version 1 is at UNAVAILABLE state: /,
        );
        assert.match(error.message, /resnet_like/);
        return true;
      });
      assert.equal(core.isModelReady("ensemble_pipeline"), false);
    } finally {
      await core.close();
      repo.remove();
    }
  });
});
