/**
 * The OpenAI-compatible endpoint on the HTTP port (as Triton's OpenAI frontend serves it on its own):
 * `GET /v1/models[/{model}]`, `POST /v1/completions` and `POST /v1/chat/completions`, whole or streamed
 * (`stream: true`: server-sent events `data: {chunk}`, then `data: [DONE]`). A completion is one request
 * to a text model's stream of responses (core inferStream): the model streams a response per token when
 * the client streams, else answers once with the whole text. Errors are OpenAI's shape (openai-error.ts);
 * one before the first chunk is a JSON answer with its status, one after it an event
 * `data: {"error": {...}}` and `[DONE]`. As generate_stream: a client that goes away cancels its request
 * (the model's stream leaves its batch at the next step), a reader that lets MAX_UNSENT_BYTES pile up is
 * cut, and front-end threads, whose core has no inferStream, answer 501.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Cancellation } from "../../core/cancel-signal.js";
import type { InferenceCore, InferenceRequest, Parameters } from "../../core/types.js";
import { readBody } from "../body-reader.js";
import { describeError, HttpError } from "../http-error.js";
import type { HandlerContext } from "../infer-handler.js";
import { writeBody } from "../response-writer.js";
import type { Route } from "../router.js";
import { generationRequest } from "./generation-request.js";
import {
  type AnswerHead,
  chunkObject,
  completionId,
  completionObject,
  finishReason,
  type OpenAiEndpoint,
  responseText,
  usageOf,
} from "./openai-answers.js";
import { invalidRequest, OpenAiError, openAiErrorBody } from "./openai-error.js";
import { type GenerationAsk, readChatRequest, readCompletionRequest } from "./openai-request.js";
import { listTextModels, openAiModel, resolveTextModel } from "./text-models.js";

/** Bytes of chunks a stream may have waiting for a slow reader before its connection is cut. */
const MAX_UNSENT_BYTES = 8 * 1024 * 1024;
const DONE = "data: [DONE]\n\n";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The endpoint, made once per front end. */
export interface OpenAiFrontEnd {
  /** Serves one request of an `openai-*` route; answers errors through `fail`; never rejects. */
  handle(route: Route, req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Answers an error in OpenAI's shape (also for the front end's own refusals of /v1 paths). */
  readonly fail: HandlerContext["fail"];
}

/** `context.fail` must answer in OpenAI's shape (http-server.ts passes sendOpenAiError as the writer). */
export function createOpenAiFrontEnd(context: HandlerContext): OpenAiFrontEnd {
  // Models carry no load time here: every one is dated from the front end's start (as Triton's frontend).
  const createdS = Math.floor(Date.now() / 1000);

  const json = (res: ServerResponse, body: object) => {
    const bytes = Buffer.from(JSON.stringify(body), "utf8");
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": bytes.byteLength });
    writeBody(res, [bytes], context.sendTimeoutMs, context.onSendTimeout);
  };

  const readJson = async (req: IncomingMessage, res: ServerResponse): Promise<Json> => {
    const hold = context.holdOf(res);
    let raw: Buffer;
    try {
      raw = await readBody(req, context.maxInputSize, true, hold);
    } catch (error) {
      // The body reader's size refusal is a 400 on Triton's endpoints; OpenAI's (and Triton's frontend's) is 413.
      if (error instanceof HttpError && /exceeds the maximum allowed/.test(error.message)) {
        throw new OpenAiError(413, error.message, { code: "content_too_large" });
      }
      throw error;
    }
    try {
      return JSON.parse(raw.toString("utf8")) as Json;
    } catch (error) {
      throw invalidRequest(
        `We could not parse the JSON body of your request: ${(error as Error).message}`,
        null,
        null,
      );
    } finally {
      // The parsed body is all that is kept of it.
      hold.set(0);
    }
  };

  const complete = async (
    endpoint: OpenAiEndpoint,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> => {
    const inferStream = context.core.inferStream?.bind(context.core);
    if (inferStream === undefined) {
      throw new OpenAiError(
        501,
        "the OpenAI-compatible endpoint is served by the main HTTP thread only: run with --http-thread-count 1",
      );
    }
    const body = await readJson(req, res);
    const ask = endpoint === "chat" ? readChatRequest(body) : readCompletionRequest(body);
    const model = await resolveTextModel(context.core, ask.model);
    if (res.destroyed) return;
    const cancellation = new Cancellation();
    const request = generationRequest(ask, model.metadata, cancellation);
    res.once("close", () => {
      if (!res.writableFinished) cancellation.abort();
    });
    const head: AnswerHead = {
      id: completionId(endpoint),
      created: Math.floor(Date.now() / 1000),
      model: ask.model,
    };
    if (ask.stream) streamAnswer(endpoint, ask, head, inferStream, request, req, res);
    else await wholeAnswer(endpoint, ask, head, inferStream, request, req, res);
  };

  /** The one answer: every response's text, then the object with the last response's counts. */
  const wholeAnswer = (
    endpoint: OpenAiEndpoint,
    ask: GenerationAsk,
    head: AnswerHead,
    inferStream: InferenceCore["inferStream"],
    request: InferenceRequest,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> =>
    new Promise<void>((resolve) => {
      const texts: string[] = [];
      let last: Parameters | undefined;
      let settled = false;
      const done = () => {
        if (settled) return;
        settled = true;
        resolve();
        if (res.destroyed) return;
        const text = (ask.echo ? ask.prompt : "") + texts.join("");
        json(res, completionObject(endpoint, head, text, finishReason(last, ask.maxTokens), usageOf(last)));
      };
      inferStream(request, {
        response(response, final) {
          texts.push(responseText(response));
          last = response.parameters ?? last;
          if (final) done();
        },
        end: done,
        error(error) {
          if (settled) return;
          settled = true;
          resolve();
          if (!res.destroyed) context.fail(req, res, error);
        },
      });
    });

  /** Server-sent events: a chunk per response, the finish chunk, the usage chunk if asked, [DONE]. */
  const streamAnswer = (
    endpoint: OpenAiEndpoint,
    ask: GenerationAsk,
    head: AnswerHead,
    inferStream: InferenceCore["inferStream"],
    request: InferenceRequest,
    req: IncomingMessage,
    res: ServerResponse,
  ): void => {
    let started = false;
    let settled = false;
    let last: Parameters | undefined;
    // With include_usage every chunk says `usage: null` until the last, as OpenAI's do.
    const usageSlot = ask.includeUsage ? null : undefined;
    const write = (event: string) => {
      if (res.destroyed) return;
      res.write(event);
      if (res.writableLength > MAX_UNSENT_BYTES) {
        context.onSendTimeout(res, res.writableLength);
        res.destroy();
      }
    };
    const send = (chunk: object) => write(`data: ${JSON.stringify(chunk)}\n\n`);
    // Headers wait for the first response, so that a request the model refuses gets a JSON error.
    const start = () => {
      if (started) return;
      started = true;
      res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache" });
      if (endpoint === "chat") send(chunkObject(endpoint, head, { text: "", role: true }, null, usageSlot));
      else if (ask.echo) send(chunkObject(endpoint, head, { text: ask.prompt }, null, usageSlot));
    };
    const finish = () => {
      if (settled) return;
      settled = true;
      if (res.destroyed) return;
      start();
      send(chunkObject(endpoint, head, { text: "" }, finishReason(last, ask.maxTokens), usageSlot));
      const usage = usageOf(last);
      if (ask.includeUsage && usage !== undefined) send(chunkObject(endpoint, head, undefined, null, usage));
      if (!res.destroyed) res.end(DONE);
    };
    inferStream(request, {
      response(response, final) {
        if (settled) return;
        last = response.parameters ?? last;
        const text = responseText(response);
        if (text !== "") {
          start();
          send(chunkObject(endpoint, head, { text }, null, usageSlot));
        }
        if (final) finish();
      },
      end: finish,
      error(error) {
        if (settled) return;
        settled = true;
        if (res.destroyed) return;
        if (!started) {
          context.fail(req, res, error);
          return;
        }
        // Mid-stream, the status is sent: the error is an event (the OpenAI SDKs throw it), then [DONE].
        const { status, message } = describeError(error);
        write(`data: ${openAiErrorBody(status, message, error)}\n\n`);
        if (!res.destroyed) res.end(DONE);
      },
    });
  };

  const models = async (route: Route, res: ServerResponse): Promise<void> => {
    if (route.kind === "openai-model") {
      const model = await resolveTextModel(context.core, route.model);
      json(res, openAiModel(model.name, createdS));
      return;
    }
    json(res, { object: "list", data: await listTextModels(context.core, createdS) });
  };

  return {
    fail: context.fail,
    async handle(route, req, res) {
      try {
        if (route.kind === "openai-completions") await complete("completion", req, res);
        else if (route.kind === "openai-chat-completions") await complete("chat", req, res);
        else await models(route, res);
      } catch (error) {
        context.fail(req, res, error);
      }
    },
  };
}
