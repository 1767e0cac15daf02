// The gRPC front end against a real core on bundled models, through a @grpc/grpc-js client built from
// @tbench/proto's generated method tables: every RPC, Triton's statuses and messages, a stream with
// interleaved good and bad requests, a 64 MiB tensor both ways, and serving on after bad input.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as grpcJs from "@grpc/grpc-js";
import { GRPC_STATUS, grpcInferenceServiceMethods, healthServiceMethods } from "@tbench/proto";
import { DEFAULT_MAX_BYTES_TENSOR_ELEMENTS } from "../core/bytes-data.js";
import { silentLogger } from "../core/logger.js";
import { createInferenceCore, type InferenceCoreHandle } from "../lifecycle/create-inference-core.js";
import { createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";
import { createGrpcFrontEnd, type GrpcFrontEnd } from "./grpc-front-end.js";

interface Generated {
  encode(m: unknown): { finish(): Uint8Array };
  decode(b: Uint8Array): unknown;
}

function clientDefinition(
  table: Record<
    string,
    {
      path: string;
      requestStream: boolean;
      responseStream: boolean;
      requestType: unknown;
      responseType: unknown;
    }
  >,
) {
  const definition: Record<string, grpcJs.MethodDefinition<unknown, unknown>> = {};
  for (const [name, m] of Object.entries(table)) {
    const req = m.requestType as Generated;
    const res = m.responseType as Generated;
    definition[name] = {
      path: m.path,
      requestStream: m.requestStream,
      responseStream: m.responseStream,
      requestSerialize: (v: unknown) => Buffer.from(req.encode(v).finish()),
      requestDeserialize: (b: Buffer) => req.decode(b),
      responseSerialize: (v: unknown) => Buffer.from(res.encode(v).finish()),
      responseDeserialize: (b: Buffer) => res.decode(b),
    };
  }
  return definition;
}

const InferenceClient = grpcJs.makeGenericClientConstructor(
  clientDefinition(grpcInferenceServiceMethods),
  "GRPCInferenceService",
);
const HealthClient = grpcJs.makeGenericClientConstructor(
  clientDefinition({ Check: healthServiceMethods.Check }),
  "Health",
);
const CLIENT_OPTIONS = { "grpc.max_receive_message_length": -1, "grpc.max_send_message_length": -1 };

// biome-ignore lint/suspicious/noExplicitAny: decoded messages are read field by field in the assertions
type Any = Record<string, any>;

function int32Raw(values: number[]): Uint8Array {
  return new Uint8Array(new Int32Array(values).buffer);
}

function range(n: number, f: (i: number) => number): number[] {
  return Array.from({ length: n }, (_, i) => f(i));
}

function simpleRequest(a: number[], b: number[], id = ""): Any {
  const shape = [1, 16];
  return {
    model_name: "simple",
    id,
    inputs: [
      { name: "INPUT0", datatype: "INT32", shape },
      { name: "INPUT1", datatype: "INT32", shape },
    ],
    raw_input_contents: [int32Raw(a), int32Raw(b)],
  };
}

function int32sOf(bytes: Uint8Array): number[] {
  const copy = new Uint8Array(bytes);
  return [...new Int32Array(copy.buffer)];
}

describe("gRPC front end (real core, bundled models)", { timeout: 180_000 }, () => {
  let repo: FixtureRepository;
  let core: InferenceCoreHandle;
  let front: GrpcFrontEnd;
  let client: grpcJs.Client & Any;
  let health: grpcJs.Client & Any;

  const call = (method: string, request: Any): Promise<Any> =>
    new Promise((resolve, reject) => {
      client[method](request, (error: grpcJs.ServiceError | null, response: Any) =>
        error ? reject(error) : resolve(response),
      );
    });
  const fails = async (method: string, request: Any, code: number, details: string | RegExp) => {
    await assert.rejects(call(method, request), (error: grpcJs.ServiceError) => {
      assert.equal(error.code, code, `${method}: ${error.details}`);
      if (typeof details === "string") assert.equal(error.details, details);
      else assert.match(error.details, details);
      return true;
    });
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
      address: "127.0.0.1",
      logger: silentLogger,
      maxBytesTensorElements: DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
    });
    client = new InferenceClient(front.address, grpcJs.credentials.createInsecure(), CLIENT_OPTIONS) as never;
    health = new HealthClient(front.address, grpcJs.credentials.createInsecure()) as never;
  });
  after(async () => {
    client.close();
    health.close();
    await front.close();
    await core.close();
    repo.remove();
  });

  test("health, metadata, readiness, config, statistics, repository index", async () => {
    assert.equal((await call("ServerLive", {})).live, true);
    assert.equal((await call("ServerReady", {})).ready, true);
    const check = await new Promise<Any>((resolve, reject) =>
      health.Check({ service: "" }, (e: Error | null, r: Any) => (e ? reject(e) : resolve(r))),
    );
    assert.equal(check.status, 1); // SERVING
    const server = await call("ServerMetadata", {});
    assert.equal(server.name, "tbench-server");
    assert.equal((await call("ModelReady", { name: "simple" })).ready, true);
    assert.equal((await call("ModelReady", { name: "simple", version: "1" })).ready, true);
    // Triton's ModelIsReady: false, no error, for an unknown model or version.
    assert.equal((await call("ModelReady", { name: "nope" })).ready, false);
    assert.equal((await call("ModelReady", { name: "simple", version: "9" })).ready, false);
    const meta = await call("ModelMetadata", { name: "simple" });
    assert.equal(meta.name, "simple");
    assert.deepEqual(meta.versions, ["1"]);
    assert.equal(meta.inputs[0].name, "INPUT0");
    assert.equal(meta.inputs[0].datatype, "INT32");
    assert.deepEqual(meta.inputs[0].shape.map(Number), [-1, 16]);
    await fails(
      "ModelMetadata",
      { name: "nope" },
      GRPC_STATUS.NOT_FOUND,
      "Request for unknown model: 'nope' is not found",
    );
    await fails(
      "ModelMetadata",
      { name: "simple", version: "x" },
      GRPC_STATUS.INVALID_ARGUMENT,
      "failed to get model version from specified version string 'x' (details: stol), version should be an integral value > 0",
    );
    await fails(
      "ModelMetadata",
      { name: "simple", version: "99" },
      GRPC_STATUS.NOT_FOUND,
      /version 99 is not found/,
    );
    const config = await call("ModelConfig", { name: "simple" });
    assert.equal(config.config.name, "simple");
    assert.equal(config.config.max_batch_size, 8);
    assert.equal(config.config.input[0].data_type, 8); // TYPE_INT32
    await fails(
      "ModelConfig",
      { name: "nope" },
      GRPC_STATUS.NOT_FOUND,
      "Request for unknown model: 'nope' is not found",
    );
    const stats = await call("ModelStatistics", { name: "simple" });
    assert.equal(stats.model_stats.length, 1);
    assert.equal(stats.model_stats[0].name, "simple");
    await fails(
      "ModelStatistics",
      { name: "nope" },
      GRPC_STATUS.INVALID_ARGUMENT,
      "requested model 'nope' is not available",
    );
    const all = await call("ModelStatistics", {});
    assert.equal(all.model_stats.length, 3);
    const index = await call("RepositoryIndex", {});
    assert.deepEqual(index.models.map((m: Any) => [m.name, m.version, m.state]).sort(), [
      ["identity_bytes", "1", "READY"],
      ["identity_int8", "1", "READY"],
      ["simple", "1", "READY"],
    ]);
    await fails(
      "RepositoryIndex",
      { repository_name: "r" },
      GRPC_STATUS.UNIMPLEMENTED,
      "'repository_name' specification is not supported",
    );
  });

  test("load and unload outside explicit mode, shared memory, trace and log settings: Triton's statuses", async () => {
    const explicitOnly = "explicit model load / unload is not allowed if polling is enabled";
    await fails("RepositoryModelLoad", { model_name: "simple" }, GRPC_STATUS.UNAVAILABLE, explicitOnly);
    await fails("RepositoryModelUnload", { model_name: "simple" }, GRPC_STATUS.UNAVAILABLE, explicitOnly);
    await fails(
      "RepositoryModelLoad",
      { model_name: "simple", parameters: { bogus: { string_param: "x" } } },
      GRPC_STATUS.INVALID_ARGUMENT,
      "unrecognized load parameter 'bogus'.",
    );
    assert.deepEqual((await call("SystemSharedMemoryStatus", {})).regions, {});
    await fails(
      "SystemSharedMemoryStatus",
      { name: "r" },
      GRPC_STATUS.NOT_FOUND,
      "Unable to find system shared memory region: 'r'",
    );
    await fails(
      "CudaSharedMemoryStatus",
      { name: "r" },
      GRPC_STATUS.NOT_FOUND,
      "Unable to find cuda shared memory region: 'r'",
    );
    await fails(
      "SystemSharedMemoryRegister",
      { name: "r", key: "/k", byte_size: 4 },
      GRPC_STATUS.UNIMPLEMENTED,
      /not supported/,
    );
    await fails("CudaSharedMemoryRegister", { name: "r" }, GRPC_STATUS.UNIMPLEMENTED, /not supported/);
    await fails("TraceSetting", {}, GRPC_STATUS.UNAVAILABLE, "the server does not support trace");
    await fails("LogSettings", {}, GRPC_STATUS.UNAVAILABLE, "the server does not support dynamic logging");
  });

  test("ModelInfer with raw_input_contents and with typed contents: answers in raw_output_contents", async () => {
    const a = range(16, (i) => i);
    const b = range(16, (i) => 100 - i);
    const raw = await call("ModelInfer", {
      ...simpleRequest(a, b, "req-1"),
      parameters: { custom: { string_param: "x" } },
    });
    assert.equal(raw.id, "req-1");
    assert.equal(raw.model_name, "simple");
    assert.equal(raw.model_version, "1");
    assert.deepEqual(
      raw.outputs.map((o: Any) => [o.name, o.datatype, o.shape.map(Number)]),
      [
        ["OUTPUT0", "INT32", [1, 16]],
        ["OUTPUT1", "INT32", [1, 16]],
      ],
    );
    assert.deepEqual(
      int32sOf(raw.raw_output_contents[0]),
      a.map((x, i) => x + b[i]!),
    );
    assert.deepEqual(
      int32sOf(raw.raw_output_contents[1]),
      a.map((x, i) => x - b[i]!),
    );
    const typed = await call("ModelInfer", {
      model_name: "simple",
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [1, 16], contents: { int_contents: a } },
        { name: "INPUT1", datatype: "INT32", shape: [1, 16], contents: { int_contents: b } },
      ],
      outputs: [{ name: "OUTPUT1" }],
    });
    assert.deepEqual(
      typed.outputs.map((o: Any) => o.name),
      ["OUTPUT1"],
    );
    assert.deepEqual(
      int32sOf(typed.raw_output_contents[0]),
      a.map((x, i) => x - b[i]!),
    );
    const bytes = await call("ModelInfer", {
      model_name: "identity_bytes",
      inputs: [
        {
          name: "INPUT0",
          datatype: "BYTES",
          shape: [1, 2],
          contents: { bytes_contents: [Buffer.from("ab"), Buffer.from("")] },
        },
      ],
    });
    assert.equal(bytes.outputs[0].datatype, "BYTES");
    assert.equal(Buffer.from(bytes.raw_output_contents[0]).toString("hex"), "020000006162" + "00000000");
  });

  test("bad infer requests get Triton's statuses and messages, and the server keeps serving", async () => {
    const a = range(16, (i) => i);
    const good = simpleRequest(a, a);
    await fails(
      "ModelInfer",
      { ...good, model_name: "nope" },
      GRPC_STATUS.NOT_FOUND,
      "Request for unknown model: 'nope' is not found",
    );
    await fails(
      "ModelInfer",
      { ...good, inputs: [good.inputs[0], { ...good.inputs[1], contents: { int_contents: a } }] },
      GRPC_STATUS.INVALID_ARGUMENT,
      "contents field must not be specified when using raw_input_contents for 'INPUT1' for model 'simple'",
    );
    await fails(
      "ModelInfer",
      { ...good, raw_input_contents: [good.raw_input_contents[0]] },
      GRPC_STATUS.INVALID_ARGUMENT,
      "unable to find data for input tensor 'INPUT1' for model 'simple' in request.",
    );
    await fails(
      "ModelInfer",
      { ...good, raw_input_contents: [good.raw_input_contents[0], new Uint8Array(60)] },
      GRPC_STATUS.INVALID_ARGUMENT,
      "input byte size mismatch for input 'INPUT1' for model 'simple'. Expected 64, got 60",
    );
    await fails(
      "ModelInfer",
      {
        model_name: "simple",
        inputs: [
          { name: "INPUT0", datatype: "INT32", shape: [1, 16], contents: { fp32_contents: a } },
          { name: "INPUT1", datatype: "INT32", shape: [1, 16], contents: { int_contents: a } },
        ],
      },
      GRPC_STATUS.INVALID_ARGUMENT,
      "unexpected explicit tensor data for input tensor 'INPUT0' for model 'simple' of type 'FP32', expected datatype 'INT32'",
    );
    await fails(
      "ModelInfer",
      { ...good, parameters: { triton_x: { bool_param: true } } },
      GRPC_STATUS.INVALID_ARGUMENT,
      /reserved for Triton usage/,
    );
    await fails(
      "ModelInfer",
      { ...good, parameters: { priority: { string_param: "1" } } },
      GRPC_STATUS.INVALID_ARGUMENT,
      "invalid value type for 'priority' parameter, expected int64_param or uint64_param.",
    );
    await fails(
      "ModelInfer",
      { ...good, outputs: [{ name: "OUTPUT0", parameters: { classification: { int64_param: 0 } } }] },
      GRPC_STATUS.INVALID_ARGUMENT,
      "invalid value for 'classification' parameter, expected >= 1",
    );
    // The core's own checks come through unchanged (wrong datatype against the model).
    await fails(
      "ModelInfer",
      { ...good, inputs: [{ ...good.inputs[0], datatype: "FP32" }, good.inputs[1]] },
      GRPC_STATUS.INVALID_ARGUMENT,
      /INPUT0/,
    );
    const after = await call("ModelInfer", good);
    assert.deepEqual(
      int32sOf(after.raw_output_contents[0]),
      a.map((x) => 2 * x),
    );
  });

  test("ModelStreamInfer: one answer per request with its id, errors in error_message, the stream stays open", async () => {
    const stream = client.ModelStreamInfer() as grpcJs.ClientDuplexStream<Any, Any>;
    const answers = new Map<string, Any>();
    const done = new Promise<void>((resolve, reject) => {
      stream.on("data", (r: Any) => answers.set(r.infer_response.id, r));
      stream.on("end", resolve);
      stream.on("error", reject);
    });
    const n = 60;
    for (let i = 0; i < n; i++) {
      const a = range(16, (k) => k * i);
      const b = range(16, () => i);
      if (i % 3 === 1) stream.write({ ...simpleRequest(a, b, `r${i}`), model_name: "nope" });
      else if (i % 3 === 2)
        stream.write({ ...simpleRequest(a, b, `r${i}`), raw_input_contents: [int32Raw(a)] });
      else stream.write(simpleRequest(a, b, `r${i}`));
    }
    stream.end();
    await done;
    assert.equal(answers.size, n);
    for (let i = 0; i < n; i++) {
      const answer = answers.get(`r${i}`)!;
      if (i % 3 === 1) assert.equal(answer.error_message, "Request for unknown model: 'nope' is not found");
      else if (i % 3 === 2)
        assert.equal(
          answer.error_message,
          "unable to find data for input tensor 'INPUT1' for model 'simple' in request.",
        );
      else {
        assert.equal(answer.error_message, "");
        assert.deepEqual(
          int32sOf(answer.infer_response.raw_output_contents[0]),
          range(16, (k) => k * i + i),
        );
      }
    }
  });

  test("a 64 MiB tensor both ways (no 4 MiB ceiling)", async () => {
    const size = 64 * 1024 * 1024;
    const data = new Uint8Array(size);
    for (let i = 0; i < size; i += 4096) data[i] = (i / 4096) & 0x7f;
    data[size - 1] = 42;
    const response = await call("ModelInfer", {
      model_name: "identity_int8",
      inputs: [{ name: "INPUT0", datatype: "INT8", shape: [1, size] }],
      raw_input_contents: [data],
    });
    const out: Uint8Array = response.raw_output_contents[0];
    assert.equal(out.byteLength, size);
    assert.ok(Buffer.from(out).equals(Buffer.from(data)));
  });
  test("close() lets an open stream finish: requests sent before and after close are answered (after: refused as Triton refuses)", async () => {
    const second = await createGrpcFrontEnd({
      core,
      port: 0,
      logger: silentLogger,
      maxBytesTensorElements: DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
    });
    const c = new InferenceClient(second.address, grpcJs.credentials.createInsecure()) as grpcJs.Client & Any;
    const stream = c.ModelStreamInfer() as grpcJs.ClientDuplexStream<Any, Any>;
    const ids: string[] = [];
    const errors: string[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      stream.on("data", (r: Any) => {
        ids.push(r.infer_response.id);
        errors.push(r.error_message);
      });
      stream.on("end", resolve);
      stream.on("error", reject);
    });
    const a = range(16, (i) => i);
    stream.write(simpleRequest(a, a, "before"));
    await new Promise<void>((resolve) => stream.once("data", () => resolve()));
    let closed = false;
    const closing = second.close().then(() => {
      closed = true;
    });
    stream.write(simpleRequest(a, a, "after"));
    stream.end();
    await ended;
    await closing;
    assert.deepEqual(ids, ["before", "after"]);
    assert.deepEqual(errors, ["", "GRPC server is shutting down and has stopped accepting new requests."]);
    assert.equal(closed, true);
    // A new call on the closed front end fails.
    await assert.rejects(
      new Promise((resolve, reject) =>
        c.ServerLive({}, (e: Error | null, r: unknown) => (e ? reject(e) : resolve(r))),
      ),
    );
    c.close();
  });
});
