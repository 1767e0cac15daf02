/**
 * 64-bit integers in JSON through tbench-server and onnxruntime (identity models of examples/models):
 * every INT64 and UINT64 value arrives and returns exactly, as JSON and as binary, and a value that is
 * not one Triton refuses with Triton's words (rapidjson's IsInt64 / IsUint64 through TritonJson, 500).
 * Narrower integer types refuse what they cannot hold instead of storing it wrapped.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { silentLogger } from "../core/logger.js";
import { type RunningServer, startServer } from "../server.js";
import { binaryBody, type RawResponse, rawRequest, splitBinaryResponse } from "../testing/raw-http-client.js";

const REPOSITORY = new URL("../../../../examples/models", import.meta.url).pathname;
const MODELS = [
  "identity_int64",
  "identity_uint64",
  "identity_int8",
  "identity_uint8",
  "identity_int32",
  "identity_fp32",
  "identity_fp64",
];

const INT64 = ["9007199254740993", "9223372036854775807", "-9223372036854775808", "0", "-1"];
const UINT64 = ["18446744073709551615", "9007199254740993", "9223372036854775808", "0"];

let server: RunningServer;

before(async () => {
  server = await startServer({
    modelRepository: REPOSITORY,
    httpPort: 0,
    metricsPort: false,
    modelControlMode: "explicit",
    loadModels: MODELS,
    logger: silentLogger,
  });
});
after(async () => {
  await server.close();
});

/** Posts JSON text as written: the digits must reach the server without passing through a double. */
function postText(model: string, text: string): Promise<RawResponse> {
  return rawRequest(server.httpUrl, `/v2/models/${model}/infer`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: text,
  });
}

function request(datatype: string, values: readonly string[], binaryOutput: boolean): string {
  return (
    `{"inputs":[{"name":"INPUT0","datatype":"${datatype}","shape":[1,${values.length}],` +
    `"data":[${values.join(",")}]}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":${binaryOutput}}}]}`
  );
}

function errorOf(res: RawResponse): string {
  return (JSON.parse(res.body.toString()) as { error: string }).error;
}

describe("INT64 and UINT64 in JSON are exact", { timeout: 60_000 }, () => {
  for (const [datatype, values, Typed] of [
    ["INT64", INT64, BigInt64Array],
    ["UINT64", UINT64, BigUint64Array],
  ] as const) {
    const model = `identity_${datatype.toLowerCase()}`;

    test(`${datatype}: JSON in, JSON out, digit for digit`, async () => {
      const res = await postText(model, request(datatype, values, false));
      assert.equal(res.status, 200, res.body.toString());
      // The response text itself: JSON.parse here would round the values the test is about.
      assert.match(res.body.toString(), new RegExp(`"data":\\[${values.join(",")}\\]`));
    });

    test(`${datatype}: JSON in, binary out`, async () => {
      const res = await postText(model, request(datatype, values, true));
      assert.equal(res.status, 200, res.body.toString());
      const { rest } = splitBinaryResponse(res);
      const out = new Typed(new Uint8Array(rest).buffer);
      assert.deepEqual([...out].map(String), values);
    });

    test(`${datatype}: binary in, JSON out`, async () => {
      const data = Typed.from(values.map((v) => BigInt(v)) as bigint[]);
      const bin = binaryBody(
        {
          inputs: [
            {
              name: "INPUT0",
              datatype,
              shape: [1, values.length],
              parameters: { binary_data_size: data.byteLength },
            },
          ],
        },
        [Buffer.from(data.buffer)],
      );
      const res = await rawRequest(server.httpUrl, `/v2/models/${model}/infer`, {
        method: "POST",
        headers: { "Inference-Header-Content-Length": bin.headerLength },
        body: bin.body,
      });
      assert.equal(res.status, 200, res.body.toString());
      assert.match(res.body.toString(), new RegExp(`"data":\\[${values.join(",")}\\]`));
    });
  }

  test("the digits are found whatever else the document holds: nesting, escapes, look-alike strings", async () => {
    const text =
      ' { "id" : "\\"data\\":[1], [\\\\]" , "inputs" : [ { "name" : "INPUT0", "parameters" : { "data" : [ 5 ] },' +
      ' "datatype" : "INT64", "shape" : [ 1 , 4 ], "d\\u0061ta" : [ [ 9223372036854775807 , -9223372036854775808 ] ,' +
      ' [ 9007199254740993 , { } ] ] , "data" : [ [ 9223372036854775806 , -9223372036854775807 ] , [ 9007199254740995 , 7 ] ] } ] }';
    const res = await postText("identity_int64", text);
    assert.equal(res.status, 200, res.body.toString());
    assert.match(
      res.body.toString(),
      /"data":\[9223372036854775806,-9223372036854775807,9007199254740995,7\]/,
    );
    assert.match(res.body.toString(), /"id":"\\"data\\":\[1\], \[\\\\\]"/);
  });

  test("a value outside the type is refused as Triton refuses it, never changed", async () => {
    const signed = "Unable to parse 'data': attempt to access JSON non-signed-integer as signed-integer";
    const unsigned =
      "Unable to parse 'data': attempt to access JSON non-unsigned-integer as unsigned-integer";
    const cases: [string, string, string, number, string][] = [
      ["INT64 2^63", "INT64", "9223372036854775808", 500, signed],
      ["INT64 -2^63-1", "INT64", "-9223372036854775809", 500, signed],
      ["INT64 a fraction", "INT64", "1.5", 500, signed],
      ["INT64 an exponent", "INT64", "1e3", 500, signed],
      ["INT64 a string", "INT64", '"1"', 500, signed],
      ["UINT64 2^64", "UINT64", "18446744073709551616", 500, unsigned],
      ["UINT64 -1", "UINT64", "-1", 500, unsigned],
      ["INT32 2^63 (past int64 too)", "INT32", "9223372036854775808", 500, signed],
      ["UINT8 -1", "UINT8", "-1", 500, unsigned],
      [
        "INT8 300 (Triton would store 44)",
        "INT8",
        "300",
        400,
        "Unable to parse 'data': element 1 of input 'INPUT0' for model 'identity_int8' is 300, outside the range of INT8 [-128, 127]",
      ],
      [
        "UINT8 256 (Triton would store 0)",
        "UINT8",
        "256",
        400,
        "Unable to parse 'data': element 1 of input 'INPUT0' for model 'identity_uint8' is 256, outside the range of UINT8 [0, 255]",
      ],
      [
        "INT32 2^31",
        "INT32",
        "2147483648",
        400,
        "Unable to parse 'data': element 1 of input 'INPUT0' for model 'identity_int32' is 2147483648, outside the range of INT32 [-2147483648, 2147483647]",
      ],
    ];
    for (const [what, datatype, value, status, message] of cases) {
      const res = await postText(
        `identity_${datatype.toLowerCase()}`,
        request(datatype, ["1", value], false),
      );
      assert.equal(res.status, status, `${what}: ${res.body.toString()}`);
      assert.equal(errorOf(res), message, what);
    }
    // Floats past their type's range (issue 14: FP32 1e300 came back as null).
    const floats: [string, string, string][] = [
      [
        "FP32",
        "1e300",
        "is 1e+300, outside the range of FP32 [-3.4028234663852886e+38, 3.4028234663852886e+38]",
      ],
      [
        "FP32",
        "-3.5e38",
        "is -3.5e+38, outside the range of FP32 [-3.4028234663852886e+38, 3.4028234663852886e+38]",
      ],
      [
        "FP64",
        "1e400",
        "is a number too large for a double, outside the range of FP64 [-1.7976931348623157e+308, 1.7976931348623157e+308]",
      ],
    ];
    for (const [datatype, value, words] of floats) {
      const model = `identity_${datatype.toLowerCase()}`;
      const res = await postText(model, request(datatype, ["1", value], false));
      assert.equal(res.status, 400, `${datatype} ${value}: ${res.body.toString()}`);
      assert.equal(
        errorOf(res),
        `Unable to parse 'data': element 1 of input 'INPUT0' for model '${model}' ${words}`,
      );
    }
    // FP32's largest value, and tiny values that round to zero, pass.
    const fp32 = await postText("identity_fp32", request("FP32", ["3.4028234663852886e38", "1e-300"], false));
    assert.match(fp32.body.toString(), /"data":\[3\.4028234663852886e\+38,0\]/);
    // The extremes of the narrow types pass unchanged.
    const edges = await postText("identity_int8", request("INT8", ["-128", "127"], false));
    assert.match(edges.body.toString(), /"data":\[-128,127\]/);
  });
});
