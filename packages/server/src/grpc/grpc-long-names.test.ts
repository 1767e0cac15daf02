// Issue 36 item 1: a 1 MiB model name (or any long client text) on every RPC that takes one. The error
// echoes the name cut short (core/echo-text.ts) inside Triton's words, the grpc-message stays bounded, and
// the connection serves on: before, the 1 MiB trailer was an HPACK COMPRESSION_ERROR on the client, which
// left that call and every later call on the same channel without an answer.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as grpcJs from "@grpc/grpc-js";
import { GRPC_STATUS } from "@tbench/proto";
import { DEFAULT_MAX_BYTES_TENSOR_ELEMENTS } from "../core/bytes-data.js";
import { MAX_ECHO_CHARS } from "../core/echo-text.js";
import { silentLogger } from "../core/logger.js";
import { createInferenceCore, type InferenceCoreHandle } from "../lifecycle/create-inference-core.js";
import { type Any, createTestClient, unary } from "../testing/grpc-test-client.js";
import { createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";
import { MAX_GRPC_MESSAGE_BYTES } from "./client-text.js";
import { createGrpcFrontEnd, type GrpcFrontEnd } from "./grpc-front-end.js";

const MIB = 1 << 20;
const BIG = "m".repeat(MIB);
const A = Array.from({ length: 16 }, (_, i) => i);
const RAW = new Uint8Array(new Int32Array(A).buffer);
const INPUT = (name: string) => ({ name, datatype: "INT32", shape: [1, 16] });
const GOOD = {
  model_name: "simple",
  inputs: [INPUT("INPUT0"), INPUT("INPUT1")],
  raw_input_contents: [RAW, RAW],
};
/** Generous: a wedged call fails at its deadline; an answered one never comes near it. */
const DEADLINE_MS = 20_000;

const deadline = () => ({ deadline: Date.now() + DEADLINE_MS });
const cut = (text: string) => `${text.slice(0, MAX_ECHO_CHARS)}… (${text.length} characters)`;

describe("gRPC: long client text in errors", { timeout: 180_000 }, () => {
  let repo: FixtureRepository;
  let core: InferenceCoreHandle;
  let front: GrpcFrontEnd;
  let client: Any & grpcJs.Client;

  const outcome = (method: string, request: Any) =>
    unary(client, method, request, deadline()).then(
      (response) => ({ code: GRPC_STATUS.OK as number, details: "", response }),
      (error: grpcJs.ServiceError) => ({ code: error.code, details: error.details, response: undefined }),
    );

  /** 50 ordinary calls on the same channel, all answered with their sums. */
  const stillServing = async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, () => outcome("ModelInfer", GOOD)));
    const codes = answers.map((a) => a.code);
    assert.deepEqual(codes, Array(50).fill(GRPC_STATUS.OK), `statuses: ${[...new Set(codes)].join(", ")}`);
  };

  before(async () => {
    repo = createFixtureRepository({ simple: { config: "bundled" } });
    core = await createInferenceCore({
      modelRepository: repo.dir,
      modelControlMode: "explicit",
      loadModels: ["simple"],
      logger: silentLogger,
    });
    front = await createGrpcFrontEnd({
      core,
      port: 0,
      logger: silentLogger,
      maxBytesTensorElements: DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
    });
    client = createTestClient(front.address);
  });
  after(async () => {
    client.close();
    await front.close();
    await core.close();
    repo.remove();
  });

  const unknownModel = `Request for unknown model: '${cut(BIG)}' is not found`;
  const cases: [string, string, Any, number, string | RegExp][] = [
    ["ModelInfer", "model_name", {}, GRPC_STATUS.NOT_FOUND, unknownModel],
    ["ModelMetadata", "name", {}, GRPC_STATUS.NOT_FOUND, unknownModel],
    ["ModelConfig", "name", {}, GRPC_STATUS.NOT_FOUND, unknownModel],
    [
      "ModelStatistics",
      "name",
      {},
      GRPC_STATUS.INVALID_ARGUMENT,
      `requested model '${cut(BIG)}' is not available`,
    ],
    [
      "RepositoryModelLoad",
      "model_name",
      {},
      GRPC_STATUS.INTERNAL,
      new RegExp(`'${cut(BIG).replace(/[()]/g, "\\$&")}'`),
    ],
    ["RepositoryModelUnload", "model_name", {}, GRPC_STATUS.OK, ""],
  ];
  for (const [method, field, extra, code, details] of cases) {
    test(`${method} with a 1 MiB ${field}: answered, bounded, and the channel serves on`, async () => {
      const answer = await outcome(method, { ...extra, [field]: BIG });
      assert.equal(answer.code, code, answer.details.slice(0, 200));
      if (typeof details === "string") assert.equal(answer.details, details);
      else assert.match(answer.details, details);
      assert.ok(encodeURI(answer.details).length <= MAX_GRPC_MESSAGE_BYTES);
      await stillServing();
    });
  }

  test("ModelInfer with 1 MiB input name, version and id: each echo cut", async () => {
    const input = await outcome("ModelInfer", { ...GOOD, inputs: [INPUT(BIG), INPUT("INPUT1")] });
    assert.equal(input.code, GRPC_STATUS.INVALID_ARGUMENT);
    assert.ok(input.details.includes(cut(BIG)), input.details.slice(0, 300));
    assert.ok(!input.details.includes(BIG.slice(0, MAX_ECHO_CHARS + 1)));
    const version = await outcome("ModelInfer", { ...GOOD, model_version: `x${BIG}` });
    assert.equal(version.code, GRPC_STATUS.INVALID_ARGUMENT);
    assert.equal(
      version.details,
      `failed to get model version from specified version string '${cut(`x${BIG}`)}' (details: stol), ` +
        "version should be an integral value > 0",
    );
    await stillServing();
  });

  test("a name of 3-byte characters: the percent-encoded grpc-message stays bounded", async () => {
    const euros = "€".repeat(MIB / 2);
    const answer = await outcome("ModelMetadata", { name: euros });
    assert.equal(answer.code, GRPC_STATUS.NOT_FOUND);
    assert.equal(answer.details, `Request for unknown model: '${cut(euros)}' is not found`);
    assert.ok(encodeURI(answer.details).length <= MAX_GRPC_MESSAGE_BYTES);
    await stillServing();
  });

  test("ModelStreamInfer with a 1 MiB model name: error_message cut, the stream and channel serve on", async () => {
    const stream = client.ModelStreamInfer(new grpcJs.Metadata(), deadline()) as grpcJs.ClientDuplexStream<
      Any,
      Any
    >;
    const answers: Any[] = [];
    const ended = new Promise<{ code: number; details: string }>((resolve) => {
      stream.on("data", (a: Any) => answers.push(a));
      stream.on("error", (e: grpcJs.ServiceError) => resolve({ code: e.code, details: e.details }));
      stream.on("status", (s: grpcJs.StatusObject) => resolve({ code: s.code, details: s.details }));
    });
    stream.write({ model_name: BIG, id: "big" });
    stream.write({ ...GOOD, id: "good" });
    stream.end();
    const status = await ended;
    assert.equal(status.code, GRPC_STATUS.OK, status.details);
    assert.equal(answers.length, 2);
    assert.equal(answers[0]?.["error_message"], unknownModel);
    assert.equal(answers[0]?.["infer_response"]?.["id"], "big");
    assert.equal(answers[1]?.["error_message"], "");
    assert.equal(answers[1]?.["infer_response"]?.["id"], "good");
    await stillServing();
  });
});
