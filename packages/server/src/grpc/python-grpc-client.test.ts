// tbench-server judged by a gRPC client we did not write: Python's grpcio (Debian's python3-grpcio) with
// message classes that protoc generates at test time from proto/*.proto (Debian's python3-protobuf 3.21
// matches Debian 12's protoc 3.21). The probe (testing/python-grpc-probe.py, our own script) calls every
// RPC through grpc.insecure_channel with the classes' SerializeToString / FromString and prints JSON; the
// assertions here hold its answers to Triton's. NVIDIA's own tritonclient.grpc is a thin layer over these
// same two libraries and the same generated classes, but it comes from pip, which this machine cannot
// reach: this is the closest stand-in. Skipped without python3-grpcio / python3-protobuf or protoc, except
// under .ci/run, which installs them and requires them (scripts/system-tools.ts).
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { BUNDLED_MODEL_REPOSITORY } from "@tbench/model-builder";
import { assertSystemTool, PYTHON_WITH_GRPC, skipWithout } from "../../../../scripts/testing/system-tools.js";
import { silentLogger } from "../core/logger.js";
import { type RunningServer, startServer } from "../server.js";
import { createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";

const PYTHON = PYTHON_WITH_GRPC;
const protoDir = fileURLToPath(new URL("../../../../proto/", import.meta.url));
const probeScript = fileURLToPath(new URL("../testing/python-grpc-probe.py", import.meta.url));

// biome-ignore lint/suspicious/noExplicitAny: the probe's JSON is read field by field in the assertions
type Any = Record<string, any>;

function generatePythonClasses(dir: string): void {
  const result = spawnSync(
    "protoc",
    [
      `--proto_path=${protoDir}`,
      `--python_out=${dir}`,
      "grpc_service.proto",
      "health.proto",
      "model_config.proto",
    ],
    { encoding: "utf8" },
  );
  if (result.error)
    throw new Error(`protoc is required (apt-get install protobuf-compiler): ${result.error.message}`);
  assert.equal(result.status, 0, `protoc --python_out failed: ${result.stderr}`);
}

const range = (n: number, f: (i: number) => number): number[] => Array.from({ length: n }, (_, i) => f(i));

describe("a Python grpcio client against tbench-server", {
  timeout: 120_000,
  skip: skipWithout("python3-grpcio", "protoc"),
}, () => {
  let repo: FixtureRepository;
  let server: RunningServer;
  let genDir: string;
  let probe: Any;

  before(async () => {
    assertSystemTool("python3-grpcio");
    genDir = mkdtempSync(join(tmpdir(), "tbench-pygen-"));
    generatePythonClasses(genDir);
    repo = createFixtureRepository({
      simple: { config: "bundled" },
      identity_bytes: { config: "bundled" },
      sequence_accumulator: { config: "bundled" },
      sequence_controls: { config: "bundled" },
      char_generator: {
        config: "bundled",
        extraFiles: {
          "tokenizer.json": readFileSync(
            join(BUNDLED_MODEL_REPOSITORY, "char_generator", "tokenizer.json"),
            "utf8",
          ),
        },
      },
    });
    server = await startServer({
      modelRepository: repo.dir,
      httpPort: 0,
      metricsPort: false,
      grpcPort: 0,
      logger: silentLogger,
    });
    // Asynchronous on purpose: the server answers from this process's event loop while Python runs.
    const { stdout, stderr } = await promisify(execFile)(
      PYTHON,
      [probeScript, "--address", server.grpcAddress ?? "", "--gen-dir", genDir],
      { timeout: 90_000, maxBuffer: 16 * 1024 * 1024 },
    ).catch((error: Error & { stdout?: string; stderr?: string }) => {
      throw new Error(`the Python probe failed: ${error.message}\n${error.stderr ?? ""}`);
    });
    try {
      probe = JSON.parse(stdout) as Any;
    } catch {
      throw new Error(`the Python probe printed no JSON:\n${stdout}\n${stderr}`);
    }
  });
  after(async () => {
    await server?.close();
    repo?.remove();
    if (genDir) rmSync(genDir, { recursive: true, force: true });
  });

  /** A step's answer; a step that raised in Python fails here with its traceback. */
  const answer = (step: string): Any => {
    const result = probe[step] as Any | undefined;
    assert.ok(result, `the probe has no result for ${step}`);
    assert.equal(result["exception"], undefined, `${step} raised in Python:\n${result["exception"]}`);
    return result;
  };
  const error = (step: string): Any => {
    const result = answer(step);
    assert.ok(result["error"], `${step} should have failed, answered ${JSON.stringify(result)}`);
    return result["error"] as Any;
  };

  test("the client is Debian's grpcio with protobuf 3.21 (4.21 as the Python package counts)", () => {
    assert.match(probe["versions"].protobuf, /^4\.21\./);
    assert.ok(probe["versions"].grpcio);
  });

  test("ServerLive, ServerReady and grpc.health.v1.Health/Check", () => {
    assert.deepEqual(answer("server_live"), { live: true });
    assert.deepEqual(answer("server_ready"), { ready: true });
    assert.deepEqual(answer("health_check"), { status: "SERVING" });
  });

  test("ServerMetadata names the server, its version and the extensions it serves", () => {
    const metadata = answer("server_metadata");
    // Triton answers name "triton"; tbench-server names itself (README, HTTP API table).
    assert.equal(metadata["name"], "tbench-server");
    assert.match(metadata["version"], /^\d+\.\d+\.\d+/);
    for (const extension of [
      "classification",
      "model_repository",
      "schedule_policy",
      "statistics",
      "binary_tensor_data",
    ])
      assert.ok(metadata["extensions"].includes(extension), `extension ${extension}`);
  });

  test("ServerMetadata lists model_configuration and parameters, as Triton does", () => {
    const metadata = answer("server_metadata");
    for (const extension of ["model_configuration", "parameters"])
      assert.ok(metadata["extensions"].includes(extension), `extension ${extension}`);
  });

  test("ModelMetadata, ModelConfig and ModelReady of simple; an unknown model", () => {
    assert.deepEqual(answer("model_metadata"), {
      name: "simple",
      versions: ["1"],
      platform: "onnxruntime_onnx",
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: ["-1", "16"] },
        { name: "INPUT1", datatype: "INT32", shape: ["-1", "16"] },
      ],
      outputs: [
        { name: "OUTPUT0", datatype: "INT32", shape: ["-1", "16"] },
        { name: "OUTPUT1", datatype: "INT32", shape: ["-1", "16"] },
      ],
    });
    assert.deepEqual(error("model_metadata_unknown"), {
      code: "NOT_FOUND",
      details: "Request for unknown model: 'nope' is not found",
    });
    // Before issue 36 the whole name went into grpc-message, past grpcio's metadata limit.
    assert.deepEqual(error("model_metadata_long_name"), {
      code: "NOT_FOUND",
      details: `Request for unknown model: '${"m".repeat(256)}… (1048576 characters)' is not found`,
    });
    const config = answer("model_config")["config"] as Any;
    assert.equal(config["name"], "simple");
    assert.equal(config["platform"], "onnxruntime_onnx");
    assert.equal(config["max_batch_size"], 8);
    assert.deepEqual(
      config["input"].map((i: Any) => [i.name, i.data_type, i.dims]),
      [
        ["INPUT0", "TYPE_INT32", ["16"]],
        ["INPUT1", "TYPE_INT32", ["16"]],
      ],
    );
    assert.deepEqual(answer("model_ready"), { ready: true });
    // Triton's ModelReady answers ready=false, not an error, for an unknown model.
    assert.deepEqual(answer("model_ready_unknown"), { ready: false });
  });

  test("ModelInfer with raw contents: every output in raw_output_contents, values checked", () => {
    const result = answer("infer_raw");
    assert.equal(result["model_name"], "simple");
    assert.equal(result["model_version"], "1");
    assert.equal(result["id"], "py-raw");
    assert.deepEqual(
      (result["outputs"] as Any[]).map((o) => [o.name, o.datatype, o.shape, o.raw]),
      [
        ["OUTPUT0", "INT32", [1, 16], range(16, (i) => i + 1)],
        ["OUTPUT1", "INT32", [1, 16], range(16, (i) => i - 1)],
      ],
    );
  });

  test("ModelInfer with typed contents: answered in raw_output_contents, as Triton answers", () => {
    const result = answer("infer_typed");
    assert.equal(result["id"], "py-typed");
    assert.equal(result["raw_output_count"], 1);
    assert.deepEqual(result["outputs"], [
      { name: "OUTPUT1", datatype: "INT32", shape: [1, 16], raw: range(16, (i) => 2 * i) },
    ]);
    const bytes = answer("infer_bytes_typed");
    assert.deepEqual(
      (bytes["outputs"] as Any[]).map((o) => [o.datatype, o.shape, o.raw]),
      [["BYTES", [1, 3], ["alpha", "", "été"]]],
    );
  });

  test("ModelInfer on an unknown model: NOT_FOUND with Triton's message", () => {
    assert.deepEqual(error("infer_unknown_model"), {
      code: "NOT_FOUND",
      details: "Request for unknown model: 'nope' is not found",
    });
  });

  test("ModelStreamInfer: three requests, one bad, each answered once with its id; the stream ends OK", () => {
    const stream = answer("stream");
    assert.equal(stream["code"], "OK");
    const responses = stream["responses"] as Any[];
    assert.deepEqual(responses.map((r) => r["id"]).sort(), ["s-1", "s-2", "s-3"]);
    const byId = new Map(responses.map((r) => [r["id"] as string, r]));
    const first = byId.get("s-1");
    assert.equal(first?.["error_message"], "");
    assert.deepEqual(
      first?.["outputs"][0].raw,
      range(16, (i) => i + 1),
    );
    assert.deepEqual(
      first?.["outputs"][1].raw,
      range(16, (i) => i - 1),
    );
    // Triton's stream handler clears the response, sets error_message and puts back the request's id.
    const bad = byId.get("s-2");
    assert.equal(bad?.["error_message"], "Request for unknown model: 'nope' is not found");
    assert.equal(bad?.["has_infer_response"], true);
    assert.equal(bad?.["model_name"], "");
    assert.deepEqual(bad?.["outputs"], []);
    const third = byId.get("s-3");
    assert.equal(third?.["error_message"], "");
    assert.deepEqual(
      third?.["outputs"][0].raw,
      range(16, (i) => 10 + i),
    );
    assert.deepEqual(
      third?.["outputs"][1].raw,
      range(16, (i) => 10 - i),
    );
  });

  // Triton queues every request of a stream to a non-decoupled model for its answer in arrival order
  // (stream_infer_handler.cc EnqueueForResponse), error answers included.
  test("ModelStreamInfer answers in request order, as Triton does for a non-decoupled model", () => {
    const responses = answer("stream")["responses"] as Any[];
    assert.deepEqual(
      responses.map((r) => r["id"]),
      ["s-1", "s-2", "s-3"],
    );
  });

  test("stateful models: running sums over the stream (int64 id) and unary calls (string id); controls; no START", () => {
    assert.deepEqual(answer("sequence_stream"), { sums: [4, 9, 15] });
    assert.deepEqual(answer("sequence_string_id"), { sums: [100, 101, 103] });
    assert.deepEqual(answer("sequence_controls"), {
      OUTPUT: 9,
      OUT_START: 1,
      OUT_END: 1,
      OUT_READY: 1,
      OUT_CORRID: String(2n ** 63n + 5n),
    });
    assert.deepEqual(error("sequence_no_start"), {
      code: "INVALID_ARGUMENT",
      details:
        "inference request for sequence 424242 to model 'sequence_accumulator' must specify the START flag on the first request of the sequence",
    });
  });

  // The generator sends its last token with the final flag, so the empty final response asked for is
  // not sent: Triton sends one only for a final flag that comes without a response.
  test("a decoupled model: a response per token on the stream, the last one final; ModelInfer refused", () => {
    assert.deepEqual(answer("decoupled_stream"), {
      answers: ["p", "q", "r", "s"].map((text, i) => ({ id: "py-gen", text, final: i === 3, error: "" })),
    });
    assert.deepEqual(error("decoupled_unary"), {
      code: "UNIMPLEMENTED",
      details: "ModelInfer RPC doesn't support models with decoupled transaction policy",
    });
  });

  test("RepositoryIndex and RepositoryModelLoad outside explicit mode", () => {
    assert.deepEqual(answer("repository_index"), {
      models: [
        { name: "char_generator", version: "1", state: "READY" },
        { name: "identity_bytes", version: "1", state: "READY" },
        { name: "sequence_accumulator", version: "1", state: "READY" },
        { name: "sequence_controls", version: "1", state: "READY" },
        { name: "simple", version: "1", state: "READY" },
      ],
    });
    assert.deepEqual(error("repository_load_not_explicit"), {
      code: "UNAVAILABLE",
      details: "explicit model load / unload is not allowed if polling is enabled",
    });
  });

  test("ModelStatistics counts what the probe sent; an unknown model is INVALID_ARGUMENT", () => {
    const [stats, ...others] = answer("model_statistics")["model_stats"] as Any[];
    assert.equal(others.length, 0);
    assert.equal(stats?.["name"], "simple");
    assert.equal(stats?.["version"], "1");
    // infer_raw, infer_typed and the two good stream requests: 4 successes of batch size 1.
    assert.equal(stats?.["inference_count"], "4");
    assert.equal(stats?.["inference_stats"].success.count, "4");
    assert.ok(Number(stats?.["last_inference"]) > 0);
    assert.deepEqual(error("model_statistics_unknown"), {
      code: "INVALID_ARGUMENT",
      details: "requested model 'nope' is not available",
    });
  });
});
