/**
 * The generation backend's config (`backend: "tbench_generator"`), read as a Triton config: the model's
 * inputs and outputs are what clients send and get (Triton's vLLM backend's names: `text_input`, `stream`,
 * `max_tokens`, `temperature`, `seed`, `stop`, `exclude_input_in_output`; `text_output`), the version
 * directory holds the step model (`model.onnx`), and `parameters` hold the rest:
 *   tokenizer            file in the model's directory (default `tokenizer.json`)
 *   inflight_batching    "true" (default): every live stream's step runs in one batch per iteration;
 *                        "false": one stream runs at a time, to its end
 *   max_tokens           tokens generated when a request does not say (default 64)
 *   max_tokens_limit     the most a request may ask for (default 4096)
 *   max_prompt_tokens    the longest prompt accepted, in tokens (default 4096)
 *   max_queued_streams   streams waiting for a place in the batch before new ones are refused (default 1024)
 * `max_batch_size` is the most streams one step runs. Every request is one stream (batch size 1).
 */
import type { Datatype } from "@tbench/proto";
import { bytesDataToStrings } from "../core/bytes-data.js";
import { ServerError } from "../core/server-error.js";
import type { BytesData, InferenceRequest, Tensor } from "../core/types.js";
import { GENERATOR_BACKEND } from "../repository/config-normalize.js";
import type { ModelSpec } from "../repository/model-spec.js";
import type { ValidatedRequest } from "../scheduler/scheduler.js";

/** The step model's tensors (the bundled char_generator's builder documents the contract). */
export const STEP_IO = {
  inputIds: "input_ids",
  state: "state",
  logits: "logits",
  stateOut: "state_out",
} as const;

/** The request inputs a generator may declare, with their types; only text_input is required. */
const GENERATOR_INPUTS: Readonly<Record<string, Datatype>> = {
  text_input: "BYTES",
  stream: "BOOL",
  max_tokens: "INT32",
  temperature: "FP32",
  seed: "UINT64",
  stop: "BYTES",
  exclude_input_in_output: "BOOL",
};

export const TEXT_OUTPUT = "text_output";

export interface GeneratorSettings {
  readonly tokenizerFile: string;
  readonly inflightBatching: boolean;
  readonly defaultMaxTokens: number;
  readonly maxTokensLimit: number;
  readonly maxPromptTokens: number;
  readonly maxQueuedStreams: number;
  /** Most streams in one step: max_batch_size. */
  readonly maxBatch: number;
}

/** Largest value any count parameter may take: bounds every allocation they size. */
const COUNT_CEILING = 1 << 20;

function countParameter(spec: ModelSpec, key: string, fallback: number): number {
  const text = spec.parameters.get(key);
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < 1 || value > COUNT_CEILING) {
    throw new ServerError(
      "INVALID_ARG",
      `parameter '${key}' of model '${spec.name}' must be an integer in [1, ${COUNT_CEILING}], got '${text}'`,
    );
  }
  return value;
}

/**
 * The generator's settings from its config, or INVALID_ARG naming what is wrong: the inputs must be among
 * the known ones with their types, `text_output` the one output (BYTES), the policy decoupled, and the
 * count parameters positive integers.
 */
export function generatorSettings(spec: ModelSpec, decoupled: boolean): GeneratorSettings {
  const name = spec.name;
  const fail = (message: string): never => {
    throw new ServerError("INVALID_ARG", message);
  };
  if (!decoupled) {
    fail(
      `model '${name}' of backend '${GENERATOR_BACKEND}' must set model_transaction_policy { decoupled: true }: it answers with a response per token`,
    );
  }
  if (spec.maxBatchSize < 1) {
    fail(
      `model '${name}' of backend '${GENERATOR_BACKEND}' must set max_batch_size >= 1 (the most streams per step)`,
    );
  }
  for (const input of spec.inputs) {
    const expected = GENERATOR_INPUTS[input.name];
    if (expected === undefined) {
      fail(
        `input '${input.name}' of model '${name}' is not one backend '${GENERATOR_BACKEND}' reads; it reads ${Object.keys(GENERATOR_INPUTS).join(", ")}`,
      );
    }
    if (input.datatype !== expected) {
      fail(`input '${input.name}' of model '${name}' must have data type ${expected}, got ${input.datatype}`);
    }
  }
  const text = spec.inputs.find((input) => input.name === "text_input");
  if (text === undefined || text.optional) fail(`model '${name}' must have a required input 'text_input'`);
  const outputs = spec.outputs.map((o) => `${o.name}:${o.datatype}`);
  if (outputs.length !== 1 || outputs[0] !== `${TEXT_OUTPUT}:BYTES`) {
    fail(
      `model '${name}' of backend '${GENERATOR_BACKEND}' must have exactly one output, '${TEXT_OUTPUT}' of type TYPE_STRING`,
    );
  }
  const inflight = spec.parameters.get("inflight_batching") ?? "true";
  if (inflight !== "true" && inflight !== "false") {
    fail(`parameter 'inflight_batching' of model '${name}' must be "true" or "false", got '${inflight}'`);
  }
  const maxTokensLimit = countParameter(spec, "max_tokens_limit", 4096);
  return {
    tokenizerFile: spec.parameters.get("tokenizer") || "tokenizer.json",
    inflightBatching: inflight === "true",
    defaultMaxTokens: Math.min(countParameter(spec, "max_tokens", 64), maxTokensLimit),
    maxTokensLimit,
    maxPromptTokens: countParameter(spec, "max_prompt_tokens", 4096),
    maxQueuedStreams: countParameter(spec, "max_queued_streams", 1024),
    maxBatch: spec.maxBatchSize,
  };
}

/** What one request asks of the generator. */
export interface GenerationOptions {
  readonly prompt: string;
  /** A response per token (true) or one response with the whole text (false, the default). */
  readonly stream: boolean;
  readonly maxTokens: number;
  readonly temperature: number;
  readonly seed: bigint;
  readonly stop: readonly string[];
  /** Without streaming, whether the prompt is left out of the text (default: included, as vLLM's backend). */
  readonly excludeInput: boolean;
}

/** The first element of an input tensor, as a JS value (strings for BYTES). */
function firstValue(tensor: Tensor): unknown {
  const data = tensor.data;
  if (!ArrayBuffer.isView(data)) return bytesDataToStrings(data as BytesData)[0];
  return (data as unknown as ArrayLike<unknown>)[0];
}

/**
 * Reads one request's options: each from its input tensor when the request has one, else from the
 * request parameter of the same name (what generate's `parameters` become when no input has the name),
 * else the default. INVALID_ARG names the option, what it must be and what was given.
 */
export function generationOptions(
  validated: ValidatedRequest,
  settings: GeneratorSettings,
  model: string,
): GenerationOptions {
  const request: InferenceRequest = validated.request;
  const fail = (message: string): never => {
    throw new ServerError("INVALID_ARG", `${message} for model '${model}'`);
  };
  const inputs = new Map(validated.inputs.map((input) => [input.spec.name, input.tensor]));
  const raw = (name: string): unknown => {
    const tensor = inputs.get(name);
    if (tensor !== undefined)
      return name === "stop" ? bytesDataToStrings(tensor.data as BytesData) : firstValue(tensor);
    return request.parameters?.[name];
  };
  const bool = (name: string): boolean => {
    const value = raw(name);
    if (value === undefined) return false;
    if (typeof value === "boolean") return value;
    if (value === 0 || value === 1) return value === 1;
    return fail(`'${name}' must be a boolean, got ${JSON.stringify(value)}`);
  };
  const prompt = raw("text_input");
  if (typeof prompt !== "string") fail("'text_input' must be a string");
  const maxTokensValue = raw("max_tokens");
  let maxTokens = settings.defaultMaxTokens;
  if (maxTokensValue !== undefined) {
    const n = Number(maxTokensValue);
    if (typeof maxTokensValue === "boolean" || !Number.isInteger(n) || n < 0 || n > settings.maxTokensLimit) {
      fail(
        `'max_tokens' must be an integer in [0, ${settings.maxTokensLimit}], got ${String(maxTokensValue)}`,
      );
    }
    maxTokens = n;
  }
  const temperatureValue = raw("temperature") ?? 0;
  const temperature = Number(temperatureValue);
  if (
    typeof temperatureValue === "boolean" ||
    !Number.isFinite(temperature) ||
    temperature < 0 ||
    temperature > 100
  ) {
    fail(`'temperature' must be a number in [0, 100], got ${String(temperatureValue)}`);
  }
  const seedValue = raw("seed");
  let seed = 0n;
  if (seedValue !== undefined) {
    try {
      seed = BigInt(seedValue as bigint | number | string);
    } catch {
      fail(`'seed' must be an unsigned integer, got ${String(seedValue)}`);
    }
    if (seed < 0n || seed >= 1n << 64n)
      fail(`'seed' must be an unsigned 64-bit integer, got ${String(seedValue)}`);
  } else if (temperature > 0) {
    seed = BigInt(Math.floor(Math.random() * 2 ** 32));
  }
  const stopValue = raw("stop");
  const stop =
    stopValue === undefined
      ? []
      : Array.isArray(stopValue)
        ? stopValue
        : typeof stopValue === "string"
          ? [stopValue]
          : undefined;
  if (stop === undefined || stop.some((s) => typeof s !== "string" || s === "")) {
    fail(`'stop' must be a non-empty string or strings, got ${JSON.stringify(stopValue)}`);
  }
  return {
    prompt: prompt as string,
    stream: bool("stream"),
    maxTokens,
    temperature,
    seed,
    stop: stop as string[],
    excludeInput: bool("exclude_input_in_output"),
  };
}
