/**
 * Issue 14, faults: model files that fail at load, through the real server and real onnxruntime sessions.
 * Garbage bytes, a truncated file and a graph whose node reads a tensor nothing defines each fail their
 * load with a message naming the model and the version; the other models keep serving and the server stays
 * up, at startup (mode none) and through the load API (mode explicit), including a reload of a serving
 * model whose file turned to garbage (the loaded version keeps serving, as Triton's L0_lifecycle expects).
 * A worker thread that exits while creating its session (the crashWorkerOnLoadModels test hook, as a native
 * crash in onnxruntime's loader would) fails that load the same way.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
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

const BROKEN = ["garbage", "truncated", "missing_input"] as const;
const PROTOBUF = "failed:Protobuf parsing failed.";
const MISSING =
  "Invalid model. Node input 'MISSNG' is not a graph input, initializer, or output of a previous node.";

/** simple's config under another name. */
const renamed = (name: string) => bundledConfig("simple").replace('name: "simple"', `name: "${name}"`);

/** A repository with simple and the three broken copies of it. */
function brokenRepository(): FixtureRepository {
  const repo = createFixtureRepository({
    simple: { config: "bundled" },
    ...Object.fromEntries(BROKEN.map((name) => [name, { from: "simple", config: renamed(name) }])),
  });
  const good = readFileSync(bundledModelFile("simple"));
  const file = (name: string) => join(repo.dir, name, "1", "model.onnx");
  writeFileSync(file("garbage"), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251)));
  writeFileSync(file("truncated"), good.subarray(0, Math.floor(good.length / 2)));
  // The Add node's first mention of INPUT1 (a NodeProto input: field 1, length 6) renamed, same length.
  const at = good.indexOf(Buffer.from("\x0a\x06INPUT1", "latin1"));
  assert.ok(at > 0, "simple's model has an Add node reading INPUT1");
  const patched = Buffer.from(good);
  patched.write("MISSNG", at + 2, "latin1");
  writeFileSync(file("missing_input"), patched);
  return repo;
}

/** The reason each broken model's version 1 is UNAVAILABLE, as a pattern (it names the model file's path). */
function reasonOf(dir: string, name: (typeof BROKEN)[number]): string {
  const path = join(dir, name, "1", "model.onnx");
  return `Invalid argument: Load model from ${path} ${name === "missing_input" ? `failed:${MISSING}` : PROTOBUF}`;
}

async function inferSimple(url: string, model = "simple"): Promise<{ status: number; body: unknown }> {
  const data = Array.from({ length: 16 }, (_, i) => i);
  const response = await fetch(`${url}/v2/models/${model}/infer`, {
    method: "POST",
    body: JSON.stringify({
      inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16], data })),
      outputs: [{ name: "OUTPUT0" }],
    }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await response.json()) as { outputs?: { data: number[] }[] };
  return { status: response.status, body: body.outputs?.[0]?.data ?? body };
}

const doubled = Array.from({ length: 16 }, (_, i) => 2 * i);

describe("model files that fail at load", { timeout: 120_000 }, () => {
  describe("at startup (mode none)", () => {
    let repo: FixtureRepository;
    let server: RunningServer;
    const logger = createRecordingLogger();
    before(async () => {
      repo = brokenRepository();
      server = await startServer({ modelRepository: repo.dir, logger, httpPort: 0, metricsPort: false });
    });
    after(async () => {
      await server?.close();
      repo?.remove();
    });

    test("each failure is logged and reported naming model and version; simple serves", async () => {
      for (const name of BROKEN) {
        assert.ok(
          logger.lines.includes(`E failed to load '${name}' version 1: ${reasonOf(repo.dir, name)}`),
          `log line for ${name}; got:\n${logger.lines.join("\n")}`,
        );
      }
      const index = (await (
        await fetch(`${server.httpUrl}/v2/repository/index`, { method: "POST" })
      ).json()) as {
        name: string;
      }[];
      assert.deepEqual(index, [
        { name: "garbage", version: "1", state: "UNAVAILABLE", reason: reasonOf(repo.dir, "garbage") },
        {
          name: "missing_input",
          version: "1",
          state: "UNAVAILABLE",
          reason: reasonOf(repo.dir, "missing_input"),
        },
        { name: "simple", version: "1", state: "READY", reason: "" },
        { name: "truncated", version: "1", state: "UNAVAILABLE", reason: reasonOf(repo.dir, "truncated") },
      ]);
      assert.deepEqual(await inferSimple(server.httpUrl), { status: 200, body: doubled });
      // A broken model is unavailable, not a crash: 404 as for any model with no ready version.
      assert.deepEqual(await inferSimple(server.httpUrl, "garbage"), {
        status: 404,
        body: { error: "Request for unknown model: 'garbage' has no available versions" },
      });
      // Strict readiness: not every model loaded, so not ready; but live.
      assert.equal((await fetch(`${server.httpUrl}/v2/health/ready`)).status, 400);
      assert.equal((await fetch(`${server.httpUrl}/v2/health/live`)).status, 200);
    });
  });

  describe("a worker thread that dies while creating its session (crash at load)", () => {
    let repo: FixtureRepository;
    let server: RunningServer;
    const logger = createRecordingLogger();
    before(async () => {
      repo = createFixtureRepository({
        simple: { config: "bundled" },
        crashing: { from: "simple", config: renamed("crashing") },
      });
      server = await startServer({
        modelRepository: repo.dir,
        logger,
        httpPort: 0,
        metricsPort: false,
        crashWorkerOnLoadModels: ["crashing"],
      });
    });
    after(async () => {
      await server?.close();
      repo?.remove();
    });

    test("the load fails naming model, version and instance; simple serves", async () => {
      const reason = "Internal: model instance 'crashing_0' failed to start: worker exited with code 71";
      assert.ok(
        logger.lines.includes(`E failed to load 'crashing' version 1: ${reason}`),
        logger.lines.join("\n"),
      );
      const index = (await (
        await fetch(`${server.httpUrl}/v2/repository/index`, { method: "POST" })
      ).json()) as {
        name: string;
      }[];
      assert.deepEqual(
        index.find((row) => row.name === "crashing"),
        { name: "crashing", version: "1", state: "UNAVAILABLE", reason },
      );
      assert.deepEqual(await inferSimple(server.httpUrl), { status: 200, body: doubled });
    });
  });

  describe("through the load API (mode explicit)", () => {
    let repo: FixtureRepository;
    let server: RunningServer;
    const logger = createRecordingLogger();
    before(async () => {
      repo = brokenRepository();
      server = await startServer({
        modelRepository: repo.dir,
        logger,
        httpPort: 0,
        metricsPort: false,
        modelControlMode: "explicit",
        loadModels: ["simple"],
      });
    });
    after(async () => {
      await server?.close();
      repo?.remove();
    });

    const load = async (name: string) => {
      const response = await fetch(`${server.httpUrl}/v2/repository/models/${name}/load`, {
        method: "POST",
        signal: AbortSignal.timeout(30_000),
      });
      return { status: response.status, body: await response.text() };
    };

    test("each load answers 400 naming model, version and cause; simple serves between them", async () => {
      for (const name of BROKEN) {
        assert.deepEqual(await load(name), {
          status: 400,
          body: JSON.stringify({
            error: `load failed for model '${name}': version 1 is at UNAVAILABLE state: ${reasonOf(repo.dir, name)};`,
          }),
        });
        assert.deepEqual(await inferSimple(server.httpUrl), { status: 200, body: doubled });
      }
      assert.equal((await fetch(`${server.httpUrl}/v2/health/ready`)).status, 200);
    });

    test("a reload of a serving model whose file became garbage fails and the loaded version serves on", async () => {
      writeFileSync(join(repo.dir, "simple", "1", "model.onnx"), Buffer.alloc(1000, 0xab));
      const answer = await load("simple");
      assert.equal(answer.status, 400);
      assert.match(
        answer.body,
        /^\{"error":"load failed for model 'simple': version 1 is at UNAVAILABLE state: /,
      );
      assert.deepEqual(await inferSimple(server.httpUrl), { status: 200, body: doubled });
      const index = (await (
        await fetch(`${server.httpUrl}/v2/repository/index`, { method: "POST" })
      ).json()) as {
        name: string;
      }[];
      assert.deepEqual(
        index.find((row) => row.name === "simple"),
        { name: "simple", version: "1", state: "READY", reason: "" },
      );
    });
  });
});
