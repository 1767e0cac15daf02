/**
 * Repository rules through the real core: version policies, bad configs that leave one model UNAVAILABLE
 * with Triton's reason while the others serve, auto-complete, explicit model control.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createInferenceCore, type InferenceCoreHandle } from "../lifecycle/create-inference-core.js";
import {
  bundledConfig,
  createFixtureRepository,
  createRecordingLogger,
  type FixtureRepository,
} from "../testing/test-fixtures.js";

/** The bundled `simple` config with one instance, renamed and edited. */
function simpleConfig(name: string, edit: (text: string) => string = (t) => t): string {
  const base = bundledConfig("simple").replace('name: "simple"', `name: "${name}"`);
  return edit(`${base}\ninstance_group [ { count: 1, kind: KIND_CPU } ]\n`);
}

const policy = (name: string, text: string) => simpleConfig(name, (t) => `${t}\nversion_policy: ${text}\n`);

describe("repository loading", () => {
  let repo: FixtureRepository;
  let core: InferenceCoreHandle;
  const logger = createRecordingLogger();

  before(async () => {
    repo = createFixtureRepository({
      latest1: {
        from: "simple",
        config: simpleConfig("latest1"),
        versions: [1, 2, 3],
        extraDirs: ["abc", "04"],
      },
      latest2: {
        from: "simple",
        config: policy("latest2", "{ latest { num_versions: 2 } }"),
        versions: [1, 2, 3],
      },
      all: { from: "simple", config: policy("all", "{ all { } }"), versions: [1, 2] },
      specific: {
        from: "simple",
        config: policy("specific", "{ specific { versions: [1, 3, 5] } }"),
        versions: [1, 2, 3],
      },
      misnamed: { from: "simple", config: simpleConfig("other") },
      negative_batch: {
        from: "simple",
        config: simpleConfig("negative_batch", (t) => t.replace("max_batch_size: 8", "max_batch_size: -1")),
      },
      big_preferred: {
        from: "simple",
        config: simpleConfig(
          "big_preferred",
          (t) => `${t}\ndynamic_batching { preferred_batch_size: [ 4, 16 ] }\n`,
        ),
      },
      wrong_type: {
        from: "simple",
        config: simpleConfig("wrong_type", (t) => t.replace("TYPE_INT32", "TYPE_FP32")),
      },
      wrong_dims: {
        from: "simple",
        config: simpleConfig("wrong_dims", (t) => t.replace("dims: [ 16 ]", "dims: [ 8 ]")),
      },
      wrong_name: {
        from: "simple",
        config: simpleConfig("wrong_name", (t) => t.replace('"INPUT1"', '"INPUTX"')),
      },
      no_batching: {
        from: "simple",
        config: simpleConfig("no_batching", (t) => t.replace("max_batch_size: 8", "max_batch_size: 0")),
      },
      python: { from: "simple", config: 'name: "python"\nbackend: "python"\n' },
      ragged: {
        from: "simple",
        config: simpleConfig("ragged", (t) =>
          t.replace("dims: [ 16 ]", "dims: [ 16 ]\n    allow_ragged_batch: true"),
        ),
      },
      sequence: {
        from: "simple",
        config: simpleConfig(
          "sequence",
          (t) => `${t}\nsequence_batching { max_sequence_idle_microseconds: 5000000 }\n`,
        ),
      },
      broken_text: { from: "simple", config: 'name: "broken_text"\nmax_batch_size: [\n' },
      no_versions: { from: "simple", config: simpleConfig("no_versions"), versions: [] },
      autocompleted: { from: "simple" },
      ensemble_pipeline: {
        from: "simple",
        config: bundledConfig("ensemble_pipeline"),
        versions: [],
        extraDirs: ["1"],
      },
    });
    core = await createInferenceCore({ modelRepository: repo.dir, logger, strictReadiness: false });
  });
  after(async () => {
    await core?.close();
    repo?.remove();
  });

  const states = async (name: string) =>
    (await core.repositoryIndex()).filter((row) => row.name === name).map((row) => [row.version, row.state]);
  const reason = async (name: string) =>
    (await core.repositoryIndex()).find((row) => row.name === name)?.reason;

  it("loads the versions each version policy selects", async () => {
    assert.deepEqual(await states("latest1"), [["3", "READY"]]);
    assert.deepEqual(await states("latest2"), [
      ["2", "READY"],
      ["3", "READY"],
    ]);
    assert.deepEqual(await states("all"), [
      ["1", "READY"],
      ["2", "READY"],
    ]);
    assert.deepEqual(await states("specific"), [
      ["1", "READY"],
      ["3", "READY"],
    ]);
    assert.deepEqual(core.modelMetadata("latest2").versions, ["2", "3"]);
    assert.ok(
      logger.lines.includes(
        "W ignore version directory 'abc' of 'latest1' which fails to convert to integral number",
      ),
    );
    assert.ok(
      logger.lines.includes(
        "W ignore version directory '04' of 'latest1' which contains leading zeros in its directory name",
      ),
    );
    assert.ok(
      logger.lines.includes(
        "E version 5 is specified for model 'specific', but the version directory is not present",
      ),
    );
  });

  it("serves the latest ready version by default and a named one on request", async () => {
    const inputs = [
      { name: "INPUT0", datatype: "INT32" as const, shape: [1, 16], data: new Int32Array(16).fill(4) },
      { name: "INPUT1", datatype: "INT32" as const, shape: [1, 16], data: new Int32Array(16).fill(1) },
    ];
    assert.equal((await core.infer({ model: "latest2", inputs })).version, "3");
    assert.equal((await core.infer({ model: "latest2", version: "2", inputs })).version, "2");
    await assert.rejects(core.infer({ model: "latest2", version: "1", inputs }), {
      status: "NOT_FOUND",
      message: "Request for unknown model: 'latest2' version 1 is not found",
    });
  });

  it("marks bad configs UNAVAILABLE with Triton's reasons", async () => {
    assert.equal(
      await reason("misnamed"),
      "Invalid argument: unexpected directory name 'misnamed' for model 'other', directory name must equal model name",
    );
    assert.equal(
      await reason("negative_batch"),
      "Invalid argument: 'max_batch_size' must be non-negative value for negative_batch",
    );
    assert.equal(
      await reason("big_preferred"),
      "Invalid argument: dynamic batching preferred size must be <= max batch size for big_preferred",
    );
    assert.match(
      (await reason("python")) ?? "",
      /^Invalid argument: unable to find backend library for backend 'python'/,
    );
    assert.match(
      (await reason("broken_text")) ?? "",
      // The codec's own message, naming file, line and column.
      /^Invalid argument: failed to read text proto from (.*config\.pbtxt): \1:2:17: field "max_batch_size" is not repeated/,
    );
    assert.equal(
      await reason("no_versions"),
      "Invalid argument: at least one version must be available under the version policy of model 'no_versions'",
    );
    assert.deepEqual(await states("misnamed"), [[undefined, "UNAVAILABLE"]]);
  });

  it("serves a model with sequence_batching when its config and model agree, and keeps every other model serving", async () => {
    // The fixture is simple's file with sequence_batching and no controls or states: a stateless model
    // under the sequence batcher, which Triton serves too.
    assert.deepEqual(await states("sequence"), [["1", "READY"]]);
    assert.equal(core.isModelReady("sequence"), true);
    assert.equal(core.isModelReady("latest1"), true);
  });

  it("refuses allow_ragged_batch (batches would be built from the first request's shape)", async () => {
    assert.deepEqual(await states("ragged"), [[undefined, "UNAVAILABLE"]]);
    assert.equal(
      await reason("ragged"),
      "Unsupported: input 'INPUT0' of model 'ragged' sets allow_ragged_batch, and ragged batching is not " +
        "supported by tbench-server",
    );
    assert.equal(core.isModelReady("ragged"), false);
  });

  it("checks the config against the ONNX model with Triton's messages", async () => {
    assert.equal(
      await reason("wrong_type"),
      "Invalid argument: unable to load model 'wrong_type', configuration expects datatype TYPE_FP32 for input 'INPUT0', model provides TYPE_INT32",
    );
    assert.equal(
      await reason("wrong_dims"),
      "Invalid argument: model 'wrong_dims', tensor 'INPUT0': the model expects 2 dimensions (shape [-1,16]) but the " +
        "model configuration specifies 2 dimensions (an initial batch dimension because max_batch_size > 0 followed by " +
        "the explicit tensor shape, making complete shape [-1,8])",
    );
    assert.equal(
      await reason("wrong_name"),
      "Invalid argument: unexpected inference input 'INPUTX', allowed inputs are: INPUT0, INPUT1",
    );
    assert.equal(
      await reason("no_batching"),
      "Invalid argument: model 'no_batching', tensor 'INPUT0': the model expects 2 dimensions (shape [-1,16]) but the " +
        "model configuration specifies 1 dimensions (shape [16])",
    );
    assert.ok(
      logger.lines.some((l) => l.startsWith("E failed to load 'wrong_type' version 1: Invalid argument: ")),
    );
  });

  it("an ensemble whose members are not in the repository is UNAVAILABLE with Triton's reason", async () => {
    const [row] = (await core.repositoryIndex()).filter((r) => r.name === "ensemble_pipeline");
    assert.equal(row?.state, "UNAVAILABLE");
    assert.equal(
      row?.reason,
      "Invalid argument: ensemble ensemble_pipeline contains models that are not available or ambiguous: resnet_like",
    );
  });

  it("auto-completes a model without config.pbtxt and keeps every other model serving", async () => {
    assert.deepEqual(await states("autocompleted"), [["1", "READY"]]);
    assert.equal((core.modelConfig("autocompleted") as { max_batch_size?: number }).max_batch_size, 4);
    assert.equal(core.isModelReady("latest1"), true);
    assert.equal(core.isReady(), true, "not strict: ready although some models failed");
  });
});

describe("model control", () => {
  let repo: FixtureRepository;
  before(() => {
    repo = createFixtureRepository({
      simple: { config: simpleConfig("simple") },
      plain: { from: "simple" },
      bad: { from: "simple", config: simpleConfig("other") },
      gpu: {
        from: "simple",
        config:
          bundledConfig("simple").replace('name: "simple"', 'name: "gpu"') +
          "\ninstance_group [ { kind: KIND_GPU } ]\n",
      },
    });
  });
  after(() => repo?.remove());

  it("explicit mode loads only the named models; loadModel and unloadModel work by name", async () => {
    const core = await createInferenceCore({
      modelRepository: repo.dir,
      modelControlMode: "explicit",
      loadModels: ["simple"],
      logger: createRecordingLogger(),
    });
    try {
      assert.deepEqual(await core.repositoryIndex(), [
        { name: "bad" },
        { name: "gpu" },
        { name: "plain" },
        { name: "simple", version: "1", state: "READY", reason: "" },
      ]);
      assert.equal(core.isReady(), true);
      await core.loadModel("plain");
      assert.equal(core.isModelReady("plain"), true);
      await assert.rejects(core.loadModel("bad"), {
        status: "INVALID_ARG",
        message: /^load failed for model 'bad'/,
      });
      await core.unloadModel("plain");
      assert.equal(core.isModelReady("plain"), false);
      assert.deepEqual(
        (await core.repositoryIndex({ readyOnly: true })).map((r) => r.name),
        ["simple"],
      );
      const plain = (await core.repositoryIndex()).find((r) => r.name === "plain");
      assert.deepEqual(plain, { name: "plain", version: "1", state: "UNAVAILABLE", reason: "unloaded" });
    } finally {
      await core.close();
    }
  });

  it("a config override (JSON) is checked against the ModelConfig schema and read as config.pbtxt is", async () => {
    const core = await createInferenceCore({
      modelRepository: repo.dir,
      modelControlMode: "explicit",
      logger: createRecordingLogger(),
    });
    try {
      // proto3 JSON allows numbers for 64-bit fields; the core keeps the parsed form (decimal strings).
      const override = {
        name: "plain",
        max_batch_size: 8,
        dynamic_batching: { max_queue_delay_microseconds: 100 },
        instance_group: [{ count: 1, kind: "KIND_CPU" }],
      };
      await core.loadModel("plain", { config: JSON.stringify(override) });
      assert.equal(core.isModelReady("plain"), true);
      assert.deepEqual(core.modelConfig("plain").dynamic_batching, {
        max_queue_delay_microseconds: "100",
        preferred_batch_size: [8],
      });
      await assert.rejects(core.loadModel("plain", { config: '{"name": "plain", "input": 5}' }), {
        status: "INVALID_ARG",
        message:
          "failed to parse the config override of model 'plain': input: expected an array for repeated field, got number 5",
      });
      await assert.rejects(core.loadModel("plain", { config: "{" }), {
        status: "INVALID_ARG",
        message: /^failed to parse the config override of model 'plain': SyntaxError/,
      });
      // A 64-bit value a JavaScript number cannot hold exactly is refused, not rounded.
      const huge = {
        ...override,
        dynamic_batching: { max_queue_delay_microseconds: "18446744073709551615" },
      };
      await assert.rejects(core.loadModel("plain", { config: JSON.stringify(huge) }), {
        status: "INVALID_ARG",
        message:
          "load failed for model 'plain': version 1 is at UNAVAILABLE state: Invalid argument: " +
          "max_queue_delay_microseconds is 18446744073709551615, expected an integer of magnitude at most 9007199254740991;",
      });
    } finally {
      await core.close();
    }
  });

  it("strict readiness: not ready while a startup model failed; disableAutoCompleteConfig leaves IO empty", async () => {
    const core = await createInferenceCore({
      modelRepository: repo.dir,
      modelControlMode: "explicit",
      loadModels: ["plain", "bad"],
      disableAutoCompleteConfig: true,
      logger: createRecordingLogger(),
    });
    try {
      assert.equal(core.isReady(), false);
      const plain = (await core.repositoryIndex()).find((r) => r.name === "plain");
      assert.equal(
        plain?.reason,
        "Invalid argument: unable to load model 'plain', configuration expects 0 inputs, model provides 2",
      );
    } finally {
      await core.close();
    }
  });

  it("KIND_GPU asking for CUDA without it falls back to CPU with one clear log line", async () => {
    const logger = createRecordingLogger();
    const core = await createInferenceCore({
      modelRepository: repo.dir,
      modelControlMode: "explicit",
      loadModels: ["gpu"],
      gpuExecutionProvider: "cuda",
      logger,
    });
    try {
      assert.equal(core.isModelReady("gpu"), true);
      const fallback = logger.lines.filter((l) => l.startsWith("W "));
      assert.equal(fallback.length, 1);
      assert.match(
        fallback[0]!,
        /^W model 'gpu' version 1 asked for KIND_GPU \(--gpu-execution-provider cuda\) but no GPU execution provider could start, so instance gpu_0_0 \(GPU 0\) runs on CPU: CUDA \(device 0\): /,
      );
      const groups = (core.modelConfig("gpu") as { instance_group?: unknown }).instance_group;
      assert.deepEqual(groups, [{ kind: "KIND_GPU", name: "gpu_0", count: 1, gpus: [0] }]);
    } finally {
      await core.close();
    }
  });

  it("exitOnError rejects startup when a model fails", async () => {
    await assert.rejects(
      createInferenceCore({
        modelRepository: repo.dir,
        modelControlMode: "explicit",
        loadModels: ["bad"],
        exitOnError: true,
        logger: createRecordingLogger(),
      }),
      { status: "INTERNAL", message: "failed to load all models: 'bad'" },
    );
  });
});
