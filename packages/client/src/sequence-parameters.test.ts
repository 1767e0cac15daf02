// The sequence fields of a request (sequenceId, sequenceStart, sequenceEnd) on both wires, byte for byte:
// HTTP JSON text (a uint64 above 2^53 as exact digits) and gRPC InferParameter bytes (a uint64 above 2^63-1
// as the int64 with the same bits); and what is refused before anything is sent, on both encoders and over
// a real HTTP client against a fake server.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { inference } from "@tbench/proto";
import { InvalidArgumentError } from "./errors.js";
import { encodeGrpcInferRequest, encodeGrpcInferRequestWithoutId, withId } from "./grpc/grpc-infer-codec.js";
import { createHttpClient } from "./http/http-client.js";
import { encodeInferRequest } from "./http/infer-encoding.js";
import { encodeInferRequestPieces } from "./http/infer-pieces.js";
import type { InferInput, InferRequest } from "./tensor-types.js";
import { type FakeServer, sendJson, startFakeServer } from "./testing/fake-server.js";

const U64_MAX = 2n ** 64n - 1n;
const inputs: InferInput[] = [{ name: "INPUT", datatype: "INT32", shape: [1], data: [5] }];
const INPUT_JSON =
  '"inputs":[{"name":"INPUT","shape":[1],"datatype":"INT32","parameters":{"binary_data_size":4}}]';

/** The JSON header of an encoded HTTP body, as text. */
function httpJson(request: InferRequest): string {
  const { body, jsonLength } = encodeInferRequest(request);
  return new TextDecoder().decode(body.subarray(0, jsonLength ?? body.length));
}

/** A protobuf length prefix (a varint; the lengths here are under 128). */
function len(n: number): number {
  assert.ok(n < 128);
  return n;
}

/** The bytes of one ModelInferRequest.parameters map entry (field 4): key, then the InferParameter's bytes. */
function parameterEntry(key: string, parameter: number[]): Buffer {
  const keyBytes = Buffer.from(key, "utf8");
  const entry = [0x0a, len(keyBytes.length), ...keyBytes, 0x12, len(parameter.length), ...parameter];
  return Buffer.from([0x22, len(entry.length), ...entry]);
}

const BOOL_TRUE = [0x08, 0x01]; // InferParameter.bool_param (field 1) = true
const BOOL_FALSE = [0x08, 0x00]; // an explicit oneof member is written even at its default

describe("HTTP: parameters.sequence_* in the JSON header", () => {
  test("a number id and START: exact JSON text", () => {
    assert.equal(
      httpJson({ inputs, sequenceId: 42, sequenceStart: true }),
      `{${INPUT_JSON},"parameters":{"binary_data_output":true,"sequence_id":42,"sequence_start":true}}`,
    );
  });

  test("a bigint id of 2^64-1 is written with its exact digits, not through Number", () => {
    const json = httpJson({ inputs, sequenceId: U64_MAX, sequenceStart: false, sequenceEnd: true });
    assert.equal(
      json,
      `{${INPUT_JSON},"parameters":{"binary_data_output":true,` +
        `"sequence_id":18446744073709551615,"sequence_start":false,"sequence_end":true}}`,
    );
    // What a uint64-reading JSON parser (Triton's rapidjson) gets back.
    assert.equal(BigInt(/"sequence_id":(\d+)/.exec(json)![1]!), U64_MAX);
  });

  test("2^53 + 1 as a bigint stays exact (a number would round to 2^53)", () => {
    assert.match(httpJson({ inputs, sequenceId: 2n ** 53n + 1n }), /"sequence_id":9007199254740993[,}]/);
  });

  test("a string id is a JSON string (escaped); the other parameters stay", () => {
    const json = httpJson({
      inputs,
      outputs: [{ name: "OUTPUT" }],
      sequenceId: 'run "7"',
      sequenceEnd: true,
      priority: 1,
      parameters: { custom: "x" },
    });
    assert.equal(
      json,
      `{${INPUT_JSON},"outputs":[{"name":"OUTPUT","parameters":{"binary_data":true}}],` +
        `"parameters":{"custom":"x","priority":1,"sequence_id":"run \\"7\\"","sequence_end":true}}`,
    );
    assert.deepEqual(JSON.parse(json).parameters, {
      custom: "x",
      priority: 1,
      sequence_id: 'run "7"',
      sequence_end: true,
    });
  });

  test("without binary outputs or other parameters the object holds only the sequence", () => {
    assert.equal(
      httpJson({ inputs, binaryOutputs: false, sequenceId: "s" }),
      `{${INPUT_JSON},"parameters":{"sequence_id":"s"}}`,
    );
  });

  test("the wire engine's pieces carry the same JSON header", () => {
    const request: InferRequest = { inputs, sequenceId: U64_MAX, sequenceStart: true };
    const { pieces } = encodeInferRequestPieces(request);
    assert.equal(pieces[0]!.toString("utf8"), httpJson(request));
  });

  test("a request without sequence fields is unchanged", () => {
    assert.equal(httpJson({ inputs }), `{${INPUT_JSON},"parameters":{"binary_data_output":true}}`);
  });
});

describe("gRPC: parameters[sequence_*] in the ModelInferRequest", () => {
  function decoded(request: InferRequest) {
    return inference.ModelInferRequest.decode(encodeGrpcInferRequest("m", request));
  }

  test("a number id is int64_param; the flags are bool_param, false too", () => {
    const body = encodeGrpcInferRequest("m", {
      inputs,
      sequenceId: 42,
      sequenceStart: true,
      sequenceEnd: false,
    });
    assert.ok(body.includes(parameterEntry("sequence_id", [0x10, 42])));
    assert.ok(body.includes(parameterEntry("sequence_start", BOOL_TRUE)));
    assert.ok(body.includes(parameterEntry("sequence_end", BOOL_FALSE)));
    const p = inference.ModelInferRequest.decode(body).parameters;
    assert.equal(p["sequence_id"]!.parameter_choice, "int64_param");
    assert.equal(Number(p["sequence_id"]!.int64_param), 42);
    assert.equal(p["sequence_start"]!.bool_param, true);
    assert.equal(p["sequence_end"]!.parameter_choice, "bool_param");
    assert.equal(p["sequence_end"]!.bool_param, false);
  });

  test("2^64-1 is the int64 -1: the same 64 bits, a 10-byte varint", () => {
    const body = encodeGrpcInferRequest("m", { inputs, sequenceId: U64_MAX });
    const minusOne = [0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
    assert.ok(body.includes(parameterEntry("sequence_id", minusOne)));
    const value = decoded({ inputs, sequenceId: U64_MAX }).parameters["sequence_id"]!.int64_param!;
    assert.equal(value.toString(), "-1");
    assert.equal(BigInt.asUintN(64, BigInt(value.toString())), U64_MAX); // Triton's cast back to uint64
  });

  test("ids between 2^53 and 2^63 keep every bit", () => {
    for (const id of [2n ** 53n + 1n, 2n ** 63n - 1n, 2n ** 63n, 0x1234_5678_9abc_def0n]) {
      const value = decoded({ inputs, sequenceId: id }).parameters["sequence_id"]!.int64_param!;
      assert.equal(BigInt.asUintN(64, BigInt(value.toString())), id);
    }
  });

  test("a string id is string_param", () => {
    const body = encodeGrpcInferRequest("m", { inputs, sequenceId: "abc", sequenceEnd: true });
    assert.ok(body.includes(parameterEntry("sequence_id", [0x1a, 3, 0x61, 0x62, 0x63])));
    assert.ok(body.includes(parameterEntry("sequence_end", BOOL_TRUE)));
    const p = inference.ModelInferRequest.decode(body).parameters;
    assert.equal(p["sequence_id"]!.string_param, "abc");
    assert.equal(p["sequence_start"], undefined); // not given, not sent
  });

  test("the stream's encoding (without id, then withId) carries them too", () => {
    const body = withId(
      encodeGrpcInferRequestWithoutId("m", { inputs, sequenceId: 7n, sequenceStart: true }),
      "r1",
    );
    const message = inference.ModelInferRequest.decode(body);
    assert.equal(message.id, "r1");
    assert.equal(Number(message.parameters["sequence_id"]!.int64_param), 7);
    assert.equal(message.parameters["sequence_start"]!.bool_param, true);
  });

  test("a request without sequence fields has no sequence parameters", () => {
    assert.deepEqual(Object.keys(decoded({ inputs }).parameters), []);
  });
});

/** Requests both encoders must refuse, with what the message must say. */
const refused: [string, Partial<InferRequest>, RegExp][] = [
  ["a negative number", { sequenceId: -1 }, /sequenceId -1 is refused \(it is not an unsigned integer\)/],
  ["a fraction", { sequenceId: 1.5 }, /sequenceId 1\.5 is refused/],
  ["NaN", { sequenceId: Number.NaN }, /sequenceId NaN is refused/],
  ["0", { sequenceId: 0 }, /sequenceId 0 is refused \(0 means no sequence to Triton\)/],
  ["2^53 as a number", { sequenceId: 2 ** 53 }, /sequenceId 9007199254740992 is refused .*give a bigint/],
  ["0n", { sequenceId: 0n }, /sequenceId 0n is refused \(0 means no sequence/],
  ["-1n", { sequenceId: -1n }, /sequenceId -1n is refused \(it is outside the uint64 range\)/],
  [
    "2^64",
    { sequenceId: 2n ** 64n },
    /sequenceId 18446744073709551616n is refused \(it is outside the uint64/,
  ],
  ["an empty string", { sequenceId: "" }, /sequenceId "" is refused \("" means no sequence to Triton\)/],
  [
    "129 characters",
    { sequenceId: "x".repeat(129) },
    /sequenceId "x{32}"\.\.\. \(129 characters\) is refused/,
  ],
  ["no id type", { sequenceId: true as unknown as string }, /sequenceId a boolean is refused/],
  [
    "a flag that is no boolean",
    { sequenceStart: 1 as unknown as boolean },
    /sequenceStart must be true or false, got 1/,
  ],
  [
    "START without an id",
    { sequenceStart: true },
    /sequenceStart is true but the request has no sequence id/,
  ],
  ["END without an id", { sequenceEnd: true }, /sequenceEnd is true but the request has no sequence id/],
  [
    "sequenceId and parameters.sequence_id",
    { sequenceId: 1, parameters: { sequence_id: 1 } },
    /sequenceId and parameters\.sequence_id are both given; give only sequenceId/,
  ],
  [
    "sequenceStart and parameters.sequence_start",
    { sequenceId: 1, sequenceStart: false, parameters: { sequence_start: true } },
    /sequenceStart and parameters\.sequence_start are both given/,
  ],
  [
    "sequenceEnd and parameters.sequence_end",
    { sequenceId: 1, sequenceEnd: true, parameters: { sequence_end: true } },
    /sequenceEnd and parameters\.sequence_end are both given/,
  ],
];

describe("refused with InvalidArgumentError before anything is encoded", () => {
  for (const [name, fields, message] of refused) {
    test(name, () => {
      const request = { inputs, ...fields } as InferRequest;
      const expected = (e: unknown) => e instanceof InvalidArgumentError && message.test(e.message);
      assert.throws(() => encodeInferRequest(request), expected);
      assert.throws(() => encodeGrpcInferRequest("m", request), expected);
    });
  }

  test("accepted at the limits: 2^53-1, 1n, 2^64-1, 128 characters (code points, not UTF-16 units)", () => {
    for (const sequenceId of [Number.MAX_SAFE_INTEGER, 1, 1n, U64_MAX, "x".repeat(128), "😀".repeat(128)]) {
      encodeInferRequest({ inputs, sequenceId });
      encodeGrpcInferRequest("m", { inputs, sequenceId });
    }
  });

  test("flags with a raw parameters.sequence_id, and false flags without any id, are accepted", () => {
    const json = JSON.parse(httpJson({ inputs, sequenceStart: true, parameters: { sequence_id: 3 } }));
    assert.deepEqual(json.parameters, { sequence_id: 3, binary_data_output: true, sequence_start: true });
    encodeGrpcInferRequest("m", { inputs, sequenceStart: false, sequenceEnd: false });
  });
});

describe("over the HTTP client: a refused request never reaches the server", () => {
  let server: FakeServer;
  before(async () => {
    server = await startFakeServer((_req, res) =>
      sendJson(res, 200, {
        model_name: "m",
        outputs: [{ name: "OUTPUT", datatype: "INT32", shape: [1], data: [5] }],
      }),
    );
  });
  after(() => server.close());

  test("infer() and prepareInfer() reject; a valid request then sends the exact digits", async () => {
    await using client = createHttpClient({ url: server.url });
    await assert.rejects(client.infer("m", { inputs, sequenceId: -1 }), InvalidArgumentError);
    assert.throws(() => client.prepareInfer("m", { inputs, sequenceId: "" }), InvalidArgumentError);
    assert.equal(server.requests.length, 0);
    await client.infer("m", { inputs, sequenceId: U64_MAX, sequenceStart: true });
    assert.equal(server.requests.length, 1);
    const body = server.requests[0]!.body;
    const jsonLength = Number(server.requests[0]!.headers["inference-header-content-length"]);
    assert.match(
      body.toString("utf8", 0, jsonLength),
      /"sequence_id":18446744073709551615,"sequence_start":true}}$/,
    );
  });
});
