/**
 * Poll mode, one scan at a time (poll() is called by the test, the interval is off): new, changed and
 * removed model directories are loaded, reloaded and unloaded; a broken change keeps the loaded version
 * serving and is tried again at the next scan; a scan with no change reloads nothing.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createSystemClock } from "../core/clock.js";
import {
  bundledConfig,
  bundledModelFile,
  createFixtureRepository,
  createRecordingLogger,
  type FixtureRepository,
} from "../testing/test-fixtures.js";
import { fingerprintModelDirectory } from "./directory-fingerprint.js";
import { createModelLifecycle, type ModelLifecycle } from "./model-lifecycle.js";
import { createRepositoryPoller, type RepositoryPoller } from "./repository-poller.js";
import { type ModelEntry, readyVersionsOf } from "./version-state.js";

const readyOf = (entry: ModelEntry | undefined) =>
  entry ? readyVersionsOf(entry).map((v) => v.version) : [];

describe("repository poller", () => {
  let repo: FixtureRepository;
  let lifecycle: ModelLifecycle;
  let poller: RepositoryPoller;
  const logger = createRecordingLogger();
  const loads = () => logger.lines.filter((l) => l.startsWith("I successfully loaded")).length;

  before(() => {
    repo = createFixtureRepository({ simple: { config: "bundled" } });
    lifecycle = createModelLifecycle({
      repository: repo.dir,
      logger,
      loader: {
        logger,
        clock: createSystemClock(),
        autoComplete: true,
        loadEnsemble: () => Promise.reject(new Error("no ensembles in this repository")),
      },
    });
    poller = createRepositoryPoller({ repository: repo.dir, lifecycle, logger, intervalMs: 0 });
  });
  after(async () => {
    await poller?.close();
    await lifecycle?.close();
    repo?.remove();
  });

  test("loads what appears, and a scan with no change reloads nothing", async () => {
    await poller.poll();
    assert.deepEqual(readyOf(lifecycle.get("simple")), ["1"]);
    const before = loads();
    await poller.poll();
    assert.equal(loads(), before);
    mkdirSync(join(repo.dir, "identity_fp32", "1"), { recursive: true });
    copyFileSync(bundledModelFile("identity_fp32"), join(repo.dir, "identity_fp32", "1", "model.onnx"));
    writeFileSync(join(repo.dir, "identity_fp32", "config.pbtxt"), bundledConfig("identity_fp32"));
    await poller.poll();
    assert.deepEqual(readyOf(lifecycle.get("identity_fp32")), ["1"]);
    assert.deepEqual(readyOf(lifecycle.get("simple")), ["1"], "simple was not touched");
    assert.equal(loads(), before + 1);
  });

  test("a new version directory, a config change and a new model file each reload the model", async () => {
    const dir = join(repo.dir, "simple");
    mkdirSync(join(dir, "2"));
    copyFileSync(bundledModelFile("simple"), join(dir, "2", "model.onnx"));
    await poller.poll();
    assert.deepEqual(readyOf(lifecycle.get("simple")), ["2"], "latest 1: version 2 replaces version 1");
    writeFileSync(join(dir, "config.pbtxt"), `${bundledConfig("simple")}\nversion_policy: { all: {} }\n`);
    await poller.poll();
    assert.deepEqual(readyOf(lifecycle.get("simple")), ["1", "2"]);
    const before = loads();
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(dir, "2", "model.onnx"), later, later);
    await poller.poll();
    assert.ok(loads() > before, "a model file with a new modification time is loaded again");
  });

  test("a broken change keeps the loaded versions serving and is tried again", async () => {
    const dir = join(repo.dir, "simple");
    const good = `${bundledConfig("simple")}\nversion_policy: { all: {} }\n`;
    writeFileSync(join(dir, "config.pbtxt"), 'name: "simple"\nmax_batch_size: [oops\n');
    await poller.poll();
    assert.deepEqual(readyOf(lifecycle.get("simple")), ["1", "2"], "still serving");
    assert.ok(logger.lines.some((l) => l.startsWith("W failed to reload 'simple'")));
    const failures = logger.lines.filter((l) => l.startsWith("E failed to load 'simple'")).length;
    await poller.poll();
    assert.equal(
      logger.lines.filter((l) => l.startsWith("E failed to load 'simple'")).length,
      failures + 1,
      "tried again at the next scan",
    );
    writeFileSync(join(dir, "config.pbtxt"), good);
    await poller.poll();
    assert.deepEqual(readyOf(lifecycle.get("simple")), ["1", "2"]);
  });

  test("a model whose directory disappears is unloaded and becomes unknown", async () => {
    rmSync(join(repo.dir, "identity_fp32"), { recursive: true });
    await poller.poll();
    assert.equal(lifecycle.get("identity_fp32"), undefined);
    assert.deepEqual(readyOf(lifecycle.get("simple")), ["1", "2"]);
  });

  test("the fingerprint changes with any file under the model directory", async () => {
    const dir = join(repo.dir, "simple");
    const first = await fingerprintModelDirectory(dir);
    assert.equal(await fingerprintModelDirectory(dir), first);
    writeFileSync(join(dir, "2", "notes.txt"), "x");
    assert.notEqual(await fingerprintModelDirectory(dir), first);
    rmSync(join(dir, "2", "notes.txt"));
  });
});
