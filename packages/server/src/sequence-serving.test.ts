/**
 * Stateful models end to end: the bundled `sequence_accumulator` (implicit state, direct strategy) and
 * `sequence_controls` (the control inputs echoed, oldest strategy) served by a real server over HTTP and
 * gRPC, with Triton's answers for the sequence fields on the wire. 64 interleaved sequences of random
 * lengths from concurrent clients must each see their own running sum.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type * as grpcJs from "@grpc/grpc-js";
import { BUNDLED_MODEL_REPOSITORY } from "@tbench/model-builder";
import { createMulberry32 } from "@tbench/model-builder/prng";
import { GRPC_STATUS } from "@tbench/proto";
import { type RunningServer, startServer } from "./server.js";
import { type Any, createTestClient } from "./testing/grpc-test-client.js";
import { createRecordingLogger } from "./testing/test-fixtures.js";

const MODELS = ["sequence_accumulator", "sequence_controls", "simple"];

describe("sequence models over HTTP and gRPC", { timeout: 180_000 }, () => {
  let server: RunningServer;
  let grpc: grpcJs.Client & Any;
  const logger = createRecordingLogger();

  before(async () => {
    server = await startServer({
      modelRepository: BUNDLED_MODEL_REPOSITORY,
      modelControlMode: "explicit",
      loadModels: MODELS,
      httpPort: 0,
      grpcPort: 0,
      logger,
    });
    grpc = createTestClient(server.grpcAddress!);
  });
  after(async () => {
    grpc?.close();
    await server?.close();
  });

  const http = async (model: string, value: number, parameters: Record<string, unknown>) => {
    const response = await fetch(`${server.httpUrl}/v2/models/${model}/infer`, {
      method: "POST",
      body: JSON.stringify({
        inputs: [{ name: "INPUT", datatype: "INT32", shape: [1, 1], data: [value] }],
        parameters,
      }),
    });
    const body = (await response.json()) as { outputs?: { name: string; data: number[] }[]; error?: string };
    return { status: response.status, body };
  };
  const sum = async (value: number, parameters: Record<string, unknown>) => {
    const { status, body } = await http("sequence_accumulator", value, parameters);
    assert.equal(status, 200, body.error);
    return body.outputs![0]!.data[0]!;
  };
  const grpcInfer = (model: string, value: number, parameters: Any): Promise<Any> =>
    new Promise((resolve, reject) => {
      grpc["ModelInfer"](
        {
          model_name: model,
          inputs: [{ name: "INPUT", datatype: "INT32", shape: [1, 1], contents: { int_contents: [value] } }],
          parameters,
        },
        (error: grpcJs.ServiceError | null, response: Any) => (error ? reject(error) : resolve(response)),
      );
    });
  const outputsOf = (response: Any): Map<string, Uint8Array> =>
    new Map(
      (response.outputs as Any[]).map((o, i) => [
        o.name as string,
        new Uint8Array(response.raw_output_contents[i]),
      ]),
    );
  const int32Of = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset).getInt32(0, true);

  test("64 interleaved sequences of random lengths from concurrent clients each get their own running sum", async () => {
    const random = createMulberry32(2026);
    const sequences = Array.from({ length: 64 }, (_, i) => ({
      id: 1000 + i,
      values: Array.from({ length: 1 + Math.floor(random() * 12) }, () => Math.floor(random() * 1000) - 500),
    }));
    const before = await (await fetch(`${server.httpUrl}/v2/models/sequence_accumulator/stats`)).json();
    const results = await Promise.all(
      sequences.map(async ({ id, values }) => {
        const seen: number[] = [];
        for (const [step, value] of values.entries()) {
          seen.push(
            await sum(value, {
              sequence_id: id,
              sequence_start: step === 0,
              sequence_end: step === values.length - 1,
            }),
          );
        }
        return seen;
      }),
    );
    for (const [i, { values }] of sequences.entries()) {
      let running = 0;
      assert.deepEqual(
        results[i],
        values.map((v) => (running += v)),
        `sequence ${sequences[i]!.id}`,
      );
    }
    const after = (await (
      await fetch(`${server.httpUrl}/v2/models/sequence_accumulator/stats`)
    ).json()) as Any;
    const stats = after.model_stats[0];
    const steps = sequences.reduce((n, s) => n + s.values.length, 0);
    assert.equal(stats.inference_count - (before as Any).model_stats[0].inference_count, steps);
    // 8 slots on one instance: concurrent sequences share executions.
    assert.ok(stats.execution_count - (before as Any).model_stats[0].execution_count < steps);
  });

  test("gRPC: a uint64 id and a string id are two sequences; START and END as bool_param", async () => {
    const step = async (value: number, id: Any, start: boolean, end: boolean) =>
      int32Of(
        outputsOf(
          await grpcInfer("sequence_accumulator", value, {
            sequence_id: id,
            sequence_start: { bool_param: start },
            sequence_end: { bool_param: end },
          }),
        ).get("OUTPUT")!,
      );
    assert.equal(await step(5, { int64_param: 7 }, true, false), 5);
    assert.equal(await step(100, { string_param: "7" }, true, false), 100);
    assert.equal(await step(6, { int64_param: 7 }, false, true), 11);
    assert.equal(await step(1, { string_param: "7" }, false, true), 101);
  });

  test("sequence_controls sees START, END, READY and the exact uint64 CORRID (past 2^53, sent as int64)", async () => {
    const id = 2n ** 63n + 5n; // int64 -9223372036854775803 on the wire, the uint64 it casts to here
    const wire = { int64_param: (id - 2n ** 64n).toString() };
    const first = outputsOf(
      await grpcInfer("sequence_controls", 3, { sequence_id: wire, sequence_start: { bool_param: true } }),
    );
    const last = outputsOf(
      await grpcInfer("sequence_controls", 4, { sequence_id: wire, sequence_end: { bool_param: true } }),
    );
    const controls = (o: Map<string, Uint8Array>) => [
      int32Of(o.get("OUTPUT")!),
      int32Of(o.get("OUT_START")!),
      int32Of(o.get("OUT_END")!),
      int32Of(o.get("OUT_READY")!),
      new DataView(o.get("OUT_CORRID")!.buffer, o.get("OUT_CORRID")!.byteOffset).getBigUint64(0, true),
    ];
    assert.deepEqual(controls(first), [3, 1, 0, 1, id]);
    assert.deepEqual(controls(last), [4, 0, 1, 1, id]);
  });

  test("HTTP ids past 2^53 are exact: 2^53 and 2^53 + 1 are two sequences; CORRID 2^64 - 1 reaches the model", async () => {
    // JSON.parse reads both ids as the same double; the decoder reads their digits.
    const raw = async (model: string, value: number, parameters: string) => {
      const response = await fetch(`${server.httpUrl}/v2/models/${model}/infer`, {
        method: "POST",
        body: `{"inputs":[{"name":"INPUT","datatype":"INT32","shape":[1,1],"data":[${value}]}],"parameters":{${parameters}}}`,
      });
      const text = await response.text();
      assert.equal(response.status, 200, text);
      return text;
    };
    const sumOf = (text: string) =>
      (JSON.parse(text) as { outputs: { data: number[] }[] }).outputs[0]!.data[0];
    assert.equal(
      sumOf(await raw("sequence_accumulator", 1, `"sequence_id":9007199254740992,"sequence_start":true`)),
      1,
    );
    assert.equal(
      sumOf(await raw("sequence_accumulator", 50, `"sequence_id":9007199254740993,"sequence_start":true`)),
      50,
    );
    assert.equal(
      sumOf(await raw("sequence_accumulator", 2, `"sequence_id":9007199254740992,"sequence_end":true`)),
      3,
    );
    assert.equal(
      sumOf(await raw("sequence_accumulator", 7, `"sequence_id":9007199254740993,"sequence_end":true`)),
      57,
    );
    const controls = await raw(
      "sequence_controls",
      1,
      `"sequence_id":18446744073709551615,"sequence_start":true,"sequence_end":true`,
    );
    assert.match(
      controls,
      /"name":"OUT_CORRID","datatype":"UINT64","shape":\[1,1\],"data":\[18446744073709551615\]/,
    );
  });

  test("the wire's sequence fields get Triton's answers, and the server keeps serving", async () => {
    const badId = await http("sequence_accumulator", 1, { sequence_id: true });
    assert.equal(badId.status, 500);
    assert.equal(
      badId.body.error,
      "Unable to parse 'sequence_id': attempt to access JSON non-string as string",
    );
    const badStart = await http("sequence_accumulator", 1, { sequence_id: 3, sequence_start: 1 });
    assert.equal(badStart.status, 500);
    assert.equal(
      badStart.body.error,
      "Unable to parse 'sequence_start': attempt to access JSON non-boolean as boolean",
    );
    const long = await http("sequence_accumulator", 1, {
      sequence_id: "x".repeat(129),
      sequence_start: true,
    });
    assert.equal(long.status, 501);
    assert.equal(long.body.error, "string correlation ID cannot be longer than 128 characters");
    const wrongCorrId = await http("sequence_controls", 1, { sequence_id: "abc", sequence_start: true });
    assert.equal(wrongCorrId.status, 400);
    assert.equal(
      wrongCorrId.body.error,
      "[request id: <id_unknown>] sequence batching control 'CORRID' data-type is 'BYTES', but model 'sequence_controls' expects 'UINT64'",
    );
    await assert.rejects(
      grpcInfer("sequence_accumulator", 1, { sequence_id: { uint64_param: 4 } }),
      (error: grpcJs.ServiceError) => {
        assert.equal(error.code, GRPC_STATUS.INVALID_ARGUMENT);
        assert.equal(
          error.details,
          "invalid value type for 'sequence_id' parameter, expected int64_param or string_param.",
        );
        return true;
      },
    );
    const noId = await http("sequence_accumulator", 1, {});
    assert.equal(noId.status, 400);
    assert.equal(
      noId.body.error,
      "inference request to model 'sequence_accumulator' must specify a non-zero or non-empty correlation ID",
    );
    assert.equal(await sum(9, { sequence_id: 77, sequence_start: true, sequence_end: true }), 9);
    // A model without sequence_batching ignores the fields.
    const simple = await fetch(`${server.httpUrl}/v2/models/simple/infer`, {
      method: "POST",
      body: JSON.stringify({
        inputs: [
          { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: new Array(16).fill(1) },
          { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: new Array(16).fill(2) },
        ],
        parameters: { sequence_id: 5, sequence_start: true },
      }),
    });
    assert.equal(simple.status, 200);
  });

  test("an unload ends live sequences: after a reload their next request needs START", async () => {
    assert.equal(await sum(4, { sequence_id: 500, sequence_start: true }), 4);
    await server.core.unloadModel("sequence_accumulator");
    await server.core.loadModel("sequence_accumulator");
    const after = await http("sequence_accumulator", 1, { sequence_id: 500 });
    assert.equal(after.status, 400);
    assert.match(after.body.error ?? "", /must specify the START flag on the first request of the sequence/);
    assert.equal(await sum(2, { sequence_id: 500, sequence_start: true, sequence_end: true }), 2);
  });
});
