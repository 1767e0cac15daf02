/**
 * Loads and unloads of one model name are serialized: concurrent loads of a name (a reload storm) leave
 * exactly one loaded set of instances, and close() leaves no worker thread or handle behind. Threads are
 * counted from /proc/self/task, which every worker thread (and onnxruntime's threads inside it) shows in.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { createInferenceCore } from "./create-inference-core.js";
import { silentLogger } from "./logger.js";
import { createFixtureRepository, type FixtureRepository } from "./test-fixtures.test.js";

const threadCount = () => readdirSync("/proc/self/task").length;
const handles = () =>
  process
    .getActiveResourcesInfo()
    .filter((kind) => kind !== "TTYWrap" && kind !== "Timeout" && kind !== "Immediate")
    .sort();

describe("concurrent loads of one model", { skip: process.platform !== "linux" && "reads /proc" }, () => {
  let repo: FixtureRepository;
  before(() => {
    repo = createFixtureRepository({ simple: { config: "bundled" } });
  });
  after(() => repo?.remove());

  test("leave one set of instances while running and none after close()", async () => {
    // One load and close first: the thread pools that Node and onnxruntime start once per process exist
    // before the baseline is taken.
    const warm = await createInferenceCore({
      modelRepository: repo.dir,
      modelControlMode: "explicit",
      loadModels: ["simple"],
      logger: silentLogger,
    });
    await warm.close();
    const baseThreads = threadCount();
    const baseHandles = handles();

    const core = await createInferenceCore({
      modelRepository: repo.dir,
      modelControlMode: "explicit",
      logger: silentLogger,
    });
    await core.loadModel("simple");
    const oneLoaded = threadCount();
    assert.ok(oneLoaded > baseThreads, "a loaded instance runs in a thread of its own");
    for (let round = 0; round < 3; round++) {
      await Promise.all(Array.from({ length: 4 }, () => core.loadModel("simple")));
      assert.equal(threadCount(), oneLoaded, `round ${round}: one set of instances, not one per load`);
    }
    // Loads and unloads interleaved settle to the last one asked for.
    await Promise.all([core.loadModel("simple"), core.unloadModel("simple"), core.loadModel("simple")]);
    assert.equal(core.isModelReady("simple"), true);
    await core.close();
    assert.equal(threadCount(), baseThreads, "every worker thread has ended");
    assert.deepEqual(handles(), baseHandles);
  });

  test("a load in progress when close() is called is closed too", async () => {
    const baseThreads = threadCount();
    const core = await createInferenceCore({
      modelRepository: repo.dir,
      modelControlMode: "explicit",
      logger: silentLogger,
    });
    const loading = core.loadModel("simple").catch((error: unknown) => error);
    await core.close();
    const outcome = await loading;
    assert.ok(outcome === undefined || (outcome as Error).message === "Server is stopping", String(outcome));
    assert.equal(threadCount(), baseThreads);
  });
});
