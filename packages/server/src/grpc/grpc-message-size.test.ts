// Issue 36 item 2: gRPC messages are bounded both ways (--grpc-max-receive-message-size,
// --grpc-max-send-message-size). A request of exactly the bound is served, one byte more is answered
// RESOURCE_EXHAUSTED from its length prefix, before the client has sent it (the test holds the rest
// back); a response over the send bound is RESOURCE_EXHAUSTED naming its model, unary and on a stream.
import assert from "node:assert/strict";
import { connect } from "node:http2";
import { after, before, describe, test } from "node:test";
import type * as grpcJs from "@grpc/grpc-js";
import { GRPC_STATUS, grpcInferenceServiceMethods, inference } from "@tbench/proto";
import { DEFAULT_MAX_BYTES_TENSOR_ELEMENTS } from "../core/bytes-data.js";
import { silentLogger } from "../core/logger.js";
import { createInferenceCore, type InferenceCoreHandle } from "../lifecycle/create-inference-core.js";
import { type Any, createTestClient, unary } from "../testing/grpc-test-client.js";
import { createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";
import { createGrpcFrontEnd, type GrpcFrontEnd } from "./grpc-front-end.js";

const RECEIVE_BYTES = 1 << 20;
const SEND_BYTES = 64 << 10;

function int8Request(elements: number, id = ""): Any {
  const data = new Uint8Array(elements).fill(7);
  return {
    model_name: "identity_int8",
    id,
    inputs: [{ name: "INPUT0", datatype: "INT8", shape: [1, elements] }],
    raw_input_contents: [data],
  };
}

const encodedLength = (request: Any) =>
  inference.ModelInferRequest.encode(inference.ModelInferRequest.fromObject(request)).finish().byteLength;

/** The element count whose request encodes to exactly `bytes`. */
function elementsForLength(bytes: number): number {
  for (let n = bytes - 64; n < bytes; n++) if (encodedLength(int8Request(n)) === bytes) return n;
  throw new Error(`no request of exactly ${bytes} bytes`);
}

describe("gRPC message size bounds", { timeout: 120_000 }, () => {
  let repo: FixtureRepository;
  let core: InferenceCoreHandle;
  /** Receive bound RECEIVE_BYTES, default send bound; and the other way round. */
  let front: GrpcFrontEnd;
  let sendBounded: GrpcFrontEnd;
  let client: Any & grpcJs.Client;
  let sendClient: Any & grpcJs.Client;
  const call = (request: Any, c = client) =>
    unary(c, "ModelInfer", request, { deadline: Date.now() + 30_000 }).then(
      (response) => ({ code: GRPC_STATUS.OK as number, details: "", response }),
      (error: grpcJs.ServiceError) => ({ code: error.code, details: error.details, response: undefined }),
    );

  before(async () => {
    repo = createFixtureRepository({ identity_int8: { config: "bundled" } });
    core = await createInferenceCore({ modelRepository: repo.dir, logger: silentLogger });
    front = await createGrpcFrontEnd({
      core,
      port: 0,
      logger: silentLogger,
      maxBytesTensorElements: DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
      settings: { maxReceiveMessageBytes: RECEIVE_BYTES },
    });
    sendBounded = await createGrpcFrontEnd({
      core,
      port: 0,
      logger: silentLogger,
      maxBytesTensorElements: DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
      settings: { maxSendMessageBytes: SEND_BYTES },
    });
    client = createTestClient(front.address);
    sendClient = createTestClient(sendBounded.address);
  });
  after(async () => {
    client.close();
    sendClient.close();
    await front.close();
    await sendBounded.close();
    await core.close();
    repo.remove();
  });

  test("a request of exactly the receive bound is served; one byte more is RESOURCE_EXHAUSTED", async () => {
    const n = elementsForLength(RECEIVE_BYTES);
    const within = await call(int8Request(n));
    assert.equal(within.code, GRPC_STATUS.OK, within.details);
    assert.equal(within.response?.["raw_output_contents"][0].byteLength, n);
    const over = await call(int8Request(n + 1));
    assert.equal(over.code, GRPC_STATUS.RESOURCE_EXHAUSTED);
    assert.equal(over.details, `Received message larger than max (${RECEIVE_BYTES + 1} vs ${RECEIVE_BYTES})`);
  });

  test("an oversized request is refused from its length prefix while the client still holds the rest", async () => {
    const session = connect(`http://${front.address}`);
    try {
      const stream = session.request({
        ":method": "POST",
        ":path": grpcInferenceServiceMethods.ModelInfer.path,
        "content-type": "application/grpc",
        te: "trailers",
      });
      const declared = 64 << 20;
      const head = Buffer.alloc(5 + 16_384);
      head.writeUInt32BE(declared, 1);
      // 16 KiB of a declared 64 MiB are written; the stream stays open and nothing more is sent.
      stream.write(head);
      const status = await new Promise<{ code: number; message: string }>((resolve, reject) => {
        const take = (h: Record<string, unknown>) => {
          if (h["grpc-status"] !== undefined)
            resolve({ code: Number(h["grpc-status"]), message: decodeURI(String(h["grpc-message"])) });
        };
        stream.on("response", take);
        stream.on("trailers", take);
        stream.on("error", reject);
        stream.resume();
      });
      assert.deepEqual(status, {
        code: GRPC_STATUS.RESOURCE_EXHAUSTED,
        message: `Received message larger than max (${declared} vs ${RECEIVE_BYTES})`,
      });
      stream.close();
    } finally {
      session.destroy();
    }
  });

  test("a response over the send bound is RESOURCE_EXHAUSTED naming the model; under it is served", async () => {
    const small = await call(int8Request(1000), sendClient);
    assert.equal(small.code, GRPC_STATUS.OK, small.details);
    assert.equal(small.response?.["raw_output_contents"][0].byteLength, 1000);
    const big = await call(int8Request(SEND_BYTES), sendClient);
    assert.equal(big.code, GRPC_STATUS.RESOURCE_EXHAUSTED);
    assert.match(
      big.details,
      new RegExp(
        `^Sent message larger than max \\(\\d+ vs\\. ${SEND_BYTES}\\): the response of model 'identity_int8' ` +
          "version 1; --grpc-max-send-message-size raises the limit$",
      ),
    );
  });

  test("on a stream, an oversized response is answered in error_message and the stream serves on", async () => {
    const stream = sendClient.ModelStreamInfer() as grpcJs.ClientDuplexStream<Any, Any>;
    const answers: Any[] = [];
    const ended = new Promise<number>((resolve) => {
      stream.on("data", (a: Any) => answers.push(a));
      stream.on("error", (e: grpcJs.ServiceError) => resolve(e.code));
      stream.on("status", (s: grpcJs.StatusObject) => resolve(s.code));
    });
    stream.write(int8Request(SEND_BYTES, "big"));
    stream.write(int8Request(10, "small"));
    stream.end();
    assert.equal(await ended, GRPC_STATUS.OK);
    assert.equal(answers.length, 2);
    assert.match(answers[0]?.["error_message"], /^Sent message larger than max .* model 'identity_int8'/);
    assert.equal(answers[0]?.["infer_response"]?.["id"], "big");
    assert.equal(answers[1]?.["error_message"], "");
    assert.equal(answers[1]?.["infer_response"]?.["raw_output_contents"][0].byteLength, 10);
  });
});
