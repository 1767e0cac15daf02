import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ServerError } from "../core/server-error.js";
import {
  createFixtureRepository,
  createRecordingLogger,
  type FixtureRepository,
} from "../testing/test-fixtures.js";
import { createInferenceCore, type InferenceCoreHandle } from "./create-inference-core.js";

describe("inference core end to end (simple, auto-completed config)", () => {
  let repo: FixtureRepository;
  let core: InferenceCoreHandle;
  const logger = createRecordingLogger();

  before(async () => {
    repo = createFixtureRepository({ simple: {} });
    core = await createInferenceCore({ modelRepository: repo.dir, logger });
  });
  after(async () => {
    await core?.close();
    repo?.remove();
  });

  it("computes sum and difference for a batch of rows", async () => {
    const a = Int32Array.from({ length: 32 }, (_, i) => i * 3 - 7);
    const b = Int32Array.from({ length: 32 }, (_, i) => 100 - i);
    const response = await core.infer({
      model: "simple",
      id: "req-1",
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [2, 16], data: a },
        { name: "INPUT1", datatype: "INT32", shape: [2, 16], data: b },
      ],
    });
    assert.equal(response.model, "simple");
    assert.equal(response.version, "1");
    assert.equal(response.id, "req-1");
    const [sum, diff] = response.outputs;
    assert.deepEqual([sum?.name, diff?.name], ["OUTPUT0", "OUTPUT1"]);
    assert.deepEqual(sum?.shape, [2, 16]);
    assert.deepEqual(
      Array.from(sum?.data as Int32Array),
      Array.from(a, (x, i) => x + b[i]!),
    );
    assert.deepEqual(
      Array.from(diff?.data as Int32Array),
      Array.from(a, (x, i) => x - b[i]!),
    );
  });

  it("returns only the requested output", async () => {
    const response = await core.infer({
      model: "simple",
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: new Int32Array(16).fill(5) },
        { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: new Int32Array(16).fill(2) },
      ],
      outputs: [{ name: "OUTPUT1" }],
    });
    assert.deepEqual(
      response.outputs.map((o) => o.name),
      ["OUTPUT1"],
    );
    assert.deepEqual(Array.from(response.outputs[0]?.data as Int32Array), new Array(16).fill(3));
  });

  it("auto-completes the config from the ONNX model (max_batch_size 4, dynamic batching)", () => {
    const config = core.modelConfig("simple") as Record<string, unknown>;
    assert.equal(config["max_batch_size"], 4);
    assert.deepEqual(config["input"], [
      { name: "INPUT0", data_type: "TYPE_INT32", dims: ["16"] },
      { name: "INPUT1", data_type: "TYPE_INT32", dims: ["16"] },
    ]);
    assert.deepEqual(config["dynamic_batching"], { preferred_batch_size: [4] });
    assert.equal(config["platform"], "onnxruntime_onnx");
    assert.deepEqual(config["instance_group"], [{ name: "simple", kind: "KIND_CPU", count: 2 }]);
    assert.ok(logger.lines.includes("I successfully loaded 'simple' version 1"));
    assert.ok(logger.lines.some((l) => l.startsWith("W autofilled max_batch_size to 4 for model 'simple'")));
  });

  it("reports metadata, readiness and the repository index", async () => {
    assert.equal(core.isReady(), true);
    assert.equal(core.isModelReady("simple"), true);
    assert.equal(core.isModelReady("simple", "2"), false);
    assert.deepEqual(core.modelMetadata("simple"), {
      name: "simple",
      versions: ["1"],
      platform: "onnxruntime_onnx",
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [-1, 16] },
        { name: "INPUT1", datatype: "INT32", shape: [-1, 16] },
      ],
      outputs: [
        { name: "OUTPUT0", datatype: "INT32", shape: [-1, 16] },
        { name: "OUTPUT1", datatype: "INT32", shape: [-1, 16] },
      ],
    });
    assert.deepEqual(await core.repositoryIndex(), [
      { name: "simple", version: "1", state: "READY", reason: "" },
    ]);
  });

  it("answers unknown models and unknown versions with Triton's NOT_FOUND", async () => {
    await assert.rejects(core.infer({ model: "nope", inputs: [] }), {
      name: "ServerError",
      status: "NOT_FOUND",
      message: "Request for unknown model: 'nope' is not found",
    });
    await assert.rejects(core.infer({ model: "simple", version: "7", inputs: [] }), {
      status: "NOT_FOUND",
      message: "Request for unknown model: 'simple' version 7 is not found",
    });
    assert.throws(
      () => core.modelMetadata("nope"),
      (e: unknown) => e instanceof ServerError && e.status === "NOT_FOUND",
    );
    assert.throws(() => core.modelConfig("simple", "7"), { name: "ServerError", status: "NOT_FOUND" });
  });

  it("close() answers what is in flight, then refuses new requests and ends the workers", async () => {
    const inputs = [
      { name: "INPUT0", datatype: "INT32" as const, shape: [1, 16], data: new Int32Array(16).fill(1) },
      { name: "INPUT1", datatype: "INT32" as const, shape: [1, 16], data: new Int32Array(16).fill(1) },
    ];
    const inFlight = Array.from({ length: 6 }, () => core.infer({ model: "simple", inputs }));
    const closing = core.close();
    const responses = await Promise.all(inFlight);
    await closing;
    assert.equal(responses.length, 6);
    assert.equal(core.isLive(), false);
    await assert.rejects(core.infer({ model: "simple", inputs }), { status: "UNAVAILABLE" });
    assert.ok(logger.lines.includes("I successfully unloaded 'simple' version 1"));
    await core.close();
  });
});
