/**
 * Streamed generation end to end: the bundled `char_generator` (a character-level step model run by the
 * tbench_generator backend, greedy text known: "Hello" continues "pqrstuvwxyz{|}~") served by a real server:
 * Triton's generate and generate_stream over HTTP (SSE framing, parameters mapped to inputs or request
 * parameters, errors before and during a stream), the decoupled gRPC stream (a response per token,
 * triton_final_response true on the last), Triton's refusals of /infer and ModelInfer
 * for a decoupled model, 16 concurrent streams each with its own exact text, and streams cut by their
 * clients that leave the server serving.
 */
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { after, before, describe, test } from "node:test";
import type * as grpcJs from "@grpc/grpc-js";
import { BUNDLED_MODEL_REPOSITORY } from "@tbench/model-builder";
import { GRPC_STATUS } from "@tbench/proto";
import { type RunningServer, startServer } from "./server.js";
import { type Any, createTestClient, unary } from "./testing/grpc-test-client.js";
import { createRecordingLogger } from "./testing/test-fixtures.js";

const MODEL = "char_generator";

/** The part of the statistics extension's answer the tests read. */
interface StatsBody {
  model_stats: { batch_stats: { batch_size: number }[]; inference_stats: { fail: { count: number } } }[];
}

/** The greedy continuation of `prompt` by the bundled model: each character's successor, until '~'. */
function continuation(prompt: string, maxTokens: number): string {
  let code = prompt.charCodeAt(prompt.length - 1);
  let text = "";
  while (text.length < maxTokens && code < 126) {
    code++;
    text += String.fromCharCode(code);
  }
  return text;
}

/** Parses a server-sent event body into its `data:` payloads. */
function sseEvents(body: string): unknown[] {
  assert.ok(
    body.endsWith("\n\n") || body === "",
    `events end with a blank line: ${JSON.stringify(body.slice(-20))}`,
  );
  return body
    .split("\n\n")
    .filter((chunk) => chunk !== "")
    .map((chunk) => {
      assert.ok(chunk.startsWith("data: "), `an SSE data line: ${chunk}`);
      return JSON.parse(chunk.slice("data: ".length));
    });
}

describe("streamed generation over HTTP and gRPC", { timeout: 180_000 }, () => {
  let server: RunningServer;
  let grpc: grpcJs.Client & Any;
  const logger = createRecordingLogger();

  before(async () => {
    server = await startServer({
      modelRepository: BUNDLED_MODEL_REPOSITORY,
      modelControlMode: "explicit",
      loadModels: [MODEL, "simple"],
      httpPort: 0,
      grpcPort: 0,
      metricsPort: false,
      logger,
    });
    grpc = createTestClient(server.grpcAddress!);
  });
  after(async () => {
    grpc?.close();
    await server?.close();
  });

  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${server.httpUrl}/v2/models/${MODEL}/${path}`, {
      method: "POST",
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    return {
      status: response.status,
      type: response.headers.get("content-type"),
      text: await response.text(),
    };
  };

  test("generate answers the prompt and its greedy continuation in one JSON object", async () => {
    const answer = await post("generate", { id: "42", text_input: "Hello", parameters: { max_tokens: 20 } });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.type, "application/json");
    assert.deepEqual(JSON.parse(answer.text), {
      id: "42",
      model_name: MODEL,
      model_version: "1",
      prompt_tokens: 5,
      completion_tokens: 15,
      finish_reason: "stop",
      text_output: "Hellopqrstuvwxyz{|}~",
    });
  });

  test("generate_stream sends an event per token with stream: true, one with the whole text without", async () => {
    const streamed = await post("generate_stream", { text_input: "abc", stream: true, max_tokens: 4 });
    assert.equal(streamed.status, 200);
    assert.equal(streamed.type, "text/event-stream; charset=utf-8");
    const events = sseEvents(streamed.text) as { text_output: string; completion_tokens: number }[];
    assert.deepEqual(
      events.map((e) => e.text_output),
      ["d", "e", "f", "g"],
    );
    assert.deepEqual(
      events.map((e) => e.completion_tokens),
      [1, 2, 3, 4],
    );
    const whole = await post("generate_stream", {
      text_input: "abc",
      parameters: { max_tokens: 4, exclude_input_in_output: true },
    });
    assert.deepEqual(
      (sseEvents(whole.text) as { text_output: string }[]).map((e) => e.text_output),
      ["defg"],
    );
  });

  test("a stop string, a seed and a temperature: sampling is the same for the same seed", async () => {
    const stopped = await post("generate", {
      text_input: "a",
      max_tokens: 30,
      stop: ["fg"],
      exclude_input_in_output: true,
    });
    assert.equal(JSON.parse(stopped.text).text_output, "bcde");
    const sample = async (seed: number) =>
      JSON.parse((await post("generate", { text_input: " ", max_tokens: 60, temperature: 3, seed })).text)
        .text_output as string;
    const [a, b, c] = [await sample(7), await sample(7), await sample(8)];
    assert.equal(a, b, "one seed, one text");
    assert.notEqual(a, c, "another seed, another text (60 draws at temperature 3)");
  });

  test("bad requests get Triton's words, before the stream starts, as JSON with their status", async () => {
    const unknown = await post("generate", { text_input: "héllo" });
    assert.equal(unknown.status, 400);
    assert.match(JSON.parse(unknown.text).error, /no token for "é"/);
    const notJson = await post("generate_stream", "{");
    assert.equal(notJson.status, 400);
    assert.match(JSON.parse(notJson.text).error, /^failed to parse the request JSON buffer/);
    const badParameters = await post("generate", { text_input: "a", parameters: [1] });
    assert.deepEqual(JSON.parse(badParameters.text), {
      error: "Expected JSON object for keyword: 'parameters'",
    });
    const nested = await post("generate", { text_input: "a", foo: { bar: 1 } });
    assert.deepEqual(JSON.parse(nested.text), {
      error: "parameter 'foo' has invalid type. It should be either 'int', 'bool', or 'string'.",
    });
    const tooMany = await post("generate", { text_input: "a", max_tokens: 99999 });
    assert.equal(tooMany.status, 400);
    assert.match(JSON.parse(tooMany.text).error, /'max_tokens' must be an integer in \[0, 4096\], got 99999/);
  });

  test("/infer and ModelInfer refuse a decoupled model as Triton does; generate serves an ordinary one", async () => {
    const infer = await post("infer", {
      inputs: [{ name: "text_input", datatype: "BYTES", shape: [1, 1], data: ["a"] }],
    });
    assert.equal(infer.status, 501);
    assert.deepEqual(JSON.parse(infer.text), {
      error: "HTTP end point doesn't support models with decoupled transaction policy",
    });
    const error = await new Promise<grpcJs.ServiceError>((resolve) =>
      grpc["ModelInfer"](
        {
          model_name: MODEL,
          inputs: [
            {
              name: "text_input",
              datatype: "BYTES",
              shape: [1, 1],
              contents: { bytes_contents: [Buffer.from("a")] },
            },
          ],
        },
        (e: grpcJs.ServiceError) => resolve(e),
      ),
    );
    assert.equal(error.code, GRPC_STATUS.UNIMPLEMENTED);
    assert.equal(error.details, "ModelInfer RPC doesn't support models with decoupled transaction policy");
    // simple's inputs are INT32 [16]: generate maps each array to its input and answers the one response.
    const simple = await fetch(`${server.httpUrl}/v2/models/simple/generate`, {
      method: "POST",
      body: JSON.stringify({ INPUT0: Array.from({ length: 16 }, (_, i) => i), INPUT1: Array(16).fill(1) }),
    });
    const json = (await simple.json()) as { OUTPUT0: number[]; OUTPUT1: number[] };
    assert.deepEqual(
      json.OUTPUT0,
      Array.from({ length: 16 }, (_, i) => i + 1),
    );
  });

  test("the decoupled gRPC stream: a response per token with triton_final_response, true on the last", async () => {
    const call = grpc["ModelStreamInfer"]();
    const responses: Any[] = [];
    const done = new Promise<void>((resolve, reject) => {
      call.on("data", (r: Any) => responses.push(r));
      call.on("end", resolve);
      call.on("error", reject);
    });
    const request = (id: string, empty: boolean) => ({
      id,
      model_name: MODEL,
      inputs: [
        {
          name: "text_input",
          datatype: "BYTES",
          shape: [1, 1],
          contents: { bytes_contents: [Buffer.from("w")] },
        },
        { name: "stream", datatype: "BOOL", shape: [1, 1], contents: { bool_contents: [true] } },
        { name: "max_tokens", datatype: "INT32", shape: [1, 1], contents: { int_contents: [3] } },
      ],
      parameters: empty ? { triton_enable_empty_final_response: { bool_param: true } } : {},
    });
    call.write(request("one", true));
    call.write(request("two", false));
    call.end();
    await done;
    const of = (id: string) => responses.filter((r) => r.infer_response?.id === id);
    const text = (r: Any) =>
      r.infer_response.raw_output_contents.length > 0
        ? Buffer.from(r.infer_response.raw_output_contents[0]).subarray(4).toString()
        : r.infer_response.outputs[0]?.contents?.bytes_contents?.[0]?.toString();
    // The generator's last response carries the final flag (as vLLM's backend sends it), so no empty final
    // response follows even when one is asked for: Triton sends that only for a flag with no response.
    for (const id of ["one", "two"]) {
      assert.deepEqual(of(id).map(text), ["x", "y", "z"], id);
      assert.deepEqual(
        of(id).map((r) => r.infer_response.parameters.triton_final_response.bool_param),
        [false, false, true],
      );
      assert.equal(of(id).at(-1)!.infer_response.parameters.finish_reason.string_param, "length");
    }
  });

  test("16 concurrent streams each get their own text", async () => {
    const prompts = Array.from({ length: 16 }, (_, i) => String.fromCharCode(65 + i));
    const answers = await Promise.all(
      prompts.map((p) =>
        post("generate_stream", { text_input: p, stream: true, max_tokens: 12 }).then((a) =>
          (sseEvents(a.text) as { text_output: string }[]).map((e) => e.text_output).join(""),
        ),
      ),
    );
    assert.deepEqual(
      answers,
      prompts.map((p) => continuation(p, 12)),
    );
    const statistics = async () =>
      ((await (await fetch(`${server.httpUrl}/v2/models/${MODEL}/stats`)).json()) as StatsBody)
        .model_stats[0]!;
    const sizes = (await statistics()).batch_stats.map((b) => b.batch_size);
    assert.ok(Math.max(...sizes) > 1, `steps batched several streams: ${sizes.join(",")}`);
  });

  test("statistics count each response at its index (response_stats) over HTTP and gRPC; ordinary models have none", async () => {
    const statsOf = async (model: string) =>
      ((await (await fetch(`${server.httpUrl}/v2/models/${model}/stats`)).json()) as Any).model_stats[0];
    const successAt = (stats: Any, key: string) => Number(stats.response_stats[key]?.success.count ?? 0);
    const before = await statsOf(MODEL);
    const events = sseEvents(
      (await post("generate_stream", { text_input: "abc", stream: true, max_tokens: 3 })).text,
    );
    assert.equal(events.length, 3);
    const after = await statsOf(MODEL);
    for (const key of ["0", "1", "2"]) assert.equal(successAt(after, key), successAt(before, key) + 1, key);
    // Triton's member order: response_stats between inference_stats and batch_stats.
    assert.deepEqual(Object.keys(after), [
      "name",
      "version",
      "last_inference",
      "inference_count",
      "execution_count",
      "inference_stats",
      "response_stats",
      "batch_stats",
      "memory_usage",
    ]);
    assert.deepEqual(Object.keys(after.response_stats["0"]), [
      "compute_infer",
      "compute_output",
      "success",
      "fail",
      "empty_response",
      "cancel",
    ]);
    assert.deepEqual((await statsOf("simple")).response_stats, {});
    const overGrpc = (await unary(grpc, "ModelStatistics", { name: MODEL })).model_stats[0];
    assert.equal(Number(overGrpc.response_stats["2"].success.count), successAt(after, "2"));
  });

  test("a client that goes away mid-stream is cancelled; the server keeps serving", async () => {
    const failures = async () =>
      Number(
        ((await (await fetch(`${server.httpUrl}/v2/models/${MODEL}/stats`)).json()) as StatsBody)
          .model_stats[0]!.inference_stats.fail.count,
      );
    const before = await failures();
    for (let i = 0; i < 20; i++) {
      await new Promise<void>((resolve, reject) => {
        const url = new URL(`${server.httpUrl}/v2/models/${MODEL}/generate_stream`);
        const req = httpRequest(url, { method: "POST" }, (res) => {
          res.once("data", () => {
            req.destroy();
            resolve();
          });
        });
        req.on("error", () => undefined);
        req.on("close", resolve);
        req.once("error", reject);
        req.end(JSON.stringify({ text_input: " ", stream: true, max_tokens: 4000 }));
      });
    }
    const answer = await post("generate", { text_input: "x", max_tokens: 2, exclude_input_in_output: true });
    assert.equal(JSON.parse(answer.text).text_output, "yz");
    // Every cut stream is cancelled at its next step (none goes on to its 4000 tokens): each counts as a
    // failure. Polled, as the cancellations land after the connections close; the bound only ends a hang.
    const deadline = Date.now() + 60_000;
    while ((await failures()) < before + 20 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(await failures(), before + 20);
  });
});
