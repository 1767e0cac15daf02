/**
 * Loads and unloads of one model name are serialized: concurrent loads of a name (a reload storm) leave
 * exactly one loaded set of instances, and close() leaves no worker thread or handle behind. Threads are
 * counted from /proc/self/task, which every worker thread (and onnxruntime's threads inside it) shows in.
 */
import assert from "node:assert/strict";
import { readdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { silentLogger } from "../core/logger.js";
import {
  createFixtureRepository,
  createRecordingLogger,
  type FixtureRepository,
} from "../testing/test-fixtures.js";
import { createInferenceCore } from "./create-inference-core.js";

/**
 * 8 concurrent loads repeated 10 times, and unload/load cycles: 50 by default (a load starts a worker
 * thread and an onnxruntime session, about 0.3-1 s here); TBENCH_LOAD_CYCLES=200 runs issue 12's figure
 * (measured: 210 loads, RSS +21.7 MiB, threads and handles back where they started).
 */
const ROUNDS = 10;
const CYCLES = Number(process.env.TBENCH_LOAD_CYCLES ?? 50);
/** What RSS may grow by over those loads: allocator and JIT noise, not one leaked session each. */
const RSS_MARGIN_MIB = 96;
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

    const logger = createRecordingLogger();
    const core = await createInferenceCore({
      modelRepository: repo.dir,
      modelControlMode: "explicit",
      logger,
    });
    await core.loadModel("simple");
    const oneLoaded = threadCount();
    assert.ok(oneLoaded > baseThreads, "a loaded instance runs in a thread of its own");
    const rssBefore = process.memoryUsage().rss;
    const loads = () => logger.lines.filter((l) => l === "I successfully loaded 'simple' version 1").length;
    for (let round = 0; round < ROUNDS; round++) {
      // A new modification time makes the next load a real reload; the other seven find it done (Triton
      // does not reload a model whose directory has not changed).
      const later = new Date(Date.now() + (round + 1) * 60_000);
      utimesSync(join(repo.dir, "simple", "1", "model.onnx"), later, later);
      const before = loads();
      await Promise.all(Array.from({ length: 8 }, () => core.loadModel("simple")));
      assert.equal(loads(), before + 1, `round ${round}: one reload for eight concurrent loads`);
      assert.equal(threadCount(), oneLoaded, `round ${round}: one set of instances, not one per load`);
    }
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      await core.unloadModel("simple");
      await core.loadModel("simple");
    }
    assert.equal(threadCount(), oneLoaded, `${CYCLES} unload/load cycles leave one set of instances`);
    // A leak of one session or worker per load (several MiB each) would pass the margin many times over.
    const grownMiB = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    console.log(`rss grew ${grownMiB.toFixed(1)} MiB over ${ROUNDS + CYCLES} loads`);
    assert.ok(
      grownMiB < RSS_MARGIN_MIB,
      `RSS grew ${grownMiB.toFixed(1)} MiB (margin ${RSS_MARGIN_MIB} MiB)`,
    );
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

  test("destroy() fails what is queued at once and ends every worker", async () => {
    const baseThreads = threadCount();
    const core = await createInferenceCore({
      modelRepository: repo.dir,
      modelControlMode: "explicit",
      loadModels: ["simple"],
      logger: silentLogger,
    });
    const inputs = [
      { name: "INPUT0", datatype: "INT32" as const, shape: [1, 16], data: new Int32Array(16).fill(1) },
      { name: "INPUT1", datatype: "INT32" as const, shape: [1, 16], data: new Int32Array(16).fill(2) },
    ];
    const settled = Promise.allSettled(
      Array.from({ length: 200 }, () => core.infer({ model: "simple", inputs })),
    );
    await core.destroy();
    const outcomes = await settled;
    const refused = outcomes.filter(
      (o) => o.status === "rejected" && (o.reason as { status?: string }).status === "UNAVAILABLE",
    );
    assert.ok(refused.length > 0, "queued requests were failed, not run");
    // Batches already running end with their workers: INTERNAL, naming the instance and why.
    const others = outcomes.filter((o) => o.status === "rejected" && !refused.includes(o));
    for (const o of others) {
      assert.match(
        String((o as PromiseRejectedResult).reason),
        /model instance 'simple_\d' died while running the request: the instance is being unloaded/,
      );
    }
    assert.equal(threadCount(), baseThreads);
  });
});
