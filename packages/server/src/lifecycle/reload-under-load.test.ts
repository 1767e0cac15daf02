/**
 * Model management under load: clients keep inferring on `simple` (every answer checked against its own
 * inputs) while its repository changes in poll mode, and while it is reloaded, reloaded with a failing
 * override, and while another model is loaded and unloaded in explicit mode. Versions that stay served
 * lose no request. The test waits for events (a version READY in the index), never for a duration.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { InferenceCore } from "../core/types.js";
import {
  bundledConfig,
  bundledModelFile,
  createFixtureRepository,
  createRecordingLogger,
} from "../testing/test-fixtures.js";
import { createInferenceCore } from "./create-inference-core.js";

const CLIENTS = 8;

/** Clients that infer on `simple` until stopped; each answer is checked exactly. */
function startClients(core: InferenceCore, versions: ReadonlySet<string>) {
  let running = true;
  let answered = 0;
  const failures: string[] = [];
  const client = async (seed: number) => {
    let n = seed;
    while (running) {
      n = (n * 1103515245 + 12345) % 2 ** 31;
      const a = Int32Array.from({ length: 16 }, (_, i) => (n + i) % 1000);
      const b = Int32Array.from({ length: 16 }, (_, i) => ((n >> 3) % 997) - i);
      try {
        const response = await core.infer({
          model: "simple",
          inputs: [
            { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: a },
            { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: b },
          ],
        });
        const sum = response.outputs.find((o) => o.name === "OUTPUT0")?.data as Int32Array;
        const diff = response.outputs.find((o) => o.name === "OUTPUT1")?.data as Int32Array;
        for (let i = 0; i < 16; i++) {
          if (sum[i] !== a[i]! + b[i]! || diff[i] !== a[i]! - b[i]!) {
            failures.push(`wrong answer at ${i} from version ${response.version}`);
            break;
          }
        }
        if (!versions.has(response.version)) failures.push(`answer from version ${response.version}`);
        answered++;
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
  };
  const done = Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i + 1)));
  return {
    answered: () => answered,
    failures,
    async stop() {
      running = false;
      await done;
    },
  };
}

/** Resolves once `check` holds, looking again after each of `core`'s index reads; fails after `limit` tries. */
async function until(what: string, check: () => Promise<boolean>, limit = 2_000): Promise<void> {
  for (let i = 0; i < limit; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`gave up waiting for: ${what}`);
}

const readyVersions = async (core: InferenceCore, model: string) =>
  (await core.repositoryIndex({ readyOnly: true })).filter((r) => r.name === model).map((r) => r.version);

describe("model management under load", () => {
  test("poll mode: a new version, a config change, a new model file and a removed version lose no request", async () => {
    const repo = createFixtureRepository({ simple: { config: "bundled" } });
    const logger = createRecordingLogger();
    const core = await createInferenceCore({
      modelRepository: repo.dir,
      modelControlMode: "poll",
      repositoryPollSecs: 0.02,
      logger,
    });
    const clients = startClients(core, new Set(["1", "2"]));
    try {
      const dir = join(repo.dir, "simple");
      mkdirSync(join(dir, "2"));
      copyFileSync(bundledModelFile("simple"), join(dir, "2", "model.onnx"));
      await until("version 2 replaces 1", async () => (await readyVersions(core, "simple")).join() === "2");
      writeFileSync(join(dir, "config.pbtxt"), `${bundledConfig("simple")}\nversion_policy: { all: {} }\n`);
      await until("versions 1 and 2", async () => (await readyVersions(core, "simple")).join() === "1,2");
      const loadsOf2 = () =>
        logger.lines.filter((l) => l === "I successfully loaded 'simple' version 2").length;
      const before = loadsOf2();
      const later = new Date(Date.now() + 60_000);
      utimesSync(join(dir, "2", "model.onnx"), later, later);
      await until("the new model file loaded", async () => loadsOf2() > before);
      rmSync(join(dir, "1"), { recursive: true });
      await until("version 1 removed", async () => (await readyVersions(core, "simple")).join() === "2");
      await until("some answers after the last change", async () => clients.answered() > 50);
    } finally {
      await clients.stop();
      await core.close();
      repo.remove();
    }
    assert.deepEqual(clients.failures, []);
    assert.ok(clients.answered() > 0);
  });

  test("explicit mode: reloads, a failed reload and another model's load/unload lose no request", async () => {
    const repo = createFixtureRepository({
      simple: { config: "bundled" },
      identity_fp32: { config: "bundled" },
    });
    const core = await createInferenceCore({
      modelRepository: repo.dir,
      modelControlMode: "explicit",
      loadModels: ["simple"],
      logger: createRecordingLogger(),
    });
    const clients = startClients(core, new Set(["1"]));
    try {
      for (let round = 0; round < 3; round++) {
        // A new modification time: the load is a real reload (an unchanged model is not reloaded).
        const later = new Date(Date.now() + (round + 1) * 60_000);
        utimesSync(join(repo.dir, "simple", "1", "model.onnx"), later, later);
        await core.loadModel("simple");
        await assert.rejects(
          core.loadModel("simple", {
            config: JSON.stringify({ ...simpleJson(), default_model_filename: "gone.onnx" }),
          }),
          /load failed for model 'simple'/,
        );
        await core.loadModel("identity_fp32");
        await core.unloadModel("identity_fp32");
        const seen = clients.answered();
        await until("answers after the round", async () => clients.answered() > seen + 10);
      }
    } finally {
      await clients.stop();
      await core.close();
      repo.remove();
    }
    assert.deepEqual(clients.failures, []);
  });
});

/** simple's config as a JSON override. */
function simpleJson(): Record<string, unknown> {
  const io = (name: string) => ({ name, data_type: "TYPE_INT32", dims: ["16"] });
  return {
    name: "simple",
    platform: "onnxruntime_onnx",
    max_batch_size: 8,
    input: [io("INPUT0"), io("INPUT1")],
    output: [io("OUTPUT0"), io("OUTPUT1")],
  };
}
