// Bad input on the gRPC front end (issue 13 "Bad input"), on a real core: each mistake gets Triton's status
// and message, malformed frames and streams that end oddly get a status, and the server serves on after
// every one of them.
import assert from "node:assert/strict";
import { connect } from "node:http2";
import { after, before, describe, test } from "node:test";
import type * as grpcJs from "@grpc/grpc-js";
import { GRPC_STATUS, grpcInferenceServiceMethods, inference } from "@tbench/proto";
import { DEFAULT_MAX_BYTES_TENSOR_ELEMENTS } from "../core/bytes-data.js";
import { silentLogger } from "../core/logger.js";
import { createInferenceCore, type InferenceCoreHandle } from "../lifecycle/create-inference-core.js";
import { type Any, createTestClient, grpcFrame, rawHttp2Call, unary } from "../testing/grpc-test-client.js";
import { createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";
import { createGrpcFrontEnd, type GrpcFrontEnd } from "./grpc-front-end.js";

const A = Array.from({ length: 16 }, (_, i) => i);
const RAW = new Uint8Array(new Int32Array(A).buffer);
const INPUT0 = { name: "INPUT0", datatype: "INT32", shape: [1, 16] };
const INPUT1 = { name: "INPUT1", datatype: "INT32", shape: [1, 16] };
const GOOD = { model_name: "simple", inputs: [INPUT0, INPUT1], raw_input_contents: [RAW, RAW] };
const INFER = grpcInferenceServiceMethods.ModelInfer.path;
const STREAM = grpcInferenceServiceMethods.ModelStreamInfer.path;

function bytesInput(shape: number[], extra: Any): Any {
  return { model_name: "identity_bytes", inputs: [{ name: "INPUT0", datatype: "BYTES", shape, ...extra }] };
}

function lengthPrefixed(...elements: string[]): Uint8Array {
  const parts = elements.map((e) => {
    const b = Buffer.from(e);
    const head = Buffer.alloc(4);
    head.writeUInt32LE(b.length);
    return Buffer.concat([head, b]);
  });
  return new Uint8Array(Buffer.concat(parts));
}

describe("gRPC bad input (real core)", { timeout: 120_000 }, () => {
  let repo: FixtureRepository;
  let core: InferenceCoreHandle;
  let front: GrpcFrontEnd;
  let client: Any & grpcJs.Client;

  const refused = async (request: Any, code: number, details: string | RegExp) => {
    await assert.rejects(unary(client, "ModelInfer", request), (error: grpcJs.ServiceError) => {
      assert.equal(error.code, code, error.details);
      if (typeof details === "string") assert.equal(error.details, details);
      else assert.match(error.details, details);
      return true;
    });
  };
  const stillServing = async () => {
    const response = await unary(client, "ModelInfer", GOOD);
    assert.deepEqual(
      [...new Int32Array(new Uint8Array(response.raw_output_contents[0]).buffer)],
      A.map((x) => 2 * x),
    );
  };

  before(async () => {
    repo = createFixtureRepository({
      simple: { config: "bundled" },
      identity_int8: { config: "bundled" },
      identity_bytes: { config: "bundled" },
    });
    core = await createInferenceCore({ modelRepository: repo.dir, logger: silentLogger });
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

  test("unknown version, missing and unknown inputs, wrong datatype and shape: the core's Triton messages", async () => {
    await refused(
      { ...GOOD, model_version: "99" },
      GRPC_STATUS.NOT_FOUND,
      "Request for unknown model: 'simple' version 99 is not found",
    );
    await refused(
      { ...GOOD, model_version: "-2" },
      GRPC_STATUS.INVALID_ARGUMENT,
      "invalid model version specified '-2' , version should be an integral value > 0",
    );
    await refused(
      { model_name: "simple", inputs: [INPUT0], raw_input_contents: [RAW] },
      GRPC_STATUS.INVALID_ARGUMENT,
      "[request id: <id_unknown>] expected 2 inputs but got 1 inputs for model 'simple'. Got input(s) ['INPUT0'], but missing required " +
        "input(s) ['INPUT1']. Please provide all required input(s).",
    );
    await refused(
      { ...GOOD, inputs: [INPUT0, { ...INPUT1, name: "BOGUS" }] },
      GRPC_STATUS.INVALID_ARGUMENT,
      "unexpected inference input 'BOGUS' for model 'simple'",
    );
    await refused(
      { ...GOOD, inputs: [INPUT0, { ...INPUT1, datatype: "FP32" }] },
      GRPC_STATUS.INVALID_ARGUMENT,
      "[request id: <id_unknown>] inference input 'INPUT1' data-type is 'FP32', but model 'simple' expects 'INT32'",
    );
    await refused(
      {
        ...GOOD,
        inputs: [
          { ...INPUT0, shape: [2, 8] },
          { ...INPUT1, shape: [2, 8] },
        ],
      },
      GRPC_STATUS.INVALID_ARGUMENT,
      /^\[request id: <id_unknown>\] unexpected shape for input 'INPUT0' for model 'simple'\. Expected \[-1,16\], got \[2,8\]\. NOTE:/,
    );
    await refused(
      { ...GOOD, inputs: [INPUT0, { ...INPUT1, datatype: "INT33" }] },
      GRPC_STATUS.INVALID_ARGUMENT,
      "invalid datatype 'INT33' for input 'INPUT1' of model 'simple'",
    );
    await stillServing();
  });

  test("mixed raw and typed contents, raw contents of the wrong size, typed contents of the wrong type or count", async () => {
    await refused(
      { ...GOOD, inputs: [{ ...INPUT0, contents: { int_contents: A } }, INPUT1] },
      GRPC_STATUS.INVALID_ARGUMENT,
      "contents field must not be specified when using raw_input_contents for 'INPUT0' for model 'simple'",
    );
    await refused(
      { ...GOOD, raw_input_contents: [RAW, RAW.subarray(4)] },
      GRPC_STATUS.INVALID_ARGUMENT,
      "input byte size mismatch for input 'INPUT1' for model 'simple'. Expected 64, got 60",
    );
    await refused(
      {
        model_name: "simple",
        inputs: [
          { ...INPUT0, contents: { int_contents: A.slice(1) } },
          { ...INPUT1, contents: { int_contents: A } },
        ],
      },
      GRPC_STATUS.INVALID_ARGUMENT,
      "input byte size mismatch for input 'INPUT0' for model 'simple'. Expected 64, got 60",
    );
    await refused(
      {
        model_name: "simple",
        inputs: [
          { ...INPUT0, contents: { int_contents: A, int64_contents: A } },
          { ...INPUT1, contents: { int_contents: A } },
        ],
      },
      GRPC_STATUS.INVALID_ARGUMENT,
      "unexpected explicit tensor data for input tensor 'INPUT0' for model 'simple', binary data was already supplied.",
    );
    await stillServing();
  });

  test("typed contents that do not fit the datatype are refused, as on HTTP (Triton would wrap them)", async () => {
    const int8 = (values: number[]) => ({
      model_name: "identity_int8",
      inputs: [
        { name: "INPUT0", datatype: "INT8", shape: [1, values.length], contents: { int_contents: values } },
      ],
    });
    await refused(
      int8([1, 300]),
      GRPC_STATUS.INVALID_ARGUMENT,
      "unexpected explicit tensor data for input tensor 'INPUT0' for model 'identity_int8': element 1 is 300, outside the range of INT8 [-128, 127]",
    );
    await refused(int8([-129]), GRPC_STATUS.INVALID_ARGUMENT, /element 0 is -129, outside the range of INT8/);
    const ok = await unary(client, "ModelInfer", int8([-128, 127]));
    assert.deepEqual([...new Int8Array(new Uint8Array(ok.raw_output_contents[0]).buffer)], [-128, 127]);
  });

  test("BYTES: malformed raw bytes and wrong element counts get the core's Triton messages", async () => {
    const where = "for inference input 'INPUT0' for model 'identity_bytes'";
    // The core's LogRequest prefix, as Triton's (no id was given).
    const id = "[request id: <id_unknown>] ";
    await refused(
      { ...bytesInput([1, 1], {}), raw_input_contents: [new Uint8Array([5, 0])] },
      GRPC_STATUS.INVALID_ARGUMENT,
      `${id}incomplete string length indicator ${where}, expecting 4 bytes but only 2 bytes available. Please make sure the string length indicator is in one buffer.`,
    );
    await refused(
      { ...bytesInput([1, 2], {}), raw_input_contents: [lengthPrefixed("a")] },
      GRPC_STATUS.INVALID_ARGUMENT,
      `${id}expected 2 string elements ${where}, got 1`,
    );
    await refused(
      { ...bytesInput([1, 1], {}), raw_input_contents: [lengthPrefixed("a", "b")] },
      GRPC_STATUS.INVALID_ARGUMENT,
      `${id}unexpected number of string elements 2 ${where}, expecting 1`,
    );
    await refused(
      bytesInput([1, 2], {
        contents: { bytes_contents: [Buffer.from("a"), Buffer.from("b"), Buffer.from("c")] },
      }),
      GRPC_STATUS.INVALID_ARGUMENT,
      `${id}unexpected number of string elements 3 ${where}, expecting 2`,
    );
    await refused(
      { ...bytesInput([1, 1], {}), raw_input_contents: [new Uint8Array([9, 0, 0, 0, 97])] },
      GRPC_STATUS.INVALID_ARGUMENT,
      `${id}input 'INPUT0' of model 'identity_bytes': BYTES element 0 declares 9 bytes, 1 are left`,
    );
    await stillServing();
  });

  test("garbage and truncated frames on unary calls and streams: a status, and the server serves on", async () => {
    const garbage = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x99]);
    const unaryGarbage = await rawHttp2Call(front.address, INFER, grpcFrame(garbage));
    assert.equal(unaryGarbage.grpcStatus, GRPC_STATUS.INTERNAL);
    assert.notEqual(unaryGarbage.grpcMessage, "");
    const streamGarbage = await rawHttp2Call(front.address, STREAM, grpcFrame(garbage));
    assert.equal(streamGarbage.grpcStatus, GRPC_STATUS.INTERNAL);
    // A frame that announces 100 bytes and brings 10, then the request ends.
    const truncated = await rawHttp2Call(front.address, INFER, grpcFrame(new Uint8Array(10), false, 100));
    assert.notEqual(truncated.grpcStatus, GRPC_STATUS.OK);
    assert.notEqual(truncated.grpcStatus, undefined);
    // A stream whose second message is garbage: the first is answered, then the stream ends with a status.
    const good = Buffer.from(inference.ModelInferRequest.encode({ ...GOOD, id: "g" } as never).finish());
    const mixed = await rawHttp2Call(
      front.address,
      STREAM,
      Buffer.concat([grpcFrame(good), grpcFrame(garbage)]),
    );
    assert.equal(mixed.grpcStatus, GRPC_STATUS.INTERNAL);
    await stillServing();
  });

  test("a stream half-closed at once ends OK with no answer; a client gone mid-stream leaves the server serving", async () => {
    const empty = await rawHttp2Call(front.address, STREAM, Buffer.alloc(0));
    assert.equal(empty.grpcStatus, GRPC_STATUS.OK);
    assert.equal(empty.messages.length, 0);

    const gone = createTestClient(front.address);
    const stream = gone.ModelStreamInfer() as grpcJs.ClientDuplexStream<Any, Any>;
    const cancelled = new Promise<number>((resolve) =>
      stream.on("error", (e: grpcJs.ServiceError) => resolve(e.code)),
    );
    for (let i = 0; i < 20; i++) stream.write({ ...GOOD, id: `r${i}` });
    stream.cancel();
    assert.equal(await cancelled, GRPC_STATUS.CANCELLED);
    gone.close();

    // A connection torn down in the middle of a frame.
    await new Promise<void>((resolve) => {
      const session = connect(`http://${front.address}`);
      const s = session.request({
        ":method": "POST",
        ":path": STREAM,
        "content-type": "application/grpc",
        te: "trailers",
      });
      s.on("error", () => {});
      s.write(grpcFrame(new Uint8Array(1000)).subarray(0, 300), () => {
        session.destroy();
        resolve();
      });
    });
    await stillServing();
  });
});
