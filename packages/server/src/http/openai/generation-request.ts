/**
 * The core request for one OpenAI completion, mapped as Triton's OpenAI frontend maps it for a vLLM- or
 * TensorRT-LLM-style model: `text_input` the prompt, `stream`, `max_tokens`, and `temperature`, `seed`,
 * `stop` when asked, each as the model's input of that name (its datatype, shaped into its dims) or, where
 * the model declares no such input, as a request parameter of the name (what the tbench_generator backend
 * reads either way). `exclude_input_in_output` is always true: the endpoint adds the prompt itself for
 * `echo`, so a streamed and a whole answer echo alike.
 */
import type { Datatype, ModelMetadata, TensorMetadata } from "@tbench/proto";
import { bytesDataFromStrings } from "../../core/bytes-data.js";
import type { CancelSignal } from "../../core/cancel-signal.js";
import type { InferenceRequest, Tensor } from "../../core/types.js";
import { invalidRequest, OpenAiError } from "./openai-error.js";
import type { GenerationAsk } from "./openai-request.js";
import { TEXT_INPUT } from "./text-models.js";

type Value = string | number | boolean | bigint;

/** The shape of `count` elements in an input of `dims`: the innermost variable dim takes them, others are 1. */
function shapeFor(input: TensorMetadata, count: number, model: string): number[] {
  const shape = input.shape.map((d) => (d === -1 ? 1 : d));
  const variable = input.shape.lastIndexOf(-1);
  if (variable >= 0) shape[variable] = count;
  if (shape.reduce((a, b) => a * b, 1) !== count) {
    throw new OpenAiError(
      500,
      `input '${input.name}' of model '${model}' has dims [${input.shape.join(", ")}], which cannot hold ${count} element(s)`,
    );
  }
  return shape;
}

/** Tensor data of `datatype` holding `values`, or undefined for a datatype this mapping does not fill. */
function tensorData(datatype: Datatype, values: readonly Value[]): Tensor["data"] | undefined {
  const numbers = () => values.map((v) => (typeof v === "boolean" ? (v ? 1 : 0) : Number(v)));
  const bigints = () =>
    values.map((v) => (typeof v === "bigint" ? v : BigInt(typeof v === "boolean" ? Number(v) : v)));
  switch (datatype) {
    case "BYTES":
      return bytesDataFromStrings(values.map(String));
    case "BOOL":
      return Uint8Array.from(values, (v) =>
        v === true || (typeof v !== "boolean" && Number(v) !== 0) ? 1 : 0,
      );
    case "INT32":
      return Int32Array.from(numbers());
    case "UINT32":
      return Uint32Array.from(numbers());
    case "FP32":
      return Float32Array.from(numbers());
    case "FP64":
      return Float64Array.from(numbers());
    case "INT64":
      return BigInt64Array.from(bigints(), (v) => BigInt.asIntN(64, v));
    case "UINT64":
      return BigUint64Array.from(bigints(), (v) => BigInt.asUintN(64, v));
    default:
      return undefined;
  }
}

/** A request parameter's form of a value (parameters carry no bigints: a uint64 past 2^53 travels as text). */
function parameterValue(value: Value): string | number | boolean {
  if (typeof value !== "bigint") return value;
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
}

/** Builds the core request for `ask` to the model described by `metadata`. */
export function generationRequest(
  ask: GenerationAsk,
  metadata: ModelMetadata,
  signal: CancelSignal,
): InferenceRequest {
  const model = metadata.name;
  const inputs = new Map(metadata.inputs.map((input) => [input.name, input]));
  const tensors: Tensor[] = [];
  const parameters: Record<string, string | number | boolean> = {};
  const set = (name: string, values: readonly Value[]) => {
    const input = inputs.get(name);
    if (input === undefined) {
      if (name === TEXT_INPUT) throw new OpenAiError(500, `model '${model}' has no input '${TEXT_INPUT}'`);
      if (values.length !== 1) {
        // A parameter holds one value: several stop strings need the model's own `stop` input.
        throw invalidRequest(
          `Model '${model}' takes at most one '${name}' value: it has no '${name}' input.`,
          name,
          "unsupported_value",
        );
      }
      parameters[name] = parameterValue(values[0]!);
      return;
    }
    const datatype = input.datatype as Datatype;
    const data = tensorData(datatype, values);
    if (data === undefined) {
      throw new OpenAiError(
        500,
        `input '${name}' of model '${model}' has datatype ${datatype}, which the OpenAI-compatible endpoint cannot fill`,
      );
    }
    tensors.push({ name, datatype, shape: shapeFor(input, values.length, model), data });
  };
  set(TEXT_INPUT, [ask.prompt]);
  set("stream", [ask.stream]);
  set("max_tokens", [ask.maxTokens]);
  if (ask.temperature !== undefined) set("temperature", [ask.temperature]);
  if (ask.seed !== undefined) set("seed", [ask.seed]);
  if (ask.stop.length > 0) set("stop", ask.stop);
  set("exclude_input_in_output", [true]);
  return {
    model,
    inputs: tensors,
    ...(Object.keys(parameters).length > 0 ? { parameters } : {}),
    signal,
  };
}
