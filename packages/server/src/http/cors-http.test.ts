/**
 * CORS on real sockets (cors.ts through http-server.ts), against the bundled example models: preflights
 * allowed and refused, the headers of answers (JSON, errors 4xx and 5xx, binary tensors, compressed, the
 * 408 written straight to the socket), `*` against exact origins, credentials, off by default, and
 * restricted APIs that stay restricted for pages. Nothing here waits on a clock but the one 408.
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, test } from "node:test";
import { gunzipSync } from "node:zlib";
import { silentLogger } from "../core/logger.js";
import type { RestrictedApis } from "../core/restricted-api.js";
import type { InferenceCore } from "../core/types.js";
import { createInferenceCore } from "../lifecycle/create-inference-core.js";
import { startServer } from "../server.js";
import {
  identityFp32Body,
  type RawRequestOptions,
  type RawResponse,
  rawRequest,
  splitBinaryResponse,
} from "../testing/raw-http-client.js";
import { CorsConfigError, type HttpCorsOptions } from "./cors.js";
import { createHttpFrontEnd, type HttpFrontEnd, type HttpFrontEndOptions } from "./http-server.js";

const REPOSITORY = new URL("../../../../examples/models", import.meta.url).pathname;
const APP = "https://app.example:8443";
const EVIL = "https://evil.example";
const LONG_MS = 60_000;
const INFER = "/v2/models/identity_fp32/infer";

let core: InferenceCore & { close(): Promise<void> };
const frontEnds: HttpFrontEnd[] = [];

async function frontEnd(
  cors: HttpCorsOptions | undefined,
  more: Partial<HttpFrontEndOptions> = {},
): Promise<HttpFrontEnd> {
  const http = await createHttpFrontEnd({
    core,
    port: 0,
    address: "127.0.0.1",
    maxInputSize: 1 << 20,
    logger: silentLogger,
    headerTimeoutMs: LONG_MS,
    requestTimeoutMs: LONG_MS,
    sendTimeoutMs: LONG_MS,
    ...(cors !== undefined ? { cors } : {}),
    ...more,
  });
  frontEnds.push(http);
  return http;
}

let off: HttpFrontEnd;
let exact: HttpFrontEnd;
let any: HttpFrontEnd;
let withCredentials: HttpFrontEnd;

before(async () => {
  core = await createInferenceCore({
    modelRepository: REPOSITORY,
    modelControlMode: "explicit",
    loadModels: ["identity_fp32", "simple"],
    logger: silentLogger,
  });
  off = await frontEnd(undefined);
  exact = await frontEnd({ allowOrigins: [APP], allowHeaders: ["X-Request-Id"], maxAgeSecs: 120 });
  any = await frontEnd({ allowOrigins: ["*"] });
  withCredentials = await frontEnd({ allowOrigins: [APP], allowCredentials: true });
});
after(async () => {
  for (const http of frontEnds) await http.close();
  await core.close();
});

/** The answer's Access-Control-* and Vary headers, by lower-case name. */
function corsHeaders(response: RawResponse): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(response.headers).filter(
      ([name]) => name.startsWith("access-control-") || name === "vary",
    ),
  );
}

const errorOf = (response: RawResponse) => (JSON.parse(response.body.toString()) as { error: string }).error;

/** A browser's preflight for a POST of `headers` to `path`. */
function preflight(http: HttpFrontEnd, path: string, origin: string, extra: Record<string, string> = {}) {
  return rawRequest(http.url, path, {
    method: "OPTIONS",
    headers: {
      Origin: origin,
      "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": "content-type,inference-header-content-length",
      ...extra,
    },
  });
}

function inferenceCount(model: string): number {
  return core.modelStatistics(model).reduce((sum, stats) => sum + stats.inference_count, 0);
}

/** A binary identity_fp32 infer from `origin`. */
function binaryInfer(
  http: HttpFrontEnd,
  origin: string | undefined,
  more: RawRequestOptions["headers"] = {},
) {
  const { body, headerLength } = identityFp32Body(4, 1.5);
  return rawRequest(http.url, INFER, {
    method: "POST",
    headers: {
      "Content-Type": "application/octet-stream",
      "Inference-Header-Content-Length": headerLength,
      ...(origin !== undefined ? { Origin: origin } : {}),
      ...more,
    },
    body,
  });
}

const EXPOSED = "Inference-Header-Content-Length, Content-Encoding";

describe("CORS off (the default)", () => {
  test("a preflight is answered as any OPTIONS was: 405, no CORS header", async () => {
    const answer = await preflight(off, INFER, APP);
    assert.equal(answer.status, 405);
    assert.equal(errorOf(answer), "Method Not Allowed");
    assert.deepEqual(corsHeaders(answer), {});
  });

  test("answers carry no CORS header, whatever the Origin", async () => {
    const answer = await binaryInfer(off, APP);
    assert.equal(answer.status, 200);
    assert.deepEqual(corsHeaders(answer), {});
    assert.deepEqual(corsHeaders(await rawRequest(off.url, "/v2/nothing", { headers: { Origin: APP } })), {});
  });
});

describe("exact origins", () => {
  test("a preflight from an allowed origin: 204 with the Access-Control-Allow-* headers, no body", async () => {
    const answer = await preflight(exact, INFER, APP);
    assert.equal(answer.status, 204);
    assert.equal(answer.body.byteLength, 0);
    assert.equal(answer.headers["content-length"], undefined);
    assert.deepEqual(corsHeaders(answer), {
      "access-control-allow-origin": APP,
      "access-control-allow-methods": "POST",
      "access-control-allow-headers":
        "Content-Type, Inference-Header-Content-Length, Content-Encoding, Accept-Encoding, traceparent, " +
        "tracestate, X-Request-Id",
      "access-control-max-age": "120",
      vary: "Origin",
    });
    const get = await rawRequest(exact.url, "/v2/models/simple/ready", {
      method: "OPTIONS",
      headers: { Origin: APP, "Access-Control-Request-Method": "GET" },
    });
    assert.equal(get.status, 204);
    assert.equal(get.headers["access-control-allow-methods"], "GET");
  });

  test("a preflight runs nothing: an unknown model's infer is cleared, and no model counts a request", async () => {
    const before = inferenceCount("identity_fp32");
    assert.equal((await preflight(exact, "/v2/models/no_such_model/infer", APP)).status, 204);
    const { body } = identityFp32Body(4, 1.5);
    // A hostile preflight with an infer body: answered, the body discarded, nothing run.
    const withBody = await rawRequest(exact.url, INFER, {
      method: "OPTIONS",
      // node:http's client sends no length for an OPTIONS body unless told.
      headers: { Origin: APP, "Access-Control-Request-Method": "POST", "Content-Length": body.byteLength },
      body,
    });
    assert.equal(withBody.status, 204);
    assert.equal(inferenceCount("identity_fp32"), before);
  });

  test("refused preflights: 403 (404 for no endpoint) with the reason and no Access-Control-Allow-*", async () => {
    const cases: [Promise<RawResponse>, number, string][] = [
      [
        preflight(exact, INFER, EVIL),
        403,
        "CORS preflight refused: origin 'https://evil.example' is not allowed (--http-cors-allow-origin)",
      ],
      [
        preflight(exact, INFER, APP, { "Access-Control-Request-Headers": "content-type,x-other" }),
        403,
        "CORS preflight refused: request header 'x-other' is not allowed (--http-cors-allow-headers)",
      ],
      [
        preflight(exact, INFER, APP, { "Access-Control-Request-Method": "DELETE" }),
        403,
        "CORS preflight refused: method 'DELETE' is not allowed on this endpoint",
      ],
      [
        preflight(exact, "/v2/health/live", APP),
        403,
        "CORS preflight refused: method 'POST' is not allowed on this endpoint",
      ],
      [preflight(exact, "/v2/nothing", APP), 404, "Not Found"],
    ];
    for (const [pending, status, error] of cases) {
      const answer = await pending;
      assert.equal(answer.status, status, error);
      assert.equal(errorOf(answer), error);
      assert.deepEqual(corsHeaders(answer), { vary: "Origin" }, error);
    }
  });

  test("an OPTIONS that is no preflight (no Access-Control-Request-Method) is answered as before: 405", async () => {
    const answer = await rawRequest(exact.url, INFER, { method: "OPTIONS", headers: { Origin: APP } });
    assert.equal(answer.status, 405);
    assert.equal(answer.headers["access-control-allow-origin"], APP);
  });

  test("a binary tensor answer: the origin echoed, its header exposed, so a page can split it", async () => {
    const answer = await binaryInfer(exact, APP);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers["content-type"], "application/octet-stream");
    assert.deepEqual(corsHeaders(answer), {
      "access-control-allow-origin": APP,
      "access-control-expose-headers": EXPOSED,
      vary: "Origin",
    });
    const { json, rest } = splitBinaryResponse(answer);
    assert.equal((json as { model_name: string }).model_name, "identity_fp32");
    assert.deepEqual(
      [...new Float32Array(rest.buffer.slice(rest.byteOffset, rest.byteOffset + rest.byteLength))],
      [1.5, 1.5, 1.5, 1.5],
    );
  });

  test("a compressed answer keeps them", async () => {
    const answer = await binaryInfer(exact, APP, { "Accept-Encoding": "gzip" });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers["content-encoding"], "gzip");
    assert.equal(answer.headers["access-control-allow-origin"], APP);
    const length = Number(answer.headers["inference-header-content-length"]);
    const json = JSON.parse(gunzipSync(answer.body).subarray(0, length).toString()) as { model_name: string };
    assert.equal(json.model_name, "identity_fp32");
  });

  test("errors carry them too: 404, 405, 400, 500, 503", async () => {
    const asked = { headers: { Origin: APP } };
    const answers = await Promise.all([
      rawRequest(exact.url, "/v2/nothing", asked),
      rawRequest(exact.url, "/v2/models/identity_fp32/infer", asked),
      rawRequest(exact.url, INFER, {
        method: "POST",
        headers: { Origin: APP, "Inference-Header-Content-Length": "x" },
        body: "{}",
      }),
      // A body that is no JSON is Triton's INTERNAL (500).
      rawRequest(exact.url, INFER, { method: "POST", headers: { Origin: APP }, body: "{" }),
      rawRequest(exact.url, "/v2/models/no_such_model", asked),
      rawRequest(exact.url, "/v2/trace/setting", asked),
    ]);
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [404, 405, 400, 500, 404, 503],
    );
    for (const answer of answers)
      assert.deepEqual(corsHeaders(answer), {
        "access-control-allow-origin": APP,
        "access-control-expose-headers": EXPOSED,
        vary: "Origin",
      });
  });

  test("another origin, or none, is served without Access-Control-Allow-Origin, but with Vary: Origin", async () => {
    for (const origin of [EVIL, "null", `${APP}/`, undefined]) {
      const answer = await binaryInfer(exact, origin);
      assert.equal(answer.status, 200);
      assert.deepEqual(corsHeaders(answer), { vary: "Origin" }, String(origin));
    }
  });

  test("the 408 of a body that never arrives, written straight to the socket, carries them", async () => {
    const slow = await frontEnd({ allowOrigins: [APP] }, { requestTimeoutMs: 300 });
    const socket = connect(slow.port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => {});
    const closed = new Promise((resolve) => socket.once("close", resolve));
    socket.write(
      `POST ${INFER} HTTP/1.1\r\nHost: x\r\nOrigin: ${APP}\r\nContent-Length: 100\r\n\r\n{"inputs":`,
    );
    await closed;
    const text = Buffer.concat(chunks).toString("latin1");
    assert.match(text, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    const head = text.slice(0, text.indexOf("\r\n\r\n")).split("\r\n");
    assert.ok(head.includes(`Access-Control-Allow-Origin: ${APP}`), text);
    assert.ok(head.includes("Vary: Origin"), text);
    assert.ok(head.includes(`Access-Control-Expose-Headers: ${EXPOSED}`), text);
  });
});

describe("any origin ('*')", () => {
  test("preflights and answers say '*' to every origin, 'null' included, and need no Vary", async () => {
    const pre = await preflight(any, INFER, "https://anything.example");
    assert.equal(pre.status, 204);
    assert.deepEqual(corsHeaders(pre), {
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "POST",
      "access-control-allow-headers":
        "Content-Type, Inference-Header-Content-Length, Content-Encoding, Accept-Encoding, traceparent, tracestate",
      "access-control-max-age": "600",
    });
    for (const origin of ["https://anything.example", "null", undefined]) {
      const answer = await binaryInfer(any, origin);
      assert.equal(answer.status, 200);
      assert.deepEqual(corsHeaders(answer), {
        "access-control-allow-origin": "*",
        "access-control-expose-headers": EXPOSED,
      });
    }
  });
});

describe("credentials", () => {
  test("allowed with exact origins: Access-Control-Allow-Credentials on preflights and answers", async () => {
    const pre = await preflight(withCredentials, INFER, APP);
    assert.equal(pre.status, 204);
    assert.equal(pre.headers["access-control-allow-credentials"], "true");
    assert.equal(pre.headers["access-control-allow-origin"], APP);
    const answer = await binaryInfer(withCredentials, APP);
    assert.equal(answer.headers["access-control-allow-credentials"], "true");
    assert.equal(answer.headers["access-control-allow-origin"], APP);
    const other = await binaryInfer(withCredentials, EVIL);
    assert.equal(other.headers["access-control-allow-credentials"], undefined);
  });

  test("refused with '*' before the front end listens", async () => {
    await assert.rejects(
      frontEnd({ allowOrigins: ["*"], allowCredentials: true }),
      (e: unknown) =>
        e instanceof CorsConfigError &&
        e.message ===
          "cors.allowCredentials cannot be used with cors.allowOrigins '*': browsers refuse a credentialed " +
            "answer to a wildcard origin; list the exact origins instead",
    );
  });
});

describe("restricted APIs stay restricted for pages", () => {
  const restrictedApis: RestrictedApis = {
    inference: { key: "infer-key", value: "s3cret" },
    "model-repository": { key: "admin-key", value: "adm1n" },
  };
  let restricted: HttpFrontEnd;
  before(async () => {
    restricted = await frontEnd({ allowOrigins: [APP] }, { restrictedApis });
  });

  test("the preflight (which carries no key) is cleared, and lets the page send the key header", async () => {
    const answer = await preflight(restricted, INFER, APP, {
      "Access-Control-Request-Headers": "content-type,infer-key,inference-header-content-length",
    });
    assert.equal(answer.status, 204);
    assert.equal(
      answer.headers["access-control-allow-headers"],
      "Content-Type, Inference-Header-Content-Length, Content-Encoding, Accept-Encoding, traceparent, " +
        "tracestate, infer-key, admin-key",
    );
    // Another origin's preflight is refused as anywhere else.
    assert.equal((await preflight(restricted, INFER, EVIL)).status, 403);
  });

  test("the request it clears is still checked: 403 without the key's value (readable by the page)", async () => {
    const before = inferenceCount("identity_fp32");
    for (const key of [undefined, "wrong"]) {
      const answer = await binaryInfer(restricted, APP, key === undefined ? {} : { "infer-key": key });
      assert.equal(answer.status, 403);
      assert.equal(errorOf(answer), "This API is restricted, expecting header 'infer-key'");
      assert.equal(answer.headers["access-control-allow-origin"], APP);
    }
    const load = await rawRequest(restricted.url, "/v2/repository/models/simple/unload", {
      method: "POST",
      headers: { Origin: APP },
    });
    assert.equal(load.status, 403);
    assert.equal(errorOf(load), "This API is restricted, expecting header 'admin-key'");
    assert.equal(inferenceCount("identity_fp32"), before, "no refused request ran");
    const allowed = await binaryInfer(restricted, APP, { "infer-key": "s3cret" });
    assert.equal(allowed.status, 200);
    assert.equal(inferenceCount("identity_fp32"), before + 1);
  });

  test("an OPTIONS that is no preflight meets the restriction first, as without CORS", async () => {
    const answer = await rawRequest(restricted.url, INFER, { method: "OPTIONS", headers: { Origin: APP } });
    assert.equal(answer.status, 403);
    assert.equal(errorOf(answer), "This API is restricted, expecting header 'infer-key'");
  });
});

describe("through startServer", () => {
  test("httpCors reaches every front-end thread", async () => {
    const server = await startServer({
      modelRepository: REPOSITORY,
      modelControlMode: "explicit",
      loadModels: ["simple"],
      httpPort: 0,
      metricsPort: false,
      httpThreadCount: 2,
      httpCors: { allowOrigins: [APP] },
      logger: silentLogger,
    });
    try {
      // Each request on a new connection, which either thread may accept: every answer has the headers.
      for (let i = 0; i < 8; i++) {
        const answer = await rawRequest(server.httpUrl, "/v2/models/simple/ready", {
          headers: { Origin: APP },
        });
        assert.equal(answer.status, 200);
        assert.equal(answer.headers["access-control-allow-origin"], APP);
        const pre = await rawRequest(server.httpUrl, "/v2/models/simple/infer", {
          method: "OPTIONS",
          headers: { Origin: APP, "Access-Control-Request-Method": "POST" },
        });
        assert.equal(pre.status, 204);
      }
    } finally {
      await server.close();
    }
  });
});
