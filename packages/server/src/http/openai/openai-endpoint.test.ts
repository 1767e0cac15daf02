/**
 * The OpenAI-compatible endpoint on real sockets, against the bundled char_generator (greedy text known:
 * each character's successor until '~', then end-of-sequence) and `simple` (not a text model): the model
 * list, completions and chat completions whole and streamed (the chunks reassemble to the whole text),
 * usage and finish_reason, echo, stop, seed, errors in OpenAI's shape with their statuses (the front end's
 * 403, 404, 405 and 413 included), and streams cut by their clients that leave the server serving.
 */
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { after, before, describe, test } from "node:test";
import { BUNDLED_MODEL_REPOSITORY } from "@tbench/model-builder";
import { type RunningServer, startServer } from "../../server.js";
import { createRecordingLogger } from "../../testing/test-fixtures.js";

const MODEL = "char_generator";
/** The metadata category is restricted on this server: /v1/models needs this header. */
const KEY = { key: "admin-key", value: "s3cret" };
const MAX_INPUT_BYTES = 16 * 1024;

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

interface Answer {
  readonly status: number;
  readonly type: string | null;
  readonly text: string;
}

/** The `data:` payloads of a server-sent event body, `[DONE]` last. */
function sseData(body: string): string[] {
  assert.ok(body.endsWith("\n\n"), `events end with a blank line: ${JSON.stringify(body.slice(-20))}`);
  return body
    .split("\n\n")
    .filter((event) => event !== "")
    .map((event) => {
      assert.ok(event.startsWith("data: "), `an SSE data line: ${event}`);
      return event.slice("data: ".length);
    });
}

// biome-ignore lint/suspicious/noExplicitAny: chunks are read as JSON
type Chunk = any;

/** The chunks of a streamed answer, after checking it ends with [DONE]. */
function chunksOf(answer: Answer): Chunk[] {
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.type, "text/event-stream; charset=utf-8");
  const data = sseData(answer.text);
  assert.equal(data.at(-1), "[DONE]");
  return data.slice(0, -1).map((d) => JSON.parse(d));
}

describe("the OpenAI-compatible endpoint", { timeout: 180_000 }, () => {
  let server: RunningServer;
  const logger = createRecordingLogger();

  before(async () => {
    server = await startServer({
      modelRepository: BUNDLED_MODEL_REPOSITORY,
      modelControlMode: "explicit",
      loadModels: [MODEL, "simple"],
      httpPort: 0,
      grpcPort: false,
      metricsPort: false,
      httpMaxInputSize: MAX_INPUT_BYTES,
      httpRestrictedApis: { metadata: KEY },
      logger,
    });
  });
  after(async () => {
    await server?.close();
  });

  const call = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const response = await fetch(`${server.httpUrl}${path}`, {
      method,
      ...(headers !== undefined ? { headers } : {}),
      ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
    });
    return {
      status: response.status,
      type: response.headers.get("content-type"),
      text: await response.text(),
    };
  };
  const post = (path: string, body: unknown) => call("POST", path, body);
  const completion = (body: object) => post("/v1/completions", { model: MODEL, ...body });
  const chat = (content: string, body: object = {}) =>
    post("/v1/chat/completions", { model: MODEL, messages: [{ role: "user", content }], ...body });

  /** The OpenAI error body of an answer, after checking its status. */
  const errorOf = (answer: Answer, status: number) => {
    assert.equal(answer.status, status, answer.text);
    assert.equal(answer.type, "application/json");
    const body = JSON.parse(answer.text) as { error: Record<string, unknown> };
    assert.deepEqual(Object.keys(body), ["error"]);
    assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "param", "type"]);
    return body.error;
  };

  test("/v1/models lists the loaded text models only, in OpenAI's shape; /v1/models/{m} retrieves one", async () => {
    const list = await call("GET", "/v1/models", undefined, { [KEY.key]: KEY.value });
    assert.equal(list.status, 200, list.text);
    const body = JSON.parse(list.text) as { object: string; data: { created: number }[] };
    assert.equal(body.object, "list");
    assert.equal(body.data.length, 1, "simple is loaded but is no text model");
    const created = body.data[0]!.created;
    assert.ok(
      Number.isInteger(created) && Math.abs(created - Date.now() / 1000) < 3600,
      `created ${created}`,
    );
    assert.deepEqual(body.data, [{ id: MODEL, object: "model", created, owned_by: "tbench-server" }]);
    const one = await call("GET", `/v1/models/${MODEL}`, undefined, { [KEY.key]: KEY.value });
    assert.deepEqual(JSON.parse(one.text), {
      id: MODEL,
      object: "model",
      created,
      owned_by: "tbench-server",
    });
    const simple = errorOf(await call("GET", "/v1/models/simple", undefined, { [KEY.key]: KEY.value }), 404);
    assert.equal(simple.code, "model_not_found");
    assert.match(String(simple.message), /^The model `simple` is not a text generation model/);
  });

  test("a completion: the greedy text, finish_reason stop at end-of-sequence, usage from the model", async () => {
    const answer = await completion({ prompt: "Hello", max_tokens: 40 });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.type, "application/json");
    const body = JSON.parse(answer.text);
    assert.match(body.id, /^cmpl-[0-9a-f]{24}$/);
    assert.deepEqual(
      { ...body, id: "", created: 0 },
      {
        id: "",
        object: "text_completion",
        created: 0,
        model: MODEL,
        choices: [{ index: 0, text: "pqrstuvwxyz{|}~", logprobs: null, finish_reason: "stop" }],
        usage: { prompt_tokens: 5, completion_tokens: 15, total_tokens: 20 },
      },
    );
  });

  test("max_tokens ends with finish_reason length; echo puts the prompt first; 16 tokens by default", async () => {
    const short = JSON.parse((await completion({ prompt: "abc", max_tokens: 4, echo: true })).text);
    assert.deepEqual(short.choices, [{ index: 0, text: "abcdefg", logprobs: null, finish_reason: "length" }]);
    assert.deepEqual(short.usage, { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    const byDefault = JSON.parse((await completion({ prompt: " " })).text);
    assert.equal(byDefault.choices[0].text, continuation(" ", 16));
    assert.equal(byDefault.choices[0].finish_reason, "length");
  });

  test("streamed, the chunks reassemble to the whole text; the last chunk has the finish_reason, then usage and [DONE]", async () => {
    for (const [prompt, maxTokens, reason] of [
      ["Hello", 40, "stop"],
      ["A", 7, "length"],
    ] as const) {
      const whole = JSON.parse((await completion({ prompt, max_tokens: maxTokens })).text);
      const chunks = chunksOf(
        await completion({
          prompt,
          max_tokens: maxTokens,
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
      const usage = chunks.pop();
      assert.deepEqual(usage.choices, []);
      assert.deepEqual(usage.usage, whole.usage);
      const text = chunks.map((c) => c.choices[0].text as string).join("");
      assert.equal(text, whole.choices[0].text);
      assert.equal(text, continuation(prompt, maxTokens));
      assert.deepEqual(
        chunks.map((c) => c.choices[0].finish_reason),
        [...chunks.slice(1).map(() => null), reason],
      );
      assert.ok(chunks.length > text.length, "a chunk per token, as it is made, and the finish chunk");
      for (const c of [...chunks, usage]) {
        assert.equal(c.id, usage.id);
        assert.equal(c.object, "text_completion");
        assert.equal(c.model, MODEL);
      }
      assert.ok(
        chunks.every((c) => c.usage === null),
        "usage: null until the usage chunk",
      );
    }
    const plain = chunksOf(await completion({ prompt: "x", max_tokens: 2, stream: true, echo: true }));
    assert.deepEqual(
      plain.map((c) => c.choices[0].text),
      ["x", "y", "z", ""],
    );
    assert.ok(
      plain.every((c) => !("usage" in c)),
      "no usage member without stream_options",
    );
  });

  test("a chat completion: the rendered prompt's greedy continuation, whole and streamed", async () => {
    // "user: Hi assistant:" ends with ':', whose successors are ";<=>?@...".
    const whole = JSON.parse((await chat("Hi", { max_completion_tokens: 6 })).text);
    assert.match(whole.id, /^chatcmpl-/);
    assert.equal(whole.object, "chat.completion");
    assert.deepEqual(whole.choices, [
      {
        index: 0,
        message: { role: "assistant", content: ";<=>?@", refusal: null },
        logprobs: null,
        finish_reason: "length",
      },
    ]);
    assert.deepEqual(whole.usage, {
      prompt_tokens: "user: Hi assistant:".length,
      completion_tokens: 6,
      total_tokens: 25,
    });
    const chunks = chunksOf(
      await chat("Hi", { max_tokens: 6, stream: true, stream_options: { include_usage: true } }),
    );
    const usage = chunks.pop();
    assert.deepEqual(usage.usage, whole.usage);
    assert.deepEqual(chunks[0].choices, [
      { index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null },
    ]);
    assert.deepEqual(chunks.at(-1).choices, [
      { index: 0, delta: {}, logprobs: null, finish_reason: "length" },
    ]);
    assert.equal(chunks.map((c) => c.choices[0].delta.content ?? "").join(""), ";<=>?@");
    assert.ok(chunks.every((c) => c.object === "chat.completion.chunk"));
  });

  test("stop strings end the text before them (finish_reason stop); a seed makes sampling repeatable", async () => {
    const stopped = JSON.parse((await completion({ prompt: "a", max_tokens: 30, stop: ["zz", "fg"] })).text);
    assert.equal(stopped.choices[0].text, "bcde");
    assert.equal(stopped.choices[0].finish_reason, "stop");
    const streamed = chunksOf(await completion({ prompt: "a", max_tokens: 30, stop: "fg", stream: true }));
    assert.equal(streamed.map((c) => c.choices[0].text).join(""), "bcde");
    assert.equal(streamed.at(-1).choices[0].finish_reason, "stop");
    const sample = async (seed: number) =>
      JSON.parse((await completion({ prompt: " ", max_tokens: 60, temperature: 2, seed })).text).choices[0]
        .text as string;
    const [a, b, c] = [await sample(7), await sample(7), await sample(8)];
    assert.equal(a, b, "one seed, one text");
    assert.notEqual(a, c, "another seed, another text (60 draws at temperature 2)");
  });

  test("streamed usage counts the token that completed a stop string, as the whole answer does", async () => {
    const whole = JSON.parse((await completion({ prompt: "a", max_tokens: 30, stop: "d" })).text);
    const chunks = chunksOf(
      await completion({
        prompt: "a",
        max_tokens: 30,
        stop: "d",
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    assert.deepEqual(chunks.at(-1).usage, whole.usage);
  });

  test("errors are OpenAI's shape, with the status and the member at fault", async () => {
    assert.deepEqual(errorOf(await post("/v1/completions", { model: "nope", prompt: "x" }), 404), {
      message: "The model `nope` does not exist",
      type: "invalid_request_error",
      param: "model",
      code: "model_not_found",
    });
    assert.equal(
      errorOf(await post("/v1/chat/completions", { model: "simple", messages: [] }), 400).param,
      "messages",
    );
    assert.equal(
      errorOf(
        await post("/v1/chat/completions", { model: "simple", messages: [{ role: "user", content: "a" }] }),
        404,
      ).code,
      "model_not_found",
    );
    assert.deepEqual(errorOf(await completion({ prompt: "x", n: 3 }), 400), {
      message:
        "Unsupported value for 'n': only n=1 is supported: tbench-server generates one choice per request.",
      type: "invalid_request_error",
      param: "n",
      code: "unsupported_value",
    });
    // The model's own refusals (its tokenizer, its max_tokens limit) keep its words, before any chunk.
    for (const stream of [false, true]) {
      const unknown = errorOf(await completion({ prompt: "héllo", stream }), 400);
      assert.match(String(unknown.message), /no token for "é"/);
      assert.equal(unknown.type, "invalid_request_error");
    }
    assert.match(
      String(errorOf(await completion({ prompt: "x", max_tokens: 99999 }), 400).message),
      /'max_tokens' must be an integer in \[0, 4096\], got 99999/,
    );
    assert.match(
      String(errorOf(await post("/v1/completions", "{"), 400).message),
      /^We could not parse the JSON body/,
    );
    assert.equal(errorOf(await call("GET", "/v1/completions"), 405).message, "Method Not Allowed");
    assert.deepEqual(errorOf(await call("GET", "/v1/embeddings"), 404), {
      message: "Invalid URL (GET /v1/embeddings)",
      type: "invalid_request_error",
      param: null,
      code: null,
    });
    const tooLarge = errorOf(await completion({ prompt: "x".repeat(MAX_INPUT_BYTES) }), 413);
    assert.equal(tooLarge.code, "content_too_large");
    assert.match(String(tooLarge.message), /exceeds the maximum allowed input size of 16384 bytes/);
    // The restricted category (metadata here) answers 403 before anything else, in OpenAI's shape.
    assert.deepEqual(errorOf(await call("GET", "/v1/models"), 403), {
      message: `This API is restricted, expecting header '${KEY.key}'`,
      type: "permission_error",
      param: null,
      code: null,
    });
    // /v2 keeps Triton's shape.
    assert.deepEqual(JSON.parse((await post("/v2/models/nope/generate", {})).text), {
      error: "Request for unknown model: 'nope' is not found",
    });
  });

  test("a client that goes away mid-stream cancels its request; the server keeps serving", async () => {
    const failures = async () =>
      Number(
        (
          (await (await fetch(`${server.httpUrl}/v2/models/${MODEL}/stats`)).json()) as {
            model_stats: { inference_stats: { fail: { count: number } } }[];
          }
        ).model_stats[0]!.inference_stats.fail.count,
      );
    const before = await failures();
    const cuts = 10;
    for (let i = 0; i < cuts; i++) {
      const path = i % 2 === 0 ? "/v1/completions" : "/v1/chat/completions";
      const body =
        i % 2 === 0
          ? { model: MODEL, prompt: " ", stream: true, max_tokens: 4000 }
          : { model: MODEL, messages: [{ role: "user", content: " " }], stream: true, max_tokens: 4000 };
      await new Promise<void>((resolve, reject) => {
        const req = httpRequest(new URL(`${server.httpUrl}${path}`), { method: "POST" }, (res) => {
          res.once("data", () => req.destroy());
        });
        req.on("close", resolve);
        req.on("error", () => undefined);
        req.once("response", (res) =>
          res.statusCode === 200 ? undefined : reject(new Error(`${res.statusCode}`)),
        );
        req.end(JSON.stringify(body));
      });
    }
    const next = JSON.parse((await completion({ prompt: "x", max_tokens: 2 })).text);
    assert.equal(next.choices[0].text, "yz");
    // Each cut stream leaves the batch at its next step (none runs on to 4000 tokens) and counts as a
    // failure. Polled, as the cancellations land after the connections close; the bound only ends a hang.
    const deadline = Date.now() + 60_000;
    while ((await failures()) < before + cuts && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(await failures(), before + cuts);
  });
});
