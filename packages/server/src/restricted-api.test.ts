/**
 * `--http-restricted-api` and `--grpc-restricted-protocol` end to end, on the real server: every one of
 * Triton's nine groups restricted under its own key, every endpoint and RPC of each group tried without the
 * header, with a wrong value and with the right one. Refused: HTTP 403 `This API is restricted, expecting
 * header '<key>'` (before the method check); gRPC UNAVAILABLE `This protocol is restricted, expecting header
 * 'triton-grpc-protocol-<key>'` (a stream as it opens). Allowed: whatever the endpoint answers unrestricted.
 * Repository management behind a key: a load without it is refused and loads nothing, with it the model
 * loads and serves.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as grpcJs from "@grpc/grpc-js";
import { GRPC_STATUS, healthServiceMethods } from "@tbench/proto";
import { silentLogger } from "./core/logger.js";
import {
  RESTRICTED_CATEGORIES,
  type RestrictedApis,
  type RestrictedCategory,
} from "./core/restricted-api.js";
import { type RunningServer, startServer } from "./server.js";
import { type Any, createTestClient } from "./testing/grpc-test-client.js";
import { rawRequest } from "./testing/raw-http-client.js";
import { createFixtureRepository, type FixtureRepository } from "./testing/test-fixtures.js";

/** Each group under its own key and value: a request with another group's key is refused too. */
const keyOf = (c: RestrictedCategory) => `X-Key-${c}`;
const secretOf = (c: RestrictedCategory) => `secret-${c}`;
const RESTRICTIONS: RestrictedApis = Object.fromEntries(
  RESTRICTED_CATEGORIES.map((c) => [c, { key: keyOf(c), value: secretOf(c) }]),
);

const SIMPLE_INFER = JSON.stringify({
  inputs: ["INPUT0", "INPUT1"].map((name) => ({
    name,
    datatype: "INT32",
    shape: [1, 16],
    data: Array.from({ length: 16 }, (_, i) => i),
  })),
});

/** One HTTP endpoint of each route kind, with its group and the status it answers when allowed. */
const HTTP_CASES: readonly {
  category: RestrictedCategory;
  method: string;
  path: string;
  body?: string;
  allowed: number;
}[] = [
  { category: "health", method: "GET", path: "/v2/health/live", allowed: 200 },
  { category: "health", method: "GET", path: "/v2/health/ready", allowed: 200 },
  { category: "health", method: "GET", path: "/v2/models/simple/ready", allowed: 200 },
  { category: "metadata", method: "GET", path: "/v2", allowed: 200 },
  { category: "metadata", method: "GET", path: "/v2/models/simple", allowed: 200 },
  { category: "model-config", method: "GET", path: "/v2/models/simple/config", allowed: 200 },
  { category: "statistics", method: "GET", path: "/v2/models/stats", allowed: 200 },
  { category: "statistics", method: "GET", path: "/v2/models/simple/versions/1/stats", allowed: 200 },
  {
    category: "inference",
    method: "POST",
    path: "/v2/models/simple/infer",
    body: SIMPLE_INFER,
    allowed: 200,
  },
  { category: "model-repository", method: "POST", path: "/v2/repository/index", allowed: 200 },
  { category: "model-repository", method: "POST", path: "/v2/repository/models/nope/unload", allowed: 200 },
  { category: "shared-memory", method: "GET", path: "/v2/systemsharedmemory/status", allowed: 200 },
  { category: "shared-memory", method: "POST", path: "/v2/cudasharedmemory/region/r/register", allowed: 501 },
  { category: "trace", method: "GET", path: "/v2/trace/setting", allowed: 503 },
  { category: "trace", method: "POST", path: "/v2/models/simple/trace/setting", allowed: 503 },
  { category: "logging", method: "GET", path: "/v2/logging", allowed: 503 },
];

/** One RPC of each method, with its group and the status it ends with when allowed. */
const GRPC_CASES: readonly { category: RestrictedCategory; method: string; request: Any; allowed: number }[] =
  [
    { category: "health", method: "ServerLive", request: {}, allowed: GRPC_STATUS.OK },
    { category: "health", method: "ServerReady", request: {}, allowed: GRPC_STATUS.OK },
    { category: "health", method: "ModelReady", request: { name: "simple" }, allowed: GRPC_STATUS.OK },
    { category: "metadata", method: "ServerMetadata", request: {}, allowed: GRPC_STATUS.OK },
    { category: "metadata", method: "ModelMetadata", request: { name: "simple" }, allowed: GRPC_STATUS.OK },
    { category: "model-config", method: "ModelConfig", request: { name: "simple" }, allowed: GRPC_STATUS.OK },
    { category: "statistics", method: "ModelStatistics", request: {}, allowed: GRPC_STATUS.OK },
    {
      category: "inference",
      method: "ModelInfer",
      request: {
        model_name: "simple",
        inputs: ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16] })),
        raw_input_contents: [Buffer.alloc(64), Buffer.alloc(64)],
      },
      allowed: GRPC_STATUS.OK,
    },
    { category: "model-repository", method: "RepositoryIndex", request: {}, allowed: GRPC_STATUS.OK },
    {
      category: "model-repository",
      method: "RepositoryModelUnload",
      request: { model_name: "nope" },
      allowed: GRPC_STATUS.OK,
    },
    { category: "shared-memory", method: "SystemSharedMemoryStatus", request: {}, allowed: GRPC_STATUS.OK },
    {
      category: "shared-memory",
      method: "SystemSharedMemoryRegister",
      request: {},
      allowed: GRPC_STATUS.UNIMPLEMENTED,
    },
    {
      category: "shared-memory",
      method: "SystemSharedMemoryUnregister",
      request: {},
      allowed: GRPC_STATUS.UNIMPLEMENTED,
    },
    { category: "shared-memory", method: "CudaSharedMemoryStatus", request: {}, allowed: GRPC_STATUS.OK },
    {
      category: "shared-memory",
      method: "CudaSharedMemoryRegister",
      request: {},
      allowed: GRPC_STATUS.UNIMPLEMENTED,
    },
    {
      category: "shared-memory",
      method: "CudaSharedMemoryUnregister",
      request: {},
      allowed: GRPC_STATUS.UNIMPLEMENTED,
    },
    { category: "trace", method: "TraceSetting", request: {}, allowed: GRPC_STATUS.UNAVAILABLE },
    { category: "logging", method: "LogSettings", request: {}, allowed: GRPC_STATUS.UNAVAILABLE },
  ];

const grpcHeader = (c: RestrictedCategory) => `triton-grpc-protocol-${keyOf(c)}`;
const grpcRefusal = (c: RestrictedCategory) =>
  `This protocol is restricted, expecting header '${grpcHeader(c)}'`;

/** A unary call's final status and details (OK with "" when it succeeded). */
function callStatus(
  client: Any,
  method: string,
  request: Any,
  metadata: Record<string, string>,
): Promise<{ code: number; details: string }> {
  const md = new grpcJs.Metadata();
  for (const [k, v] of Object.entries(metadata)) md.add(k, v);
  return new Promise((resolve) => {
    client[method](request, md, (error: grpcJs.ServiceError | null) =>
      resolve(error ? { code: error.code, details: error.details } : { code: GRPC_STATUS.OK, details: "" }),
    );
  });
}

describe("restricted APIs and protocols (every group, both front ends)", () => {
  let repo: FixtureRepository;
  let server: RunningServer;
  let client: Any;
  let health: grpcJs.Client & Any;

  before(async () => {
    repo = createFixtureRepository({ simple: { config: "bundled" }, identity_fp32: { config: "bundled" } });
    server = await startServer({
      modelRepository: repo.dir,
      modelControlMode: "explicit",
      loadModels: ["simple"],
      httpPort: 0,
      grpcPort: 0,
      metricsPort: false,
      logger: silentLogger,
      httpRestrictedApis: RESTRICTIONS,
      grpcRestrictedProtocols: RESTRICTIONS,
    });
    client = createTestClient(server.grpcAddress ?? "");
    const HealthClient = grpcJs.makeGenericClientConstructor(
      {
        Check: {
          path: healthServiceMethods.Check.path,
          requestStream: false,
          responseStream: false,
          requestSerialize: (v: unknown) =>
            Buffer.from((healthServiceMethods.Check.requestType as Any).encode(v).finish()),
          requestDeserialize: (b: Buffer) => (healthServiceMethods.Check.requestType as Any).decode(b),
          responseSerialize: (v: unknown) =>
            Buffer.from((healthServiceMethods.Check.responseType as Any).encode(v).finish()),
          responseDeserialize: (b: Buffer) => (healthServiceMethods.Check.responseType as Any).decode(b),
        },
      } as grpcJs.ServiceDefinition,
      "Health",
    );
    health = new HealthClient(
      server.grpcAddress ?? "",
      grpcJs.credentials.createInsecure(),
    ) as grpcJs.Client & Any;
  });
  after(async () => {
    client?.close();
    health?.close();
    await server?.close();
    repo?.remove();
  });

  test("HTTP: 403 with Triton's message without the header or with a wrong value, served with it", async () => {
    for (const c of HTTP_CASES) {
      const key = keyOf(c.category);
      const send = (headers: Record<string, string>, method = c.method) =>
        rawRequest(server.httpUrl, c.path, {
          method,
          headers: { "content-type": "application/json", ...headers },
          ...(c.body !== undefined && method === "POST" ? { body: c.body } : {}),
        });
      const expected = { error: `This API is restricted, expecting header '${key}'` };
      const refusals = [
        await send({}),
        await send({ [key]: "wrong" }),
        await send({ [key]: secretOf(c.category).toUpperCase() }),
        // Another group's key opens nothing here.
        await send({ [keyOf(c.category === "health" ? "metadata" : "health")]: secretOf("health") }),
        // The restriction is checked before the method: a wrong method is refused the same way.
        await send({}, c.method === "GET" ? "DELETE" : "PUT"),
      ];
      for (const res of refusals) {
        assert.equal(res.status, 403, `${c.method} ${c.path}`);
        assert.deepEqual(JSON.parse(res.body.toString()), expected, `${c.method} ${c.path}`);
      }
      // Header names are not case-sensitive; the value is.
      const allowed = await send({ [key.toUpperCase()]: secretOf(c.category) });
      assert.equal(allowed.status, c.allowed, `${c.method} ${c.path}: ${allowed.body.toString()}`);
    }
  });

  test("HTTP: an unknown path is 404 whatever is restricted", async () => {
    const res = await rawRequest(server.httpUrl, "/v2/nothing/here");
    assert.equal(res.status, 404);
  });

  test("gRPC: UNAVAILABLE with Triton's message without the metadata, served with it", async () => {
    for (const c of GRPC_CASES) {
      const header = grpcHeader(c.category);
      for (const metadata of [{}, { [header]: "wrong" }, { [`x-${header}`]: secretOf(c.category) }]) {
        const status = await callStatus(client, c.method, c.request, metadata);
        assert.deepEqual(
          status,
          { code: GRPC_STATUS.UNAVAILABLE, details: grpcRefusal(c.category) },
          `${c.method} ${JSON.stringify(metadata)}`,
        );
      }
      const allowed = await callStatus(client, c.method, c.request, { [header]: secretOf(c.category) });
      assert.equal(allowed.code, c.allowed, `${c.method}: ${allowed.details}`);
      assert.notEqual(allowed.details, grpcRefusal(c.category));
    }
    // grpc.health.v1 Check is a health RPC.
    const refused = await callStatus(health, "Check", {}, {});
    assert.deepEqual(refused, { code: GRPC_STATUS.UNAVAILABLE, details: grpcRefusal("health") });
    const served = await callStatus(health, "Check", {}, { [grpcHeader("health")]: secretOf("health") });
    assert.equal(served.code, GRPC_STATUS.OK);
  });

  test("gRPC: a restricted stream ends UNAVAILABLE as it opens; with the metadata it answers", async () => {
    const request = GRPC_CASES.find((c) => c.method === "ModelInfer")!.request;
    const open = (metadata: Record<string, string>) => {
      const md = new grpcJs.Metadata();
      for (const [k, v] of Object.entries(metadata)) md.add(k, v);
      const stream = client.ModelStreamInfer(md);
      return new Promise<{ code: number; details: string; answers: number }>((resolve) => {
        let answers = 0;
        stream.on("data", () => {
          answers++;
          stream.end();
        });
        stream.on("error", (e: grpcJs.ServiceError) =>
          resolve({ code: e.code, details: e.details, answers }),
        );
        stream.on("status", (s: grpcJs.StatusObject) => {
          if (s.code === GRPC_STATUS.OK) resolve({ code: s.code, details: s.details, answers });
        });
        stream.write(request);
      });
    };
    assert.deepEqual(await open({}), {
      code: GRPC_STATUS.UNAVAILABLE,
      details: grpcRefusal("inference"),
      answers: 0,
    });
    const served = await open({ [grpcHeader("inference")]: secretOf("inference") });
    assert.equal(served.code, GRPC_STATUS.OK);
    assert.equal(served.answers, 1);
  });

  test("repository management behind a key: a load without it loads nothing, with it the model serves", async () => {
    const repoKey = { [keyOf("model-repository")]: secretOf("model-repository") };
    const healthKey = { [keyOf("health")]: secretOf("health") };
    const ready = async () =>
      (await rawRequest(server.httpUrl, "/v2/models/identity_fp32/ready", { headers: healthKey })).status;
    const load = (headers: Record<string, string>) =>
      rawRequest(server.httpUrl, "/v2/repository/models/identity_fp32/load", { method: "POST", headers });
    assert.equal(await ready(), 400);
    assert.equal((await load({})).status, 403);
    assert.equal((await load({ [keyOf("model-repository")]: "guess" })).status, 403);
    const grpcLoad = await callStatus(client, "RepositoryModelLoad", { model_name: "identity_fp32" }, {});
    assert.equal(grpcLoad.code, GRPC_STATUS.UNAVAILABLE);
    assert.equal(await ready(), 400, "nothing was loaded by the refused calls");
    assert.equal((await load(repoKey)).status, 200);
    assert.equal(await ready(), 200);
    // Unload over gRPC with the key, then load again over gRPC.
    const unload = await callStatus(
      client,
      "RepositoryModelUnload",
      { model_name: "identity_fp32" },
      { [grpcHeader("model-repository")]: secretOf("model-repository") },
    );
    assert.equal(unload.code, GRPC_STATUS.OK);
    assert.equal(await ready(), 400);
    const reload = await callStatus(
      client,
      "RepositoryModelLoad",
      { model_name: "identity_fp32" },
      { [grpcHeader("model-repository")]: secretOf("model-repository") },
    );
    assert.equal(reload.code, GRPC_STATUS.OK);
    assert.equal(await ready(), 200);
  });
});

describe("restrictions given in code are checked", () => {
  test("an unknown category or an empty key refuses to start", async () => {
    await assert.rejects(
      startServer({
        modelRepository: "/nonexistent",
        httpPort: 0,
        metricsPort: false,
        logger: silentLogger,
        httpRestrictedApis: { bogus: { key: "k", value: "v" } } as unknown as RestrictedApis,
      }),
      /httpRestrictedApis: unknown category 'bogus'/,
    );
    await assert.rejects(
      startServer({
        modelRepository: "/nonexistent",
        httpPort: 0,
        metricsPort: false,
        logger: silentLogger,
        grpcRestrictedProtocols: { health: { key: "", value: "v" } },
      }),
      /grpcRestrictedProtocols.health: expected a non-empty key/,
    );
  });
});
