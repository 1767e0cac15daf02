/**
 * Issue 14, faults: poll mode while the repository turns unreadable, through the real server scanning
 * every 50 ms. A config replaced by garbage, a new version whose model file is a dangling symlink and the
 * whole repository moved away are each logged in one clear line while the serving versions keep serving (a
 * request succeeds after each); a model directory that is a dangling symlink is not a model (passed over,
 * as a plain file is) and the scan goes on. A removed model directory unloads that model (Triton's poll
 * mode does the same) and nothing else. The server never goes down.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type RunningServer, startServer } from "../server.js";
import {
  bundledConfig,
  bundledModelFile,
  createFixtureRepository,
  createRecordingLogger,
  type FixtureRepository,
} from "../testing/test-fixtures.js";

const DATA = Array.from({ length: 16 }, (_, i) => i);

describe("poll mode with an unreadable repository", { timeout: 60_000 }, () => {
  let repo: FixtureRepository;
  let server: RunningServer;
  const logger = createRecordingLogger();
  before(async () => {
    repo = createFixtureRepository({ simple: { config: "bundled" }, identity_fp32: { config: "bundled" } });
    server = await startServer({
      modelRepository: repo.dir,
      modelControlMode: "poll",
      repositoryPollSecs: 0.05,
      logger,
      httpPort: 0,
      metricsPort: false,
    });
  });
  after(async () => {
    await server?.close();
    repo?.remove();
  });

  /** Waits for the scans (every 50 ms) to log a line matching `pattern`, from `from` on; returns it. */
  const logged = async (pattern: RegExp, from: number): Promise<string> => {
    for (;;) {
      const line = logger.lines.slice(from).find((l) => pattern.test(l));
      if (line !== undefined) return line;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const simpleServes = async () => {
    const response = await fetch(`${server.httpUrl}/v2/models/simple/infer`, {
      method: "POST",
      body: JSON.stringify({
        inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data: DATA })),
        outputs: [{ name: "OUTPUT0" }],
      }),
      signal: AbortSignal.timeout(30_000),
    });
    assert.equal(response.status, 200, await response.clone().text());
    assert.deepEqual(
      ((await response.json()) as { outputs: { data: number[] }[] }).outputs[0]!.data,
      DATA.map((x) => 2 * x),
    );
  };
  const readyVersions = async (name: string) => {
    const index = (await (
      await fetch(`${server.httpUrl}/v2/repository/index`, { method: "POST" })
    ).json()) as {
      name: string;
      version?: string;
      state?: string;
    }[];
    return index.filter((r) => r.name === name && r.state === "READY").map((r) => r.version);
  };

  test("a config replaced by garbage: one error line per scan, version 1 serves on", async () => {
    const from = logger.lines.length;
    writeFileSync(join(repo.dir, "simple", "config.pbtxt"), "\u0000\u00ff garbage {{{ [");
    const line = await logged(/^E failed to load 'simple'/, from);
    assert.match(line, /^E failed to load 'simple': /);
    await simpleServes();
    writeFileSync(join(repo.dir, "simple", "config.pbtxt"), bundledConfig("simple"));
    await logged(/^I successfully loaded 'simple' version 1$/, from);
    await simpleServes();
  });

  test("a new version whose model file is a dangling symlink: version 2 fails, version 1 serves", async () => {
    const from = logger.lines.length;
    mkdirSync(join(repo.dir, "simple", "2"));
    symlinkSync(join(repo.dir, "nowhere.onnx"), join(repo.dir, "simple", "2", "model.onnx"));
    const line = await logged(/^E failed to load 'simple'/, from);
    assert.match(line, /'simple'.*(version 2|model\.onnx)/);
    await simpleServes();
    assert.deepEqual(await readyVersions("simple"), ["1"]);
    rmSync(join(repo.dir, "simple", "2"), { recursive: true });
  });

  test("a model directory that is a dangling symlink is passed over; the scan goes on", async () => {
    const from = logger.lines.length;
    symlinkSync(join(repo.dir, "gone"), join(repo.dir, "ghost"));
    // A model added beside it loads: the scans that met the dangling link went on.
    mkdirSync(join(repo.dir, "late", "1"), { recursive: true });
    copyFileSync(bundledModelFile("identity_int32"), join(repo.dir, "late", "1", "model.onnx"));
    writeFileSync(
      join(repo.dir, "late", "config.pbtxt"),
      bundledConfig("identity_int32").replace('name: "identity_int32"', 'name: "late"'),
    );
    await logged(/^I successfully loaded 'late' version 1$/, from);
    await simpleServes();
    assert.equal(logger.lines.slice(from).filter((l) => /ghost/.test(l)).length, 0, "not a model: no line");
    rmSync(join(repo.dir, "ghost"));
  });

  test("the whole repository moved away: one error line per scan, every model serves on", async () => {
    const from = logger.lines.length;
    renameSync(repo.dir, `${repo.dir}.away`);
    try {
      const line = await logged(/^E failed to poll model repository/, from);
      assert.ok(line.includes(repo.dir), line);
      await simpleServes();
      // The repository index reads the directory, so it answers an error meanwhile; readiness does not.
      assert.equal((await fetch(`${server.httpUrl}/v2/models/identity_fp32/ready`)).status, 200);
    } finally {
      renameSync(`${repo.dir}.away`, repo.dir);
    }
    await simpleServes();
  });

  test("a removed model directory unloads that model only", async () => {
    const from = logger.lines.length;
    rmSync(join(repo.dir, "identity_fp32"), { recursive: true });
    await logged(/identity_fp32/, from);
    while ((await readyVersions("identity_fp32")).length > 0) await new Promise((r) => setTimeout(r, 10));
    await simpleServes();
    mkdirSync(join(repo.dir, "identity_fp32", "1"), { recursive: true });
    copyFileSync(bundledModelFile("identity_fp32"), join(repo.dir, "identity_fp32", "1", "model.onnx"));
    writeFileSync(join(repo.dir, "identity_fp32", "config.pbtxt"), bundledConfig("identity_fp32"));
    while ((await readyVersions("identity_fp32")).length === 0) await new Promise((r) => setTimeout(r, 10));
    assert.equal((await fetch(`${server.httpUrl}/v2/health/live`)).status, 200);
  });
});
