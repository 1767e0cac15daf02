/**
 * Reading OpenAI request bodies (openai-request.ts, chat-prompt.ts) without a server: what each member
 * becomes, the defaults, the chat template, and the 400 each hostile or unsupported value gets (param, code
 * and message, as a client reads them).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { renderChatPrompt } from "./chat-prompt.js";
import { OpenAiError } from "./openai-error.js";
import { DEFAULT_MAX_TOKENS, readChatRequest, readCompletionRequest } from "./openai-request.js";

type Json = Parameters<typeof readCompletionRequest>[0];

/** The OpenAiError `read` throws, as {status, param, code, message}. */
function refusal(read: () => unknown) {
  try {
    read();
  } catch (error) {
    assert.ok(error instanceof OpenAiError, `an OpenAiError: ${String(error)}`);
    return { status: error.statusCode, param: error.param, code: error.code, message: error.message };
  }
  assert.fail("expected a refusal");
}

describe("completion requests", () => {
  test("the members become the ask; null is absent; defaults as OpenAI's", () => {
    assert.deepEqual(readCompletionRequest({ model: "m", prompt: "Hi" }), {
      model: "m",
      prompt: "Hi",
      stream: false,
      includeUsage: false,
      maxTokens: DEFAULT_MAX_TOKENS,
      stop: [],
      seed: undefined,
      temperature: undefined,
      echo: false,
    });
    assert.deepEqual(
      readCompletionRequest({
        model: "m",
        prompt: ["Hi"],
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: 3,
        stop: "x",
        seed: -1,
        temperature: 0.5,
        echo: true,
        n: 1,
        top_p: 1,
        logprobs: null,
        user: "someone",
        suffix: null,
      }),
      {
        model: "m",
        prompt: "Hi",
        stream: true,
        includeUsage: true,
        maxTokens: 3,
        stop: ["x"],
        seed: 2n ** 64n - 1n,
        temperature: 0.5,
        echo: true,
      },
    );
  });

  test("each bad member gets a 400 naming it", () => {
    const bad = (body: Json) => refusal(() => readCompletionRequest(body));
    assert.deepEqual(bad({ prompt: "x" }), {
      status: 400,
      param: "model",
      code: "missing_required_parameter",
      message: "Missing required parameter: 'model'.",
    });
    assert.equal(bad({ model: "m" }).param, "prompt");
    assert.deepEqual(bad({ model: "m", prompt: "x", temperature: 2.5 }), {
      status: 400,
      param: "temperature",
      code: "invalid_value",
      message: "Invalid 'temperature': expected a number from 0 to 2, but got 2.5 instead.",
    });
    assert.equal(bad({ model: "m", prompt: "x", max_tokens: -1 }).param, "max_tokens");
    assert.equal(bad({ model: "m", prompt: "x", max_tokens: 1.5 }).param, "max_tokens");
    assert.equal(bad({ model: "m", prompt: "x", max_tokens: "5" }).param, "max_tokens");
    assert.equal(bad({ model: "m", prompt: "x", max_tokens: 2 ** 31 }).param, "max_tokens");
    assert.equal(bad({ model: "m", prompt: "x", seed: 1.5 }).param, "seed");
    assert.equal(bad({ model: "m", prompt: "x", seed: 2 ** 63 }).param, "seed");
    assert.equal(bad({ model: "m", prompt: "x", stop: ["a", "b", "c", "d", "e"] }).param, "stop");
    assert.equal(bad({ model: "m", prompt: "x", stop: [""] }).param, "stop");
    assert.equal(bad({ model: "m", prompt: "x", stop: 5 }).param, "stop");
    assert.equal(bad({ model: "m", prompt: "x", stream: "yes" }).param, "stream");
    assert.equal(bad({ model: "m", prompt: ["a", "b"] }).param, "prompt");
    assert.equal(bad({ model: "m", prompt: [1, 2] }).param, "prompt");
    assert.equal(bad({ model: "", prompt: "x" }).param, "model");
    assert.equal(
      bad({ model: "m", prompt: "x", stream_options: { include_usage: "1" } }).param,
      "stream_options",
    );
    assert.deepEqual(bad({ model: "m", prompt: "x", stream_options: { include_usage: true } }), {
      status: 400,
      param: "stream_options",
      code: "invalid_value",
      message: "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
    });
    const deep = JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`) as Json;
    assert.equal(bad({ model: "m", prompt: "x", stop: deep }).param, "stop");
    assert.equal(bad([] as Json).code, "invalid_type");
    assert.equal(bad("text").code, "invalid_type");
  });

  test("what is not implemented is refused unless neutral; unknown members are refused", () => {
    const bad = (body: Json) => refusal(() => readCompletionRequest(body));
    assert.deepEqual(bad({ model: "m", prompt: "x", n: 2 }), {
      status: 400,
      param: "n",
      code: "unsupported_value",
      message:
        "Unsupported value for 'n': only n=1 is supported: tbench-server generates one choice per request.",
    });
    for (const [name, value] of [
      ["best_of", 2],
      ["top_p", 0.9],
      ["frequency_penalty", 0.5],
      ["presence_penalty", -1],
      ["logit_bias", { "50256": -100 }],
      ["logprobs", 2],
      ["suffix", "end"],
    ] as const) {
      assert.equal(bad({ model: "m", prompt: "x", [name]: value }).param, name, name);
    }
    assert.deepEqual(bad({ model: "m", prompt: "x", top_k: 5 }), {
      status: 400,
      param: "top_k",
      code: "unknown_parameter",
      message: "Unrecognized request argument supplied: top_k",
    });
    assert.equal(bad({ model: "m", prompt: "x", messages: [] }).code, "unknown_parameter");
    for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      assert.equal(bad(JSON.parse(`{"model": "m", "prompt": "x", "${name}": 1}`)).param, name, name);
    }
    const long = "k".repeat(500);
    assert.equal(bad({ model: "m", prompt: "x", [long]: 1 }).message.length < 120, true);
  });
});

describe("chat requests", () => {
  test("messages render as `role: content` turns joined by a space, then `assistant:`", () => {
    assert.equal(
      renderChatPrompt([
        { role: "system", content: "Be brief." },
        {
          role: "user",
          content: [
            { type: "text", text: "Hi" },
            { type: "text", text: " there" },
          ],
        },
        { role: "assistant", content: null },
        { role: "developer", content: "x", name: "ignored" },
      ]),
      "system: Be brief. user: Hi there assistant:  developer: x assistant:",
    );
    const ask = readChatRequest({
      model: "m",
      messages: [{ role: "user", content: "Hello" }],
      max_tokens: 9,
      max_completion_tokens: 4,
    });
    assert.equal(ask.prompt, "user: Hello assistant:");
    assert.equal(ask.maxTokens, 4, "max_completion_tokens wins over max_tokens");
    assert.equal(
      readChatRequest({ model: "m", messages: [{ role: "user", content: "a" }], max_tokens: 9 }).maxTokens,
      9,
    );
    assert.equal(readChatRequest({ model: "m", messages: [{ role: "user", content: "a" }] }).echo, false);
  });

  test("bad messages and what chat does not implement get a 400 naming them", () => {
    const bad = (body: Json) => refusal(() => readChatRequest(body));
    const user = [{ role: "user", content: "a" }];
    assert.equal(bad({ model: "m" }).code, "missing_required_parameter");
    assert.equal(bad({ model: "m", messages: [] }).param, "messages");
    assert.equal(bad({ model: "m", messages: "hi" }).param, "messages");
    assert.equal(bad({ model: "m", messages: [5] }).param, "messages[0]");
    assert.deepEqual(bad({ model: "m", messages: [{ role: "tool", content: "x", tool_call_id: "1" }] }), {
      status: 400,
      param: "messages[0].role",
      code: "unsupported_value",
      message: "Messages with role 'tool' are not supported: tbench-server has no tool calling.",
    });
    assert.equal(bad({ model: "m", messages: [{ role: "robot", content: "x" }] }).param, "messages[0].role");
    assert.equal(bad({ model: "m", messages: [{ role: "user" }] }).param, "messages[0].content");
    assert.equal(bad({ model: "m", messages: [{ role: "user", content: 5 }] }).param, "messages[0].content");
    assert.deepEqual(
      bad({
        model: "m",
        messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "http://x" } }] }],
      }),
      {
        status: 400,
        param: "messages[0].content[0].type",
        code: "unsupported_value",
        message:
          "Content parts of type 'image_url' are not supported: tbench-server's models read text only.",
      },
    );
    assert.equal(
      bad({ model: "m", messages: [{ role: "assistant", content: null, tool_calls: [{ id: "1" }] }] }).param,
      "messages[0].tool_calls",
    );
    assert.equal(
      bad({ model: "m", messages: user, max_completion_tokens: -2 }).param,
      "max_completion_tokens",
    );
    assert.equal(bad({ model: "m", messages: user, tools: [{ type: "function" }] }).param, "tools");
    assert.equal(bad({ model: "m", messages: user, logprobs: true }).param, "logprobs");
    assert.equal(
      bad({ model: "m", messages: user, response_format: { type: "json_object" } }).param,
      "response_format",
    );
    assert.equal(bad({ model: "m", messages: user, echo: true }).code, "unknown_parameter");
    // The neutral values pass.
    readChatRequest({
      model: "m",
      messages: user,
      tools: [],
      tool_choice: "none",
      logprobs: false,
      response_format: { type: "text" },
      n: 1,
      store: false,
      parallel_tool_calls: true,
    });
  });
});
