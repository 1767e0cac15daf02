/**
 * Reads a `/v1/completions` or `/v1/chat/completions` body, once, into what the generator is asked
 * (GenerationAsk). Every member is checked as hostile: a known member against its zod schema (null counts
 * as absent, as in OpenAI's API), a member tbench-server does not implement only with its neutral value
 * (`n: 1`, `top_p: 1`, `logprobs: null`, ...), anything else refused as OpenAI refuses it ("Unrecognized
 * request argument supplied"). Each refusal is a 400 naming the member (`param`), what it must be and what
 * was given. Ranges are OpenAI's (temperature 0 to 2, at most 4 stop strings); the model bounds the rest
 * (max_tokens against its limit, the prompt's length and characters).
 */
import { z } from "zod";
import { renderChatPrompt } from "./chat-prompt.js";
import { invalidRequest } from "./openai-error.js";

/** max_tokens when the request gives none: OpenAI's completions default, and Triton's frontend's. */
export const DEFAULT_MAX_TOKENS = 16;
const INT32_MAX = 2 ** 31 - 1;
/** OpenAI's bound on stop sequences. */
const MAX_STOP = 4;
/** The longest stop string, and model name, accepted (the body bound covers the prompt). */
const MAX_NAME_CHARS = 1024;
/** How much of a refused value an error message shows. */
const SHOWN_CHARS = 64;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** What one completion asks of the model. */
export interface GenerationAsk {
  readonly model: string;
  readonly prompt: string;
  readonly stream: boolean;
  /** `stream_options.include_usage`: a last chunk with the usage. */
  readonly includeUsage: boolean;
  readonly maxTokens: number;
  readonly stop: readonly string[];
  /** An OpenAI seed (int64) as the generator's uint64, two's complement. */
  readonly seed: bigint | undefined;
  readonly temperature: number | undefined;
  /** Completions' `echo`: the prompt before the text. */
  readonly echo: boolean;
}

interface Rule {
  readonly schema: z.ZodType;
  readonly expected: string;
}

const rule = (schema: z.ZodType, expected: string): Rule => ({ schema, expected });

/** Members both endpoints read. */
const COMMON_RULES: Readonly<Record<string, Rule>> = {
  model: rule(z.string().min(1).max(MAX_NAME_CHARS), "a model name"),
  stream: rule(z.boolean(), "a boolean"),
  stream_options: rule(
    z.object({ include_usage: z.boolean().nullish(), include_obfuscation: z.boolean().nullish() }).strict(),
    "an object with a boolean 'include_usage'",
  ),
  max_tokens: rule(z.int().min(0).max(INT32_MAX), `an integer from 0 to ${INT32_MAX}`),
  seed: rule(
    // Any integral number in int64's range: JSON numbers past 2^53 are whole, if not exact.
    z
      .number()
      .refine(Number.isInteger)
      .min(-(2 ** 63))
      .lt(2 ** 63),
    "a 64-bit signed integer",
  ),
  temperature: rule(z.number().min(0).max(2), "a number from 0 to 2"),
  stop: rule(
    z.union([
      z.string().min(1).max(MAX_NAME_CHARS),
      z.array(z.string().min(1).max(MAX_NAME_CHARS)).max(MAX_STOP),
    ]),
    `a non-empty string or an array of at most ${MAX_STOP} of them`,
  ),
};

const COMPLETION_RULES: Readonly<Record<string, Rule>> = {
  ...COMMON_RULES,
  prompt: rule(z.union([z.string(), z.tuple([z.string()])]), "a string (or an array of one string)"),
  echo: rule(z.boolean(), "a boolean"),
};

const CHAT_RULES: Readonly<Record<string, Rule>> = {
  ...COMMON_RULES,
  max_completion_tokens: rule(z.int().min(0).max(INT32_MAX), `an integer from 0 to ${INT32_MAX}`),
};

const isEmptyObject = (v: Json) =>
  v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 0;
const isEmptyArray = (v: Json) => Array.isArray(v) && v.length === 0;

/** Members accepted only with the value that changes nothing, and what tbench-server says of others. */
interface Neutral {
  readonly accepts: (value: Json) => boolean;
  readonly reason: string;
}

const ONE_CHOICE = "tbench-server generates one choice per request";
const COMMON_NEUTRAL: Readonly<Record<string, Neutral>> = {
  n: { accepts: (v) => v === 1, reason: `only n=1 is supported: ${ONE_CHOICE}` },
  top_p: {
    accepts: (v) => v === 1,
    reason: "only top_p=1 is supported: the generator samples from every token",
  },
  frequency_penalty: { accepts: (v) => v === 0, reason: "frequency_penalty is not supported" },
  presence_penalty: { accepts: (v) => v === 0, reason: "presence_penalty is not supported" },
  logit_bias: { accepts: isEmptyObject, reason: "logit_bias is not supported" },
};

const COMPLETION_NEUTRAL: Readonly<Record<string, Neutral>> = {
  ...COMMON_NEUTRAL,
  best_of: { accepts: (v) => v === 1, reason: `only best_of=1 is supported: ${ONE_CHOICE}` },
  logprobs: { accepts: (v) => v === 0, reason: "logprobs are not supported" },
  suffix: { accepts: (v) => v === "", reason: "suffix is not supported" },
};

const CHAT_NEUTRAL: Readonly<Record<string, Neutral>> = {
  ...COMMON_NEUTRAL,
  logprobs: { accepts: (v) => v === false, reason: "logprobs are not supported" },
  top_logprobs: { accepts: (v) => v === 0, reason: "top_logprobs are not supported" },
  tools: { accepts: isEmptyArray, reason: "tools are not supported: tbench-server has no tool calling" },
  functions: {
    accepts: isEmptyArray,
    reason: "functions are not supported: tbench-server has no tool calling",
  },
  tool_choice: { accepts: (v) => v === "none", reason: "tool_choice other than 'none' is not supported" },
  function_call: { accepts: (v) => v === "none", reason: "function_call other than 'none' is not supported" },
  response_format: {
    accepts: (v) => v !== null && typeof v === "object" && !Array.isArray(v) && v.type === "text",
    reason: "only response_format {type: 'text'} is supported",
  },
  modalities: {
    accepts: (v) => Array.isArray(v) && v.length === 1 && v[0] === "text",
    reason: "only the text modality is supported",
  },
};

/** Members read by neither endpoint that change nothing of the answer: accepted and ignored. */
const IGNORED: ReadonlySet<string> = new Set([
  "user",
  "metadata",
  "store",
  "service_tier",
  "parallel_tool_calls",
]);

function shown(value: Json): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    return "a value nested too deep to show"; // JSON.stringify's stack, on a hostile nesting
  }
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}...` : text;
}

/**
 * The members of `body` checked against the endpoint's rules: each known member's parsed value (null and
 * absent left out), after refusing what is unknown or not implemented.
 */
function readMembers(
  body: Json,
  rules: Readonly<Record<string, Rule>>,
  neutral: Readonly<Record<string, Neutral>>,
  extra: ReadonlySet<string>,
): Map<string, unknown> {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw invalidRequest("The request body must be a JSON object.", null, "invalid_type");
  }
  const values = new Map<string, unknown>();
  for (const [name, value] of Object.entries(body)) {
    if (value === null || IGNORED.has(name) || extra.has(name)) continue;
    // Own members only: a body member named `constructor` or `toString` is just unknown.
    const known = Object.hasOwn(rules, name) ? rules[name] : undefined;
    if (known !== undefined) {
      const parsed = known.schema.safeParse(value);
      if (!parsed.success) {
        throw invalidRequest(
          `Invalid '${name}': expected ${known.expected}, but got ${shown(value)} instead.`,
          name,
          "invalid_value",
        );
      }
      values.set(name, parsed.data);
      continue;
    }
    const limited = Object.hasOwn(neutral, name) ? neutral[name] : undefined;
    if (limited !== undefined) {
      if (!limited.accepts(value)) {
        throw invalidRequest(
          `Unsupported value for '${name}': ${limited.reason}.`,
          name,
          "unsupported_value",
        );
      }
      continue;
    }
    const clipped = name.length > SHOWN_CHARS ? `${name.slice(0, SHOWN_CHARS)}...` : name;
    throw invalidRequest(`Unrecognized request argument supplied: ${clipped}`, clipped, "unknown_parameter");
  }
  if (!values.has("model")) {
    throw invalidRequest("Missing required parameter: 'model'.", "model", "missing_required_parameter");
  }
  return values;
}

/** The members both endpoints share, read into the ask. */
function commonAsk(values: Map<string, unknown>, maxTokens: number | undefined) {
  const stream = values.get("stream") === true;
  const options = values.get("stream_options") as { include_usage?: boolean | null } | undefined;
  if (options !== undefined && !stream) {
    throw invalidRequest(
      "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
      "stream_options",
      "invalid_value",
    );
  }
  const stop = values.get("stop") as string | string[] | undefined;
  const seed = values.get("seed") as number | undefined;
  return {
    model: values.get("model") as string,
    stream,
    includeUsage: options?.include_usage === true,
    maxTokens: maxTokens ?? DEFAULT_MAX_TOKENS,
    stop: stop === undefined ? [] : typeof stop === "string" ? [stop] : stop,
    seed: seed === undefined ? undefined : BigInt.asUintN(64, BigInt(seed)),
    temperature: values.get("temperature") as number | undefined,
  };
}

/** A `/v1/completions` body (parsed JSON), or a 400 naming the member at fault. */
export function readCompletionRequest(body: Json): GenerationAsk {
  const values = readMembers(body, COMPLETION_RULES, COMPLETION_NEUTRAL, new Set());
  const prompt = values.get("prompt") as string | [string] | undefined;
  if (prompt === undefined) {
    throw invalidRequest("Missing required parameter: 'prompt'.", "prompt", "missing_required_parameter");
  }
  return {
    ...commonAsk(values, values.get("max_tokens") as number | undefined),
    prompt: typeof prompt === "string" ? prompt : prompt[0],
    echo: values.get("echo") === true,
  };
}

/** A `/v1/chat/completions` body (parsed JSON), or a 400 naming the member at fault. */
export function readChatRequest(body: Json): GenerationAsk {
  const values = readMembers(body, CHAT_RULES, CHAT_NEUTRAL, new Set(["messages"]));
  // max_completion_tokens is the newer name; max_tokens, deprecated for chat, still counts without it.
  const maxTokens = (values.get("max_completion_tokens") ?? values.get("max_tokens")) as number | undefined;
  const messages = (body as { [key: string]: Json }).messages;
  return { ...commonAsk(values, maxTokens), prompt: renderChatPrompt(messages), echo: false };
}
