/**
 * The model repository's security boundary, end to end through the HTTP API (explicit model control): a
 * model name is one directory entry of the repository, every file a config (or a config override) names
 * stays inside the model's directory, and a refused reload leaves the serving version untouched. Each case
 * here reproduces a hostile probe that succeeded before the boundary existed.
 */
import assert from "node:assert/strict";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { silentLogger } from "./core/logger.js";
import { type RunningServer, startServer } from "./server.js";
import { type RawResponse, rawRequest } from "./testing/raw-http-client.js";
import {
  bundledConfig,
  bundledModelFile,
  createFixtureRepository,
  type FixtureRepository,
} from "./testing/test-fixtures.js";

const errorOf = (res: RawResponse) => (JSON.parse(res.body.toString()) as { error: string }).error;

/** identity_fp32's config as a JSON override, with `output` fields replaced. */
function identityOverride(
  fields: Record<string, unknown>,
  outputFields: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    name: "identity_fp32",
    platform: "onnxruntime_onnx",
    max_batch_size: 8,
    input: [{ name: "INPUT0", data_type: "TYPE_FP32", dims: ["-1"] }],
    output: [{ name: "OUTPUT0", data_type: "TYPE_FP32", dims: ["-1"], ...outputFields }],
    ...fields,
  });
}

describe("repository security boundary", () => {
  let repo: FixtureRepository;
  let planted: FixtureRepository;
  let outside: string;
  let server: RunningServer;
  let url: string;
  const post = (path: string, body: unknown = "") =>
    rawRequest(url, path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });

  before(async () => {
    // Outside the repository: a complete, loadable model (what the traversal probe loaded and served), a
    // secret file (what the label probe read), and a directory that holds no model.
    outside = mkdtempSync(join(tmpdir(), "tbench-outside-"));
    // No config.pbtxt: auto-complete names the model after the name it was loaded by, as the probe relied on.
    planted = createFixtureRepository({ model: { from: "simple" } });
    mkdirSync(join(outside, "srv", "planted"), { recursive: true });
    symlinkSync(join(planted.dir, "model"), join(outside, "srv", "planted", "model"));
    writeFileSync(join(outside, "secret.txt"), "root:x:0:0\nsecond line\n");
    mkdirSync(join(outside, "empty"));
    repo = createFixtureRepository({
      identity_fp32: { config: "bundled" },
      simple: { config: "bundled" },
      ".store/alias": {
        from: "simple",
        config: bundledConfig("simple").replace('name: "simple"', 'name: "alias"'),
      },
    });
    // Symlinks inside the repository: one out of it, one to a model directory kept elsewhere inside it
    // (allowed), and a label file that points outside the model's directory.
    symlinkSync(join(outside, "srv", "planted", "model"), join(repo.dir, "escape"));
    symlinkSync(join(repo.dir, ".store", "alias"), join(repo.dir, "alias"));
    symlinkSync(join(outside, "secret.txt"), join(repo.dir, "identity_fp32", "labels.txt"));
    server = await startServer({
      modelRepository: repo.dir,
      modelControlMode: "explicit",
      loadModels: ["identity_fp32"],
      httpPort: 0,
      metricsPort: false,
      logger: silentLogger,
    });
    url = server.httpUrl;
  });

  after(async () => {
    await server?.close();
    repo?.remove();
    planted?.remove();
    if (outside) rmSync(outside, { recursive: true, force: true });
  });

  test("a model name that is not a direct child of the repository is unknown, whatever exists on disk", async () => {
    // Traversal to a loadable model, to a directory that exists, to one that does not, absolute paths,
    // backslashes, NUL, dot names, and a symlink out: the answer depends on the name alone, never on
    // what exists outside the repository.
    const depth = "..%2F".repeat(12);
    const names = [
      `${depth}${outside.slice(1).replaceAll("/", "%2F")}%2Fsrv%2Fplanted%2Fmodel`,
      `${depth}etc`,
      `${depth}${outside.slice(1).replaceAll("/", "%2F")}%2Fempty`,
      `${depth}no-such-directory`,
      "..",
      ".",
      "%2Fetc",
      `${outside.replaceAll("/", "%2F")}%2Fsrv%2Fplanted%2Fmodel`,
      "simple%2F..%2Fsimple",
      "simple%5C..%5Csimple",
      "simple%00",
      ".hidden",
      "escape",
    ];
    for (const encoded of names) {
      const name = decodeURIComponent(encoded);
      const load = await post(`/v2/repository/models/${encoded}/load`);
      // Triton's ValidateModelName refuses ".." and "/" from the name alone (400); any other name that is
      // not a model directory fails its poll as an absent name does (500).
      const [status, message] =
        name.includes("..") || name.includes("/")
          ? [400, `invalid model name '${name}', model name must not contain path traversal characters`]
          : [500, `failed to load '${name}', failed to poll from model repository`];
      assert.equal(load.status, status, `load ${name}: ${load.body.toString()}`);
      assert.equal(errorOf(load), message, name);
      const infer = await post(`/v2/models/${encoded}/infer`, { inputs: [] });
      assert.equal(infer.status, 404, `infer ${name}`);
      assert.equal(errorOf(infer), `Request for unknown model: '${name}' is not found`);
      assert.equal((await rawRequest(url, `/v2/models/${encoded}`)).status, 404, `metadata ${name}`);
      assert.equal((await rawRequest(url, `/v2/models/${encoded}/config`)).status, 404, `config ${name}`);
      assert.equal((await rawRequest(url, `/v2/models/${encoded}/ready`)).status, 400, `ready ${name}`);
      assert.equal((await rawRequest(url, `/v2/models/${encoded}/stats`)).status, 400, `stats ${name}`);
      // Unloading a name that is not loaded does nothing, as in Triton.
      const unload = await post(`/v2/repository/models/${encoded}/unload`);
      assert.equal(unload.status, 200, `unload ${name}`);
    }
    const index = JSON.parse((await post("/v2/repository/index")).body.toString()) as { name: string }[];
    assert.deepEqual(
      index.map((row) => row.name),
      ["alias", "identity_fp32", "simple"],
    );
  });

  test("a symlink to a model directory elsewhere inside the repository is a model", async () => {
    assert.equal((await post("/v2/repository/models/alias/load")).status, 200);
    assert.equal((await rawRequest(url, "/v2/models/alias/ready")).status, 200);
    assert.equal((await post("/v2/repository/models/alias/unload")).status, 200);
  });

  test("a config override cannot name a file outside the model's directory, and the served version stays", async () => {
    const secret = join(outside, "secret.txt");
    const refusals: [string, string, string][] = [
      // [what, override, message]
      [
        "label file by traversal",
        identityOverride({}, { label_filename: "../../../../../../../../../../etc/passwd" }),
        "label_filename '../../../../../../../../../../etc/passwd' of output 'OUTPUT0' of model 'identity_fp32' must name a file inside the model's directory, got '../../../../../../../../../../etc/passwd'",
      ],
      [
        "label file by absolute path",
        identityOverride({}, { label_filename: secret }),
        `label_filename '${secret}' of output 'OUTPUT0' of model 'identity_fp32' must name a file inside the model's directory, got '${secret}'`,
      ],
      [
        "label file through a symlink in the model directory",
        identityOverride({}, { label_filename: "labels.txt" }),
        "label_filename 'labels.txt' of output 'OUTPUT0' of model 'identity_fp32' must name a file inside the model's directory, got 'labels.txt'",
      ],
      [
        "model file outside (exists)",
        identityOverride({ default_model_filename: "../../simple/1/model.onnx" }),
        "default_model_filename '../../simple/1/model.onnx' of model 'identity_fp32' must name a file inside the model's directory, got '../../simple/1/model.onnx'",
      ],
      [
        "model file outside (absent): the same words",
        identityOverride({ default_model_filename: "../../absent/1/model.onnx" }),
        "default_model_filename '../../absent/1/model.onnx' of model 'identity_fp32' must name a file inside the model's directory, got '../../absent/1/model.onnx'",
      ],
      [
        "model file by absolute path",
        identityOverride({ default_model_filename: secret }),
        `default_model_filename '${secret}' of model 'identity_fp32' must name a file inside the model's directory, got '${secret}'`,
      ],
      [
        "cc_model_filenames outside",
        identityOverride({ cc_model_filenames: { "7.5": "../../../../etc/passwd" } }),
        "cc_model_filenames['7.5'] '../../../../etc/passwd' of model 'identity_fp32' must name a file inside the model's directory, got '../../../../etc/passwd'",
      ],
      [
        "warmup data file outside",
        identityOverride({
          model_warmup: [
            {
              name: "w",
              batch_size: 1,
              inputs: {
                INPUT0: { data_type: "TYPE_FP32", dims: ["1"], input_data_file: "../../../etc/passwd" },
              },
            },
          ],
        }),
        "input_data_file '../../../etc/passwd' of input 'INPUT0' of warmup 'w' of model 'identity_fp32' must name a file inside the model's directory, got '../../../etc/passwd'",
      ],
    ];
    for (const [what, config, message] of refusals) {
      const load = await post("/v2/repository/models/identity_fp32/load", { parameters: { config } });
      assert.equal(load.status, 400, `${what}: ${load.body.toString()}`);
      assert.equal(
        errorOf(load),
        `load failed for model 'identity_fp32': Invalid argument: ${message}`,
        what,
      );
      // The loaded version keeps serving, with its own config (no labels).
      assert.equal((await rawRequest(url, "/v2/models/identity_fp32/ready")).status, 200, what);
      const infer = await post("/v2/models/identity_fp32/infer", {
        inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 2], data: [1.5, -2] }],
      });
      assert.equal(infer.status, 200, `${what}: ${infer.body.toString()}`);
      const config2 = JSON.parse((await rawRequest(url, "/v2/models/identity_fp32/config")).body.toString());
      assert.equal(config2.output[0].label_filename, undefined, what);
    }
  });

  test("a reload that fails for any reason leaves the loaded version serving", async () => {
    const load = await post("/v2/repository/models/identity_fp32/load", {
      parameters: { config: identityOverride({ default_model_filename: "missing.onnx" }) },
    });
    assert.equal(load.status, 400, load.body.toString());
    assert.match(
      errorOf(load),
      /^load failed for model 'identity_fp32': version 1 is at UNAVAILABLE state: /,
    );
    assert.equal((await rawRequest(url, "/v2/models/identity_fp32/ready")).status, 200);
    const index = JSON.parse((await post("/v2/repository/index")).body.toString()) as {
      name: string;
      state?: string;
    }[];
    assert.equal(index.find((row) => row.name === "identity_fp32")?.state, "READY");
    // A good reload replaces it.
    assert.equal((await post("/v2/repository/models/identity_fp32/load")).status, 200);
    assert.equal((await rawRequest(url, "/v2/models/identity_fp32/ready")).status, 200);
  });

  test("file: overrides load a model from the request's files alone, confined to its directory", async () => {
    const model = readFileSync(bundledModelFile("simple")).toString("base64");
    const config = JSON.stringify({
      name: "uploaded",
      platform: "onnxruntime_onnx",
      max_batch_size: 8,
      input: [
        { name: "INPUT0", data_type: "TYPE_INT32", dims: ["16"] },
        { name: "INPUT1", data_type: "TYPE_INT32", dims: ["16"] },
      ],
      output: [
        { name: "OUTPUT0", data_type: "TYPE_INT32", dims: ["16"] },
        { name: "OUTPUT1", data_type: "TYPE_INT32", dims: ["16"] },
      ],
    });
    const noConfig = await post("/v2/repository/models/uploaded/load", {
      parameters: { "file:1/model.onnx": model },
    });
    assert.equal(noConfig.status, 400);
    assert.equal(errorOf(noConfig), "Load parameter 'config' must be specified for model file override");
    const escaped = await post("/v2/repository/models/uploaded/load", {
      parameters: { config, "file:1/../../../escaped.onnx": model },
    });
    assert.equal(escaped.status, 400);
    assert.match(
      errorOf(escaped),
      /^Invalid file parameter 'file:1\/\.\.\/\.\.\/\.\.\/escaped\.onnx' with normalized path '.*' must stay within model directory\.$/,
    );
    const overrides = () => readdirSync(tmpdir()).filter((n) => n.startsWith("tbench-override-")).length;
    const before = overrides();
    const load = await post("/v2/repository/models/uploaded/load", {
      parameters: { config, "file:1/model.onnx": model },
    });
    assert.equal(overrides(), before + 1, "the files live in a directory of their own while loaded");
    assert.equal(load.status, 200, load.body.toString());
    const ones = Array.from({ length: 16 }, () => 1);
    const infer = await post("/v2/models/uploaded/infer", {
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: ones },
        { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: ones },
      ],
    });
    assert.equal(infer.status, 200, infer.body.toString());
    assert.equal((await post("/v2/repository/models/uploaded/unload")).status, 200);
    assert.equal((await rawRequest(url, "/v2/models/uploaded/ready")).status, 400);
    assert.equal(overrides(), before, "unloading removes the override directory");
  });
});
