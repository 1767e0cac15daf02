/**
 * Which models the OpenAI-compatible endpoint serves: text generators, that is models of the
 * `tbench_generator` backend, or any decoupled model with a BYTES input `text_input` and a BYTES output
 * `text_output` (the names Triton's vLLM and TensorRT-LLM models use, and Triton's OpenAI frontend reads).
 * `/v1/models` lists the ready ones in OpenAI's list shape; a completion naming another model, or none
 * that is loaded, gets OpenAI's 404 (`model_not_found`).
 */
import type { ModelConfig, ModelMetadata } from "@tbench/proto";
import { ServerError } from "../../core/server-error.js";
import type { FrontEndCore } from "../front-end-core.js";
import { modelNotFound } from "./openai-error.js";

/** The generation backend's name (repository/config-normalize.ts GENERATOR_BACKEND; front ends import core/ only). */
const GENERATOR_BACKEND = "tbench_generator";
export const TEXT_INPUT = "text_input";
export const TEXT_OUTPUT = "text_output";
/** `owned_by` of every listed model. */
const OWNED_BY = "tbench-server";

/** A model as `/v1/models` lists it. */
export interface OpenAiModel {
  readonly id: string;
  readonly object: "model";
  /** Unix seconds; tbench-server keeps no load time, so the front end's start (as Triton's frontend). */
  readonly created: number;
  readonly owned_by: string;
}

/** Whether a model's configuration makes it a text generator. */
export function isTextModel(config: ModelConfig): boolean {
  if (config.backend === GENERATOR_BACKEND) return true;
  if (config.model_transaction_policy?.decoupled !== true) return false;
  const bytes = (type: string | undefined) => type === "TYPE_STRING";
  return (
    (config.input ?? []).some((input) => input.name === TEXT_INPUT && bytes(input.data_type)) &&
    (config.output ?? []).some((output) => output.name === TEXT_OUTPUT && bytes(output.data_type))
  );
}

/** A text model's name and what building its requests needs. */
export interface TextModel {
  readonly name: string;
  readonly metadata: ModelMetadata;
}

/**
 * The text model named `name` (its ready, latest version), or OpenAI's 404 when there is none: an unknown
 * name, a model with no ready version, or one that is not a text generator. A version that exists but is
 * not ready keeps the core's 503.
 */
export async function resolveTextModel(core: FrontEndCore, name: string): Promise<TextModel> {
  let config: ModelConfig;
  let metadata: ModelMetadata;
  try {
    config = await core.modelConfig(name);
    metadata = await core.modelMetadata(name);
  } catch (error) {
    if (error instanceof ServerError && error.status === "NOT_FOUND") throw modelNotFound(name);
    throw error;
  }
  if (!isTextModel(config)) {
    throw modelNotFound(
      name,
      `is not a text generation model: the OpenAI-compatible endpoint serves models of backend '${GENERATOR_BACKEND}' and decoupled models with a '${TEXT_INPUT}' and a '${TEXT_OUTPUT}' of type TYPE_STRING`,
    );
  }
  return { name, metadata };
}

/** The ready text models, by name, as `/v1/models` lists them. */
export async function listTextModels(core: FrontEndCore, createdS: number): Promise<OpenAiModel[]> {
  const ready = await core.repositoryIndex({ readyOnly: true });
  const names = [...new Set(ready.map((entry) => entry.name))].sort();
  const models: OpenAiModel[] = [];
  for (const name of names) {
    let config: ModelConfig;
    try {
      config = await core.modelConfig(name);
    } catch {
      continue; // unloaded since the index was read
    }
    if (isTextModel(config)) models.push(openAiModel(name, createdS));
  }
  return models;
}

/** One model object. */
export function openAiModel(name: string, createdS: number): OpenAiModel {
  return { id: name, object: "model", created: createdS, owned_by: OWNED_BY };
}
