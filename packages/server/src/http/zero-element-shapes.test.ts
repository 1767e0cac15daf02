/**
 * A request whose shape holds no elements but a huge dimension (issue 14's probe: `[0, 9007199254740991]`
 * answered 500 "Tensor.dims[1] is invalid" from onnxruntime) is the request's own mistake: 400 with a
 * message naming the input, as JSON data and as binary data.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { silentLogger } from "../core/logger.js";
import { type RunningServer, startServer } from "../server.js";
import { binaryBody, rawRequest } from "../testing/raw-http-client.js";

const REPOSITORY = new URL("../../../../examples/models", import.meta.url).pathname;
let server: RunningServer;

before(async () => {
  server = await startServer({
    modelRepository: REPOSITORY,
    httpPort: 0,
    metricsPort: false,
    modelControlMode: "explicit",
    loadModels: ["identity_int32"],
    logger: silentLogger,
  });
});
after(async () => {
  await server.close();
});

const MESSAGE = (dim: number) =>
  `[request id: <id_unknown>] input 'INPUT0' of model 'identity_int32' has dimension ${dim}; ` +
  "onnxruntime-node takes dimensions up to 4294967295";

describe("zero-element shapes with huge dimensions", { timeout: 60_000 }, () => {
  for (const dim of [9007199254740991, 4294967296]) {
    test(`[0, ${dim}] as JSON data: 400`, async () => {
      const res = await rawRequest(server.httpUrl, "/v2/models/identity_int32/infer", {
        method: "POST",
        body: JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "INT32", shape: [0, dim], data: [] }] }),
      });
      assert.equal(res.status, 400, res.body.toString());
      assert.deepEqual(JSON.parse(res.body.toString()), { error: MESSAGE(dim) });
    });

    test(`[0, ${dim}] as binary data: 400`, async () => {
      const bin = binaryBody(
        {
          inputs: [
            { name: "INPUT0", datatype: "INT32", shape: [0, dim], parameters: { binary_data_size: 0 } },
          ],
        },
        [],
      );
      const res = await rawRequest(server.httpUrl, "/v2/models/identity_int32/infer", {
        method: "POST",
        headers: { "Inference-Header-Content-Length": bin.headerLength },
        body: bin.body,
      });
      assert.equal(res.status, 400, res.body.toString());
      assert.deepEqual(JSON.parse(res.body.toString()), { error: MESSAGE(dim) });
    });
  }

  test("the largest dimension onnxruntime takes, with no elements, is served", async () => {
    const res = await rawRequest(server.httpUrl, "/v2/models/identity_int32/infer", {
      method: "POST",
      body: JSON.stringify({
        inputs: [{ name: "INPUT0", datatype: "INT32", shape: [0, 4294967295], data: [] }],
      }),
    });
    assert.equal(res.status, 200, res.body.toString());
  });
});
