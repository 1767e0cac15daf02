// The gRPC front end's stream error mode (triton_grpc_error), graceful shutdown shared with HTTP through
// startServer, and compression (gzip/deflate requests; the response compression level Triton's flag sets).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import * as grpcJs from "@grpc/grpc-js";
import { GRPC_STATUS, grpcInferenceServiceMethods, inference } from "@tbench/proto";
import { DEFAULT_MAX_BYTES_TENSOR_ELEMENTS } from "../core/bytes-data.js";
import { markFailedAfterIssue } from "../core/failed-after-issue.js";
import { silentLogger } from "../core/logger.js";
import { ServerError } from "../core/server-error.js";
import type { InferenceCore, InferenceRequest } from "../core/types.js";
import { createInferenceCore, type InferenceCoreHandle } from "../lifecycle/create-inference-core.js";
import { startServer } from "../server.js";
import { createFakeCore } from "../testing/fake-core.js";
import { type Any, createTestClient, grpcFrame, rawHttp2Call, unary } from "../testing/grpc-test-client.js";
import { bundledConfig, createFixtureRepository, createRecordingLogger } from "../testing/test-fixtures.js";
import { createGrpcFrontEnd, type GrpcFrontEnd } from "./grpc-front-end.js";
import { grpcChannelOptions, ignoredGrpcSettings } from "./grpc-server-settings.js";

const A = Array.from({ length: 16 }, (_, i) => i);

function simple(id: string, model = "simple", parameters: Any = {}): Any {
  const raw = new Uint8Array(new Int32Array(A).buffer);
  return {
    model_name: model,
    id,
    parameters,
    inputs: [
      { name: "INPUT0", datatype: "INT32", shape: [1, 16] },
      { name: "INPUT1", datatype: "INT32", shape: [1, 16] },
    ],
    raw_input_contents: [raw, raw],
  };
}

function sums(response: Any): number[] {
  return [...new Int32Array(new Uint8Array(response.raw_output_contents[0]).buffer)];
}

/** A stream whose answers and end are collected: `next()` resolves with the next answer. */
function openStream(client: Any, metadata?: grpcJs.Metadata) {
  const stream = client.ModelStreamInfer(metadata ?? new grpcJs.Metadata()) as grpcJs.ClientDuplexStream<
    Any,
    Any
  >;
  const answers: Any[] = [];
  const waiting: ((a: Any) => void)[] = [];
  stream.on("data", (a: Any) => {
    const w = waiting.shift();
    if (w) w(a);
    else answers.push(a);
  });
  const ended = new Promise<{ code: number; details: string }>((resolve) => {
    stream.on("error", (e: grpcJs.ServiceError) => resolve({ code: e.code, details: e.details }));
    stream.on("status", (s: grpcJs.StatusObject) => {
      if (s.code === 0) resolve({ code: 0, details: s.details });
    });
  });
  return {
    stream,
    ended,
    answers,
    next: (): Promise<Any> =>
      answers.length > 0 ? Promise.resolve(answers.shift()!) : new Promise((r) => waiting.push(r)),
  };
}

function errorModeMetadata(): grpcJs.Metadata {
  const metadata = new grpcJs.Metadata();
  metadata.set("triton_grpc_error", "true");
  return metadata;
}

describe("triton_grpc_error on a real core: an execution error ends the stream with its status", {
  timeout: 60_000,
}, () => {
  const repo = createFixtureRepository({
    simple: { config: `${bundledConfig("simple")}\ninstance_group [ { count: 1, kind: KIND_CPU } ]\n` },
  });
  let core: InferenceCoreHandle;
  let front: GrpcFrontEnd;
  let client: Any;
  before(async () => {
    core = await createInferenceCore({
      modelRepository: repo.dir,
      logger: silentLogger,
      crashWorkerParameter: "test_crash",
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
  const crash = { test_crash: { bool_param: true } };
  const died = /^model instance 'simple_0_0' died while running the request: worker exited with code 70$/;

  test("with the header: refusals before issue stay in error_message, the execution error ends the stream", async () => {
    const s = openStream(client, errorModeMetadata());
    s.stream.write(simple("ok"));
    assert.deepEqual(
      sums((await s.next()).infer_response),
      A.map((x) => 2 * x),
    );
    s.stream.write(simple("unknown", "nope"));
    const refused = await s.next();
    assert.equal(refused.error_message, "Request for unknown model: 'nope' is not found");
    assert.equal(refused.infer_response.id, "unknown");
    s.stream.write(simple("crash", "simple", crash));
    const end = await s.ended;
    assert.equal(end.code, GRPC_STATUS.INTERNAL);
    assert.match(end.details, died);
    assert.equal(s.answers.length, 0);
    // The server serves on.
    assert.deepEqual(
      sums(await unary(client, "ModelInfer", simple("after"))),
      A.map((x) => 2 * x),
    );
  });

  test("without the header the same error is an error_message and the stream goes on", async () => {
    const s = openStream(client);
    s.stream.write(simple("crash", "simple", crash));
    const answer = await s.next();
    assert.match(answer.error_message, died);
    assert.equal(answer.infer_response.id, "crash");
    s.stream.write(simple("ok"));
    assert.equal((await s.next()).error_message, "");
    s.stream.end();
    assert.deepEqual(await s.ended, { code: 0, details: "OK" });
  });
});

describe("triton_grpc_error: the other requests in flight on the stream are cancelled, their answers dropped", {
  timeout: 60_000,
}, () => {
  test("a held request is aborted when another one fails after issue", async () => {
    const fake = createFakeCore({ holdInfer: true });
    // "fail" fails after it was issued: its error carries the mark a scheduler puts on such failures.
    const core: InferenceCore = {
      ...fake,
      infer: (request: InferenceRequest) =>
        request.model === "fail"
          ? new Promise((_, reject) =>
              setImmediate(() =>
                reject(markFailedAfterIssue(new ServerError("UNAVAILABLE", "Request timeout expired"))),
              ),
            )
          : fake.infer(request),
    };
    const front = await createGrpcFrontEnd({
      core,
      port: 0,
      logger: silentLogger,
      maxBytesTensorElements: DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
    });
    const client = createTestClient(front.address);
    try {
      const s = openStream(client, errorModeMetadata());
      s.stream.write(simple("held"));
      await fake.waitForHeld(1);
      s.stream.write(simple("fails", "fail"));
      assert.deepEqual(await s.ended, { code: GRPC_STATUS.UNAVAILABLE, details: "Request timeout expired" });
      await fake.waitForAborted(1);
      fake.release();
      assert.equal(s.answers.length, 0);
    } finally {
      client.close();
      await front.close();
    }
  });
});

describe("a decoupled model that ends with the final flag alone (Triton's repeat example)", {
  timeout: 60_000,
}, () => {
  test("a response per model response, then the empty final response only when the request asks for it", async () => {
    const fake = createFakeCore();
    // "repeat" answers one response per INPUT0 element, then a final flag with no response.
    const core: InferenceCore = {
      ...fake,
      isDecoupled: (name, version) => name === "repeat" || fake.isDecoupled(name, version),
      inferStream(request, sink) {
        if (request.model !== "repeat") return fake.inferStream(request, sink);
        setImmediate(() => {
          for (const value of request.inputs[0]!.data as Int32Array) {
            sink.response(
              {
                model: "repeat",
                version: "1",
                ...(request.id !== undefined ? { id: request.id } : {}),
                outputs: [{ name: "OUT", datatype: "INT32", shape: [1], data: Int32Array.of(value) }],
              },
              false,
            );
          }
          sink.end();
        });
      },
    };
    const front = await createGrpcFrontEnd({
      core,
      port: 0,
      logger: silentLogger,
      maxBytesTensorElements: DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
    });
    const client = createTestClient(front.address);
    try {
      const repeat = (id: string, empty: boolean): Any => ({
        model_name: "repeat",
        id,
        inputs: [{ name: "IN", datatype: "INT32", shape: [3] }],
        raw_input_contents: [new Uint8Array(Int32Array.of(7, 8, 9).buffer)],
        parameters: empty ? { triton_enable_empty_final_response: { bool_param: true } } : {},
      });
      const s = openStream(client);
      s.stream.write(repeat("asks", true));
      s.stream.write(repeat("quiet", false));
      s.stream.end();
      assert.deepEqual(await s.ended, { code: 0, details: "OK" });
      const of = (id: string) => s.answers.filter((a) => a.infer_response.id === id);
      for (const id of ["asks", "quiet"]) {
        const withData = of(id).filter((a) => a.infer_response.raw_output_contents.length > 0);
        assert.deepEqual(
          withData.map(
            (a) => new Int32Array(new Uint8Array(a.infer_response.raw_output_contents[0]).buffer)[0],
          ),
          [7, 8, 9],
        );
        assert.deepEqual(
          withData.map((a) => a.infer_response.parameters.triton_final_response.bool_param),
          [false, false, false],
        );
      }
      const empties = of("asks").filter((a) => a.infer_response.raw_output_contents.length === 0);
      assert.equal(empties.length, 1, "the empty final response, asked for");
      assert.equal(empties[0]!.infer_response.parameters.triton_final_response.bool_param, true);
      assert.deepEqual(empties[0]!.infer_response.outputs, []);
      assert.equal(empties[0]!.infer_response.model_name, "repeat");
      assert.equal(of("quiet").length, 3, "no empty final response unless asked");
    } finally {
      client.close();
      await front.close();
    }
  });
});

describe("graceful shutdown through startServer: gRPC and HTTP together", { timeout: 60_000 }, () => {
  test("unary calls, stream requests and HTTP requests in flight during close() all get answers", async () => {
    const fake = createFakeCore({ holdInfer: true });
    const server = await startServer({
      modelRepository: "unused",
      core: fake,
      httpPort: 0,
      grpcPort: 0,
      metricsPort: false,
      logger: silentLogger,
    });
    const client = createTestClient(server.grpcAddress!);
    const s = openStream(client);
    const unaryAnswer = unary(client, "ModelInfer", simple("unary"));
    s.stream.write(simple("stream-1"));
    const http = fetch(`${server.httpUrl}/v2/models/simple/infer`, {
      method: "POST",
      body: JSON.stringify({
        inputs: [
          { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: A },
          { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: A },
        ],
      }),
    });
    await fake.waitForHeld(3);
    let closed = false;
    const closing = server.close().then(() => {
      closed = true;
    });
    // A request sent on the open stream after close() began: refused with Triton's words, answered after
    // stream-1's answer (a stream answers in request order).
    s.stream.write(simple("stream-2"));
    assert.equal(closed, false);
    fake.release();
    assert.deepEqual(
      sums(await unaryAnswer),
      A.map((x) => 2 * x),
    );
    const streamed = await s.next();
    assert.equal(streamed.infer_response.id, "stream-1");
    assert.equal(streamed.error_message, "");
    const refused = await s.next();
    assert.equal(refused.infer_response.id, "stream-2");
    assert.equal(
      refused.error_message,
      "GRPC server is shutting down and has stopped accepting new requests.",
    );
    assert.equal((await http).status, 200);
    s.stream.end();
    assert.deepEqual(await s.ended, { code: 0, details: "OK" });
    await closing;
    assert.equal(closed, true);
    await assert.rejects(unary(client, "ServerLive", {}), { code: GRPC_STATUS.UNAVAILABLE });
    client.close();
  });

  test("a stream left open past the grace period is cancelled and close() resolves", async () => {
    const fake = createFakeCore();
    const front = await createGrpcFrontEnd({
      core: fake,
      port: 0,
      logger: silentLogger,
      maxBytesTensorElements: DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
      closeGraceMs: 0,
    });
    const client = createTestClient(front.address);
    const s = openStream(client);
    s.stream.write(simple("one"));
    assert.equal((await s.next()).error_message, "");
    await front.close();
    assert.equal((await s.ended).code, GRPC_STATUS.CANCELLED);
    client.close();
  });
});

describe("compression", () => {
  const repo = createFixtureRepository({ simple: { config: "bundled" } });
  let core: InferenceCoreHandle;
  before(async () => {
    core = await createInferenceCore({ modelRepository: repo.dir, logger: silentLogger });
  });
  after(async () => {
    await core.close();
    repo.remove();
  });
  const encode = () => Buffer.from(inference.ModelInferRequest.encode(simple("z") as never).finish());

  test("requests compressed with gzip or deflate are answered (grpc-js channels and hand-made frames)", async () => {
    const front = await createGrpcFrontEnd({
      core,
      port: 0,
      logger: silentLogger,
      maxBytesTensorElements: DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
    });
    try {
      for (const algorithm of [1, 2]) {
        const client = createTestClient(front.address, { "grpc.default_compression_algorithm": algorithm });
        const response = await unary(client, "ModelInfer", simple(`c${algorithm}`));
        assert.deepEqual(
          sums(response),
          A.map((x) => 2 * x),
        );
        client.close();
      }
      const path = grpcInferenceServiceMethods.ModelInfer.path;
      const gz = await rawHttp2Call(front.address, path, grpcFrame(gzipSync(encode()), true), {
        "grpc-encoding": "gzip",
      });
      assert.equal(gz.grpcStatus, 0, gz.grpcMessage);
      const decoded = inference.ModelInferResponse.decode(gz.messages[0]!.payload);
      assert.deepEqual(
        sums(decoded),
        A.map((x) => 2 * x),
      );
      // A compressed frame under an encoding the server does not know: refused, not crashed.
      const unknown = await rawHttp2Call(front.address, path, grpcFrame(gzipSync(encode()), true), {
        "grpc-encoding": "br",
      });
      assert.equal(unknown.grpcStatus, GRPC_STATUS.UNIMPLEMENTED);
    } finally {
      await front.close();
    }
  });

  test("--grpc-infer-response-compression-level is accepted; grpc-js answers uncompressed and says so", async () => {
    const logger = createRecordingLogger();
    const front = await createGrpcFrontEnd({
      core,
      port: 0,
      logger,
      maxBytesTensorElements: DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
      settings: { inferResponseCompressionLevel: "high" },
    });
    try {
      assert.ok(
        logger.lines.some((l) =>
          l.includes("--grpc-infer-response-compression-level high is accepted but has no effect"),
        ),
        logger.lines.join("\n"),
      );
      const answer = await rawHttp2Call(
        front.address,
        grpcInferenceServiceMethods.ModelInfer.path,
        grpcFrame(encode()),
        { "grpc-accept-encoding": "identity,deflate,gzip" },
      );
      assert.equal(answer.grpcStatus, 0);
      assert.equal(answer.messages[0]!.compressed, false);
      assert.deepEqual(
        sums(inference.ModelInferResponse.decode(answer.messages[0]!.payload)),
        A.map((x) => 2 * x),
      );
    } finally {
      await front.close();
    }
  });
});

test("keepalive settings become grpc-js options under gRPC core's names, Triton's defaults otherwise", () => {
  assert.deepEqual(grpcChannelOptions({}), {
    "grpc.max_receive_message_length": 128 * 1024 * 1024,
    "grpc.max_send_message_length": 128 * 1024 * 1024,
    "grpc.keepalive_time_ms": 7_200_000,
    "grpc.keepalive_timeout_ms": 20_000,
    "grpc.keepalive_permit_without_calls": 0,
    "grpc.http2.max_pings_without_data": 2,
    "grpc.http2.min_ping_interval_without_data_ms": 300_000,
    "grpc.http2.max_ping_strikes": 2,
  });
  assert.deepEqual(
    grpcChannelOptions({
      keepaliveTimeMs: 1000,
      keepaliveTimeoutMs: 500,
      keepalivePermitWithoutCalls: true,
      maxConnectionAgeMs: 60_000,
      maxConnectionAgeGraceMs: 5000,
    }),
    {
      "grpc.max_receive_message_length": 128 * 1024 * 1024,
      "grpc.max_send_message_length": 128 * 1024 * 1024,
      "grpc.keepalive_time_ms": 1000,
      "grpc.keepalive_timeout_ms": 500,
      "grpc.keepalive_permit_without_calls": 1,
      "grpc.http2.max_pings_without_data": 2,
      "grpc.http2.min_ping_interval_without_data_ms": 300_000,
      "grpc.http2.max_ping_strikes": 2,
      "grpc.max_connection_age_ms": 60_000,
      "grpc.max_connection_age_grace_ms": 5000,
    },
  );
  assert.deepEqual(ignoredGrpcSettings({ keepaliveTimeMs: 1, http2MaxPingStrikes: 2 }), []);
  assert.deepEqual(ignoredGrpcSettings({ http2MaxPingStrikes: 0, keepalivePermitWithoutCalls: true }), [
    "--grpc-keepalive-permit-without-calls true",
    "--grpc-http2-max-ping-strikes 0",
  ]);
});
