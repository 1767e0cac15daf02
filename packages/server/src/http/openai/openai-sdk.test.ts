/**
 * The official OpenAI SDK (npm `openai`) against tbench-server's OpenAI-compatible endpoint, as an
 * application would point it at any OpenAI-compatible server: `new OpenAI({ baseURL, apiKey })`. Streamed
 * and whole completions and chat completions with the bundled char_generator's known greedy text, usage,
 * the model list, errors read into the SDK's classes, and a stream the application stops early.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { BUNDLED_MODEL_REPOSITORY } from "@tbench/model-builder";
import OpenAI from "openai";
import { type RunningServer, startServer } from "../../server.js";
import { createRecordingLogger } from "../../testing/test-fixtures.js";

const MODEL = "char_generator";

describe("the OpenAI SDK against tbench-server", { timeout: 180_000 }, () => {
  let server: RunningServer;
  let client: OpenAI;

  before(async () => {
    server = await startServer({
      modelRepository: BUNDLED_MODEL_REPOSITORY,
      modelControlMode: "explicit",
      loadModels: [MODEL, "simple"],
      httpPort: 0,
      grpcPort: false,
      metricsPort: false,
      logger: createRecordingLogger(),
    });
    // No retries: every answer here is the first one.
    client = new OpenAI({ baseURL: `${server.httpUrl}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  after(async () => {
    await server?.close();
  });

  test("streams a completion: the deltas make the greedy text, the last chunk says why it ended", async () => {
    const stream = await client.completions.create({
      model: MODEL,
      prompt: "Hello",
      max_tokens: 40,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    const reasons: (string | null)[] = [];
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        text += choice.text;
        reasons.push(choice.finish_reason);
      }
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, "pqrstuvwxyz{|}~");
    assert.equal(reasons.at(-1), "stop");
    assert.deepEqual(usage, { prompt_tokens: 5, completion_tokens: 15, total_tokens: 20 });
  });

  test("streams a chat completion, and answers one whole", async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: "system", content: "Count on." },
        { role: "user", content: "abc" },
      ],
      max_completion_tokens: 5,
      stream: true,
    });
    let content = "";
    let role: string | undefined;
    let reason: string | null = null;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      role ??= choice?.delta.role;
      content += choice?.delta.content ?? "";
      reason = choice?.finish_reason ?? reason;
    }
    // "system: Count on. user: abc assistant:" ends with ':'.
    assert.equal(role, "assistant");
    assert.equal(content, ";<=>?");
    assert.equal(reason, "length");
    const whole = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "abc" }],
      max_tokens: 5,
    });
    assert.equal(whole.choices[0]?.message.content, ";<=>?");
    assert.equal(whole.choices[0]?.finish_reason, "length");
    const promptTokens = "user: abc assistant:".length; // a token per character
    assert.deepEqual(whole.usage, {
      prompt_tokens: promptTokens,
      completion_tokens: 5,
      total_tokens: promptTokens + 5,
    });
  });

  test("lists the text models and retrieves one", async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    assert.deepEqual(ids, [MODEL]);
    assert.equal((await client.models.retrieve(MODEL)).owned_by, "tbench-server");
  });

  test("errors arrive as the SDK's error classes, with status, param and code", async () => {
    const notFound = await client.completions.create({ model: "simple", prompt: "x" }).then(
      () => assert.fail("expected a 404"),
      (error: unknown) => error,
    );
    assert.ok(notFound instanceof OpenAI.NotFoundError, String(notFound));
    assert.equal(notFound.status, 404);
    assert.equal(notFound.code, "model_not_found");
    const bad = await client.completions.create({ model: MODEL, prompt: "x", n: 2 }).then(
      () => assert.fail("expected a 400"),
      (error: unknown) => error,
    );
    assert.ok(bad instanceof OpenAI.BadRequestError, String(bad));
    assert.equal(bad.param, "n");
    assert.match(bad.message, /only n=1 is supported/);
  });

  test("an application that stops reading a stream ends it; the next call is served", async () => {
    const stream = await client.completions.create({
      model: MODEL,
      prompt: " ",
      max_tokens: 4000,
      stream: true,
    });
    let seen = "";
    for await (const chunk of stream) {
      seen += chunk.choices[0]?.text ?? "";
      if (seen.length >= 3) break; // the SDK aborts the request
    }
    assert.equal(seen, '!"#');
    const next = await client.completions.create({ model: MODEL, prompt: "x", max_tokens: 2 });
    assert.equal(next.choices[0]?.text, "yz");
  });
});
