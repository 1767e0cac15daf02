/**
 * Client text echoed into an HTTP error is cut short (issue 36): a 10,000-character model name in the URL
 * comes back as its first 256 characters and its length, inside Triton's words, instead of whole.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MAX_ECHO_CHARS } from "../core/echo-text.js";
import { silentLogger } from "../core/logger.js";
import type { InferenceCore } from "../core/types.js";
import { createInferenceCore } from "../lifecycle/create-inference-core.js";
import { rawRequest } from "../testing/raw-http-client.js";
import { createHttpFrontEnd, type HttpFrontEnd } from "./http-server.js";

const REPOSITORY = new URL("../../../../examples/models", import.meta.url).pathname;
const LONG_NAME = "n".repeat(10_000);

let core: InferenceCore & { close(): Promise<void> };
let http: HttpFrontEnd;
before(async () => {
  core = await createInferenceCore({
    modelRepository: REPOSITORY,
    modelControlMode: "explicit",
    loadModels: ["simple"],
    logger: silentLogger,
  });
  http = await createHttpFrontEnd({
    core,
    port: 0,
    address: "127.0.0.1",
    maxInputSize: 1 << 20,
    logger: silentLogger,
  });
});
after(async () => {
  await http.close();
  await core.close();
});

describe("client text in HTTP errors", () => {
  for (const path of [
    `/v2/models/${LONG_NAME}`,
    `/v2/models/${LONG_NAME}/config`,
    `/v2/models/${LONG_NAME}/infer`,
  ]) {
    test(`${path.replace(LONG_NAME, "<10,000 chars>")}: 404 naming the model cut short`, async () => {
      const body = JSON.stringify({ inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1], data: [1] }] });
      const res = await rawRequest(http.url, path, path.endsWith("/infer") ? { method: "POST", body } : {});
      assert.equal(res.status, 404, res.body.toString().slice(0, 400));
      const { error } = JSON.parse(res.body.toString()) as { error: string };
      assert.equal(
        error,
        `Request for unknown model: '${"n".repeat(MAX_ECHO_CHARS)}… (10000 characters)' is not found`,
      );
    });
  }
  test("a short name is echoed whole, as Triton does", async () => {
    const res = await rawRequest(http.url, "/v2/models/nope/config", { method: "GET" });
    assert.equal(res.status, 404);
    assert.deepEqual(JSON.parse(res.body.toString()), {
      error: "Request for unknown model: 'nope' is not found",
    });
  });
});
