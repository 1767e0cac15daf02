/**
 * The JSON an OpenAI client reads back: completion and chat completion objects, their streamed chunks and
 * `usage`, built from the model's responses. Text is each response's `text_output`; token counts are the
 * response parameters `prompt_tokens` and `completion_tokens` (cumulative, so the last response's are the
 * request's). `finish_reason` is the response parameter of that name when the model sends one, else
 * "length" when the completion used every token it was allowed, else "stop" (end of sequence or a stop
 * string).
 */
import { randomBytes } from "node:crypto";
import { bytesDataToStrings } from "../../core/bytes-data.js";
import type { BytesData, InferenceResponse, Parameters } from "../../core/types.js";
import { TEXT_OUTPUT } from "./text-models.js";

/** The two endpoints' answers differ in their object names and in how a choice carries its text. */
export type OpenAiEndpoint = "completion" | "chat";

export type FinishReason = "stop" | "length";

export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

/** A completion's id: OpenAI's prefixes and a random tail. */
export function completionId(endpoint: OpenAiEndpoint): string {
  return `${endpoint === "chat" ? "chatcmpl" : "cmpl"}-${randomBytes(12).toString("hex")}`;
}

/** The text of one response (its `text_output` elements, joined). */
export function responseText(response: InferenceResponse): string {
  const output = response.outputs.find((tensor) => tensor.name === TEXT_OUTPUT);
  if (output === undefined || ArrayBuffer.isView(output.data)) return "";
  return bytesDataToStrings(output.data as BytesData).join("");
}

/** A response's token counts, when it carries them. */
export function usageOf(parameters: Parameters | undefined): Usage | undefined {
  const prompt = parameters?.prompt_tokens;
  const completion = parameters?.completion_tokens;
  if (typeof prompt !== "number" || typeof completion !== "number") return undefined;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** Why the completion ended, from its last response's parameters and the max_tokens it was given. */
export function finishReason(parameters: Parameters | undefined, maxTokens: number): FinishReason {
  const told = parameters?.finish_reason;
  if (told === "stop" || told === "length") return told;
  const completion = parameters?.completion_tokens;
  return typeof completion === "number" && completion >= maxTokens ? "length" : "stop";
}

/** What every object of one completion shares. */
export interface AnswerHead {
  readonly id: string;
  readonly created: number;
  readonly model: string;
}

/** The whole answer (no streaming). */
export function completionObject(
  endpoint: OpenAiEndpoint,
  head: AnswerHead,
  text: string,
  reason: FinishReason,
  usage: Usage | undefined,
): object {
  const choice =
    endpoint === "chat"
      ? {
          index: 0,
          message: { role: "assistant", content: text, refusal: null },
          logprobs: null,
          finish_reason: reason,
        }
      : { index: 0, text, logprobs: null, finish_reason: reason };
  return {
    id: head.id,
    object: endpoint === "chat" ? "chat.completion" : "text_completion",
    created: head.created,
    model: head.model,
    choices: [choice],
    ...(usage !== undefined ? { usage } : {}),
  };
}

/**
 * One streamed chunk: `delta` text (chat: `role` too on the first), `reason` on the last. With
 * include_usage every chunk has `usage: null` and a last one, with no choices, the usage (OpenAI's form).
 */
export function chunkObject(
  endpoint: OpenAiEndpoint,
  head: AnswerHead,
  delta: { text: string; role?: boolean } | undefined,
  reason: FinishReason | null,
  usage: Usage | null | undefined,
): object {
  let choices: object[] = [];
  if (delta !== undefined) {
    choices = [
      endpoint === "chat"
        ? {
            index: 0,
            delta:
              reason !== null && delta.text === ""
                ? {}
                : delta.role === true
                  ? { role: "assistant", content: delta.text }
                  : { content: delta.text },
            logprobs: null,
            finish_reason: reason,
          }
        : { index: 0, text: delta.text, logprobs: null, finish_reason: reason },
    ];
  }
  return {
    id: head.id,
    object: endpoint === "chat" ? "chat.completion.chunk" : "text_completion",
    created: head.created,
    model: head.model,
    choices,
    ...(usage !== undefined ? { usage } : {}),
  };
}
