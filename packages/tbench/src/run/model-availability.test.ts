import assert from "node:assert/strict";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type RunningServer, startServer } from "@tbench/server";
import { runTbench } from "../testing/cli-harness.js";
import { type FakeV2Server, startFakeV2Server } from "../testing/fake-v2-server.js";

const SIMPLE = fileURLToPath(new URL("../../../../examples/models/simple", import.meta.url));
const quiet = { error() {}, warn() {}, info() {}, verbose() {}, debug() {} };

/** Runs tbench and returns its exit code and stderr; no request should get as far as load. */
const tbench = runTbench;

/** Copies examples/models/simple under `name`, its config changed by `edit`. */
async function addModel(repository: string, name: string, edit: (config: string) => string) {
  await cp(SIMPLE, join(repository, name), { recursive: true });
  const path = join(repository, name, "config.pbtxt");
  const config = (await readFile(path, "utf8")).replace('name: "simple"', `name: "${name}"`);
  await writeFile(path, edit(config));
}

describe("tbench says why a model is not available", { timeout: 60_000 }, () => {
  let repository: string;
  let server: RunningServer;
  before(async () => {
    repository = await mkdtemp(join(tmpdir(), "tbench-unavailable-"));
    await addModel(repository, "simple", (config) => config);
    // An input the ONNX model does not have: the model fails to load, the server keeps running.
    await addModel(repository, "broken", (config) => config.replace('name: "INPUT1"', 'name: "INPUT9"'));
    server = await startServer({
      modelRepository: repository,
      httpPort: 0,
      metricsPort: false,
      logger: quiet as never,
    });
  });
  after(async () => {
    await server.close();
    await rm(repository, { recursive: true, force: true });
  });

  it("a model that failed to load: its state and load error from the repository index, in one line", async () => {
    const run = await tbench(["-m", "broken", "-u", server.httpUrl]);
    assert.equal(run.code, 1);
    // The reason is the server's load error, word for word as the index holds it.
    const index = (await (
      await fetch(`${server.httpUrl}/v2/repository/index`, { method: "POST", body: "{}" })
    ).json()) as { name: string; reason?: string }[];
    const reason = index.find((entry) => entry.name === "broken")?.reason ?? "";
    assert.match(reason, /INPUT9/);
    assert.equal(
      run.stderr,
      `tbench: error: model 'broken' version 1 is UNAVAILABLE: ${reason} (the server answered: ` +
        "Request for unknown model: 'broken' has no available versions)\n",
    );
  });

  it("the version asked for with -x", async () => {
    const run = await tbench(["-m", "broken", "-x", "1", "-u", server.httpUrl]);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /^tbench: error: model 'broken' version 1 is UNAVAILABLE: .*INPUT9.* \(the server answered: Request for unknown model: 'broken' version 1 is not at ready state\)\n$/,
    );
    // A version the repository does not have: every version there is is listed.
    const missing = await tbench(["-m", "broken", "-x", "7", "-u", server.httpUrl]);
    assert.match(
      missing.stderr,
      /^tbench: error: model 'broken' version 1 is UNAVAILABLE: .* \(the server answered: Request for unknown model: 'broken' version 7 is not found\)\n$/,
    );
  });

  it("a name the repository does not have: the names it has", async () => {
    const run = await tbench(["-m", "simpel", "-u", server.httpUrl]);
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      "tbench: error: the server's repository index has no model 'simpel' (it lists: broken, simple) " +
        "(the server answered: Request for unknown model: 'simpel' is not found)\n",
    );
  });
});

describe("without a repository index, the server's answer as it was", { timeout: 30_000 }, () => {
  let fake: FakeV2Server;
  before(async () => {
    fake = await startFakeV2Server();
  });
  after(async () => {
    await fake.close();
  });

  it("the fake server has no repository extension: its own message, unchanged", async () => {
    const run = await tbench(["-m", "other", "-u", fake.url]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^tbench: error: unknown path \/v2\/models\/other\n$/);
  });
});
