/**
 * The bundled ensemble_pipeline run by the ensemble scheduler over real members: resnet_like and label_head
 * each served by their own model scheduler and instance pool (onnxruntime sessions in worker threads), as
 * the core wires them. Checks that every answer equals calling the two members one after the other, and
 * that ensemble traffic goes through resnet_like's dynamic batcher (eight ensemble requests arriving
 * together make one resnet_like execution of batch 8). Needs `npm run models`.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type ModelConfig, parseModelConfig } from "@tbench/proto";
import { createSystemClock } from "../core/clock.js";
import { silentLogger } from "../core/logger.js";
import type { InferenceRequest, InferenceResponse, Tensor } from "../core/types.js";
import { createInstancePool, type InstancePool, instanceInits } from "../instances/instance-pool.js";
import { validateRequest } from "../lifecycle/request-validation.js";
import { normalizeModelConfig } from "../repository/config-normalize.js";
import { instanceGroupSpecs, modelSpecFromConfig } from "../repository/model-spec.js";
import { createModelScheduler, type ModelScheduler } from "../scheduler/model-scheduler.js";
import { createModelStats, type ModelStatsCollector } from "../stats/model-stats.js";
import { bundled, image } from "../testing/ensemble-fakes.js";
import { createEnsembleScheduler, type EnsembleScheduler } from "./ensemble-scheduler.js";

const clock = createSystemClock();

interface Member {
  readonly config: ModelConfig;
  readonly stats: ModelStatsCollector;
  readonly pool: InstancePool;
  infer(request: InferenceRequest): Promise<InferenceResponse>;
}

/** Serves bundled model `name` version 1 as the core does: its scheduler over its instance pool. */
async function serve(name: string): Promise<Member> {
  const config = bundled(name);
  normalizeModelConfig(config);
  const spec = modelSpecFromConfig(config);
  const modelPath = fileURLToPath(
    new URL(`../../../../examples/models/${name}/1/model.onnx`, import.meta.url),
  );
  let scheduler: ModelScheduler | undefined;
  const pool = await createInstancePool({
    modelName: name,
    version: "1",
    inits: instanceInits({ modelPath, groups: instanceGroupSpecs(config), intraOpThreads: 1 }),
    logger: silentLogger,
    onIdle: () => scheduler?.instanceIdle(),
  });
  const stats = createModelStats(name, "1");
  const running = createModelScheduler({ spec, version: "1", pool, clock, stats });
  scheduler = running;
  return {
    config,
    stats,
    pool,
    infer: (request) => running.submit(validateRequest(spec, request), clock.nowNs()),
  };
}

/** Images whose pixels differ per image, so their labels can differ. */
function images(count: number): Tensor[] {
  return Array.from({ length: count }, (_, n) => {
    const tensor = image(1);
    const data = tensor.data as Float32Array;
    for (let i = 0; i < data.length; i++) data[i] = Math.sin(i * 0.001 * (n + 1));
    return tensor;
  });
}

describe("ensemble_pipeline over real members", () => {
  let resnet: Member;
  let head: Member;
  let ensemble: EnsembleScheduler;
  const ensembleConfig = parseModelConfig(
    readFileSync(
      new URL("../../../../examples/models/ensemble_pipeline/config.pbtxt", import.meta.url),
      "utf8",
    ),
  );
  const spec = modelSpecFromConfig(ensembleConfig);

  before(async () => {
    [resnet, head] = await Promise.all([serve("resnet_like"), serve("label_head")]);
    const members = new Map([
      ["resnet_like", resnet],
      ["label_head", head],
    ]);
    ensemble = createEnsembleScheduler({
      config: ensembleConfig,
      version: "1",
      members: new Map([...members].map(([name, m]) => [name, m.config])),
      inferMember: (request) => members.get(request.model)!.infer(request),
      clock,
      stats: createModelStats("ensemble_pipeline", "1"),
    });
  });

  after(async () => {
    await ensemble?.close();
    await Promise.all([resnet?.pool.close(), head?.pool.close()]);
  });

  it("answers as the two members called in turn, and resnet_like batches the ensemble's requests", async () => {
    const inputs = images(8);
    // Submitted in one tick: resnet_like's batcher sees all eight member requests together.
    const answers = await Promise.all(
      inputs.map((input, n) =>
        ensemble.submit(
          validateRequest(spec, { model: "ensemble_pipeline", id: `e${n}`, inputs: [input] }),
          clock.nowNs(),
        ),
      ),
    );
    const resnetStats = resnet.stats.statistics();
    assert.equal(resnetStats.inference_count, 8);
    assert.deepEqual(
      resnetStats.batch_stats.map((b) => [b.batch_size, b.compute_infer.count]),
      [[8, 1]],
    );
    assert.equal(head.stats.statistics().inference_count, 8);

    for (const [n, input] of inputs.entries()) {
      const embed = await resnet.infer({ model: "resnet_like", inputs: [{ ...input, name: "input" }] });
      const direct = await head.infer({
        model: "label_head",
        inputs: [{ ...embed.outputs[0]!, name: "emb" }],
      });
      const label = answers[n]!.outputs[0]!;
      assert.deepEqual([label.name, label.datatype, label.shape], ["LABEL", "INT64", [1, 1]]);
      assert.deepEqual([...(label.data as BigInt64Array)], [...(direct.outputs[0]!.data as BigInt64Array)]);
      assert.equal(answers[n]!.id, `e${n}`);
    }
  });
});
