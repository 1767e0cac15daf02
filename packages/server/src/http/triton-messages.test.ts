/**
 * The HTTP layer's refusals word for word as Triton's HTTP server words them, with its status. Each case
 * names where Triton builds the message (server src/http_server.cc unless said otherwise; TritonJson's
 * texts are common include/triton/common/triton_json.h, INTERNAL there, so 500).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { silentLogger } from "../core/logger.js";
import { createFakeCore, type FakeCore } from "../testing/fake-core.js";
import { type RawResponse, rawRequest } from "../testing/raw-http-client.js";
import { createHttpFrontEnd, type HttpFrontEnd } from "./http-server.js";

const MAX_INPUT = 1 << 16;
const NON_STRING = "attempt to access JSON non-string as string";
const NON_UNSIGNED = "attempt to access JSON non-unsigned-integer as unsigned-integer";
const NON_BOOLEAN = "attempt to access JSON non-boolean as boolean";

let core: FakeCore;
let server: HttpFrontEnd;

before(async () => {
  core = createFakeCore();
  server = await createHttpFrontEnd({
    core,
    port: 0,
    address: "127.0.0.1",
    maxInputSize: MAX_INPUT,
    logger: silentLogger,
  });
});
after(async () => {
  await server.close();
});

function post(
  path: string,
  body: unknown,
  headers: Record<string, string | number> = {},
): Promise<RawResponse> {
  return rawRequest(server.url, path, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function expectAnswer(res: RawResponse, status: number, message: string, what: string) {
  assert.equal(res.status, status, `${what}: ${res.body.toString()}`);
  assert.equal((JSON.parse(res.body.toString()) as { error: string }).error, message, what);
}

const fp32 = (extra: Record<string, unknown> = {}) => ({
  name: "INPUT0",
  datatype: "FP32",
  shape: [1, 2],
  data: [1, 2],
  ...extra,
});

describe("infer request refusals, as Triton's", { timeout: 60_000 }, () => {
  test("request-level fields (ParseJsonTritonRequestID, ParseJsonTritonParams, ParseJsonTritonIO)", async () => {
    const cases: [string, unknown, number, string][] = [
      ["id not a string", { id: 7, inputs: [] }, 500, `Unable to parse 'id': ${NON_STRING}`],
      [
        "parameters not an object",
        { parameters: [1], inputs: [] },
        500,
        "failed to get request params.: attempt to get members for non-object",
      ],
      [
        "priority negative",
        { parameters: { priority: -1 }, inputs: [] },
        500,
        `Unable to parse 'priority': ${NON_UNSIGNED}`,
      ],
      [
        "timeout a string",
        { parameters: { timeout: "1" }, inputs: [] },
        500,
        `Unable to parse 'timeout': ${NON_UNSIGNED}`,
      ],
      [
        "binary_data_output a number",
        { parameters: { binary_data_output: 1 }, inputs: [] },
        500,
        `Unable to parse 'binary_data_output': ${NON_BOOLEAN}`,
      ],
      [
        "sequence_start a string",
        { parameters: { sequence_start: "yes" }, inputs: [] },
        500,
        `Unable to parse 'sequence_start': ${NON_BOOLEAN}`,
      ],
      [
        "a parameter that is an array",
        { parameters: { custom: [1] }, inputs: [] },
        400,
        "parameter 'custom' has invalid type. It should be either 'int', 'bool', or 'string'.",
      ],
      [
        "no inputs member",
        {},
        500,
        "Unable to parse 'inputs': attempt to access non-existing object member 'inputs'",
      ],
      [
        "inputs not an array",
        { inputs: {} },
        500,
        "Unable to parse 'inputs': attempt to access JSON non-array as array",
      ],
      [
        "a document that is an array",
        [],
        500,
        "Unable to parse 'inputs': attempt to access non-existing object member 'inputs'",
      ],
      [
        "outputs not an array",
        { inputs: [fp32()], outputs: {} },
        500,
        "Unable to parse 'outputs': attempt to access JSON non-array as array",
      ],
    ];
    for (const [what, body, status, message] of cases) {
      await expectAnswer(await post("/v2/models/identity_fp32/infer", body), status, message, what);
    }
  });

  test("a double-valued parameter is kept, as Triton keeps it (SetTritonParameterFromJsonParameter)", async () => {
    const before = core.received.length;
    const res = await post("/v2/models/identity_fp32/infer", {
      parameters: { ratio: 0.25 },
      inputs: [fp32()],
    });
    assert.equal(res.status, 200, res.body.toString());
    assert.deepEqual(core.received[before]!.parameters, { ratio: 0.25 });
  });

  test("input fields (ValidateInputContentType, then name, datatype, shape, binary_data_size)", async () => {
    const cases: [string, unknown, number, string][] = [
      [
        "data and binary_data_size",
        fp32({ parameters: { binary_data_size: 8 } }),
        400,
        "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', " +
          "'shared_memory_region' in 'parameters'. But set 'data' 'binary_data_size'",
      ],
      [
        "neither, and no name either (the one-of check comes first)",
        { datatype: "FP32", shape: [1] },
        400,
        "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', " +
          "'shared_memory_region' in 'parameters'. But no field is set",
      ],
      [
        "no name",
        { datatype: "FP32", shape: [1], data: [1] },
        500,
        "Unable to parse 'name': attempt to access non-existing object member 'name'",
      ],
      ["datatype a number", fp32({ datatype: 32 }), 500, `Unable to parse 'datatype': ${NON_STRING}`],
      [
        "a negative dimension (Triton's QA test_negative_dimensions)",
        fp32({ shape: [2, -5] }),
        500,
        `Unable to parse 'shape': ${NON_UNSIGNED}`,
      ],
      [
        "binary_data_size a string",
        { name: "INPUT0", datatype: "FP32", shape: [1], parameters: { binary_data_size: "8" } },
        500,
        `Unable to parse 'binary_data_size': ${NON_UNSIGNED}`,
      ],
      [
        "a shared-memory input: no region is ever registered (shared_memory_manager.cc)",
        { name: "INPUT0", datatype: "FP32", shape: [1], parameters: { shared_memory_region: "r0" } },
        404,
        "Unable to find shared memory region: 'r0'",
      ],
      [
        "an element count past int64",
        fp32({ shape: [4294967296, 4294967296, 2] }),
        400,
        "invalid shape for input 'INPUT0': shape [4294967296,4294967296,2] causes total element count to exceed maximum size of 9223372036854775807",
      ],
      [
        "a byte size past int64",
        fp32({ shape: [4294967296, 1073741824] }),
        400,
        "byte size overflow for input 'INPUT0': element count (4611686018427387904) * data type size (4) exceeds maximum allowed size (9223372036854775807)",
      ],
      [
        "a JSON tensor over --http-max-input-size",
        fp32({ shape: [1, 16385] }),
        400,
        `JSON input 'INPUT0' has a byte_size (65540 bytes) that exceeds the maximum allowed value of ${MAX_INPUT} bytes. Use --http-max-input-size to increase the limit.`,
      ],
      [
        "an unknown datatype with JSON data (ReadDataFromJson)",
        fp32({ datatype: "FP128" }),
        400,
        "invalid datatype for input INPUT0",
      ],
    ];
    for (const [what, input, status, message] of cases) {
      await expectAnswer(
        await post("/v2/models/identity_fp32/infer", { inputs: [input] }),
        status,
        message,
        what,
      );
    }
  });

  test("data elements (ReadDataFromJsonHelper, JsonBytesArrayByteSize)", async () => {
    const nested = (depth: number): unknown => (depth === 0 ? 1 : [nested(depth - 1)]);
    const cases: [string, string, unknown, number, string][] = [
      [
        "FP32 a string",
        "fp32",
        fp32({ data: [1, "2"] }),
        500,
        "Unable to parse 'data': attempt to access JSON non-number as double",
      ],
      [
        "BOOL a number",
        "bool",
        { name: "INPUT0", datatype: "BOOL", shape: [1, 1], data: [1] },
        500,
        `Unable to parse 'data': ${NON_BOOLEAN}`,
      ],
      [
        "BYTES a number",
        "bytes",
        { name: "INPUT0", datatype: "BYTES", shape: [1, 2], data: ["a", 2] },
        500,
        `Unable to parse JSON bytes array: ${NON_STRING}`,
      ],
      [
        "data not an array",
        "fp32",
        fp32({ data: 1 }),
        500,
        "Unable to parse 'data': attempt to access JSON non-array as array",
      ],
      [
        "more elements than the shape",
        "fp32",
        fp32({ data: [1, 2, 3] }),
        500,
        "Unable to parse 'data': Shape does not match true shape of 'data' field",
      ],
      [
        "fewer elements than the shape",
        "fp32",
        fp32({ data: [1] }),
        500,
        "Failed to parse 'data' field: shape does not match true shape",
      ],
      [
        "nested 100 deep (HTTP_MAX_JSON_NESTING_DEPTH)",
        "fp32",
        fp32({ shape: [1], data: [nested(99)] }),
        400,
        "Unable to parse 'data': JSON nesting depth exceeds maximum allowed limit (100)",
      ],
      [
        "BYTES nested 100 deep",
        "bytes",
        { name: "INPUT0", datatype: "BYTES", shape: [1], data: [nested(99)] },
        400,
        "JSON nesting depth exceeds maximum allowed limit (100)",
      ],
      [
        "BYTES over --http-max-input-size counted as Triton counts it (each string's bytes + 4)",
        "bytes",
        { name: "INPUT0", datatype: "BYTES", shape: [1, 16385], data: Array(16385).fill("") },
        400,
        `JSON input 'INPUT0' has a byte_size (65540 bytes) that exceeds the maximum allowed value of ${MAX_INPUT} bytes. Use --http-max-input-size to increase the limit.`,
      ],
    ];
    for (const [what, model, input, status, message] of cases) {
      await expectAnswer(
        await post(`/v2/models/identity_${model}/infer`, { inputs: [input] }),
        status,
        message,
        what,
      );
    }
    // 99 levels are taken; a shape without elements is not read at all.
    const deep = await post("/v2/models/identity_fp32/infer", {
      inputs: [fp32({ shape: [1], data: [nested(98)] })],
    });
    assert.equal(deep.status, 200, deep.body.toString());
    const empty = await post("/v2/models/identity_fp32/infer", {
      inputs: [fp32({ shape: [0, 2], data: "ignored" })],
    });
    assert.equal(empty.status, 200, empty.body.toString());
  });

  test("output fields (ValidateOutputParameter, then name, classification, binary_data)", async () => {
    const output = (parameters: Record<string, unknown>) => ({ name: "OUTPUT0", parameters });
    const cases: [string, unknown, number, string][] = [
      [
        "shared memory and classification",
        output({ shared_memory_region: "r", classification: 1 }),
        400,
        "Output can't set both 'shared_memory_region' and 'classification'",
      ],
      [
        "shared memory and binary_data",
        output({ shared_memory_region: "r", binary_data: true }),
        400,
        "Output can't set both 'shared_memory_region' and 'binary_data'",
      ],
      [
        "no name",
        { parameters: {} },
        500,
        "Unable to parse 'name': attempt to access non-existing object member 'name'",
      ],
      [
        "classification negative",
        output({ classification: -1 }),
        500,
        `Unable to set 'classification': ${NON_UNSIGNED}`,
      ],
      [
        "binary_data a string",
        output({ binary_data: "true" }),
        500,
        `Unable to parse 'binary_data': ${NON_BOOLEAN}`,
      ],
      [
        "a shared-memory output",
        output({ shared_memory_region: "r1" }),
        404,
        "Unable to find shared memory region: 'r1'",
      ],
    ];
    for (const [what, out, status, message] of cases) {
      const res = await post("/v2/models/identity_fp32/infer", { inputs: [fp32()], outputs: [out] });
      await expectAnswer(res, status, message, what);
    }
  });

  test("Inference-Header-Content-Length read as std::stoi reads it (GetInferenceHeaderLength)", async () => {
    const body = JSON.stringify({ inputs: [fp32()] });
    const outOfRange = await post("/v2/models/identity_fp32/infer", body, {
      "Inference-Header-Content-Length": "99999999999",
    });
    await expectAnswer(
      outOfRange,
      400,
      "Unable to parse Inference-Header-Content-Length, value is out of range [ -2147483648, 2147483647 ], got: 99999999999",
      "out of int32",
    );
    // stoi stops at the first character that is not a digit: "12abc" is 12.
    const trailing = await post("/v2/models/identity_fp32/infer", body, {
      "Inference-Header-Content-Length": `${body.length}abc`,
    });
    assert.equal(trailing.status, 200, trailing.body.toString());
  });
});

describe("repository request refusals, as Triton's (HandleRepositoryIndex, HandleRepositoryControl)", () => {
  test("index, load and unload bodies", async () => {
    await expectAnswer(
      await post("/v2/repository/index", { ready: 1 }),
      400,
      "Invalid value for 'ready': expected a boolean",
      "ready not a boolean",
    );
    const malformed = await post("/v2/repository/index", "{");
    assert.equal(malformed.status, 500);
    assert.match(malformed.body.toString(), /failed to parse the request JSON buffer: /);
    await expectAnswer(
      await post("/v2/repository/models/scores/load", { parameters: { config: 5 } }),
      500,
      NON_STRING,
      "a load parameter that is not a string",
    );
    await expectAnswer(
      await post("/v2/repository/models/scores/load", { parameters: { other: "x" } }),
      500,
      "unexpected error on creating Triton parameter",
      "a load parameter Triton does not know",
    );
    // Triton overwrites the parse error of unload_dependents with the unload's result: it unloads.
    assert.equal(
      (await post("/v2/repository/models/scores/unload", { parameters: { unload_dependents: 1 } })).status,
      200,
    );
    assert.equal((await post("/v2/repository/models/scores/load", "")).status, 200);
  });
});
