// The requests a run sends, built once before any load from the model's metadata and config and the input
// flags (`--input-data` zero, random or perf_analyzer's JSON files, `--shape`, `-b`, `--string-*`). An
// unknown model is explained, bad input data is a usage error, and a mismatch with the input's
// validation data is described once, all before the first request of load goes out.
import { readFile } from "node:fs/promises";
import type { InferenceClient, ModelMetadata } from "@tbench/client";
import {
  buildInputData,
  type InputData,
  type InputDataFile,
  type InputMetadata,
} from "../load/input-data.js";
import type { BenchConfig } from "./bench-config.js";
import { explainModelError } from "./model-availability.js";
import { UsageError } from "./usage-error.js";
import { findValidationMismatch } from "./validation-check.js";

async function readInputFiles(paths: readonly string[]): Promise<InputDataFile[]> {
  return Promise.all(
    paths.map(async (path) => {
      let text: string;
      try {
        text = await readFile(path, "utf8");
      } catch (error) {
        throw new UsageError(`--input-data ${path}: cannot read the file (${(error as Error).message})`);
      }
      try {
        return { path, json: JSON.parse(text) as unknown };
      } catch {
        throw new UsageError(
          `--input-data ${path}: expected perf_analyzer's JSON input format, the file is not JSON`,
        );
      }
    }),
  );
}

/** Builds the requests for a model with these inputs and this `max_batch_size`. */
async function buildRequests(
  config: BenchConfig,
  inputs: readonly InputMetadata[],
  maxBatchSize: number,
): Promise<InputData> {
  try {
    return buildInputData({
      model: config.model,
      inputs,
      maxBatchSize,
      batchSize: config.batchSize,
      shapes: config.shapes,
      source:
        typeof config.inputData === "string" ? config.inputData : await readInputFiles(config.inputData),
      stringLength: config.stringLength,
      stringData: config.stringData,
      seed: config.seed,
    });
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
}

/** The model as the server describes it: its metadata and its config (Triton's ModelConfig as JSON). */
export interface ModelDescription {
  readonly metadata: ModelMetadata;
  readonly config: Record<string, unknown>;
}

/** Reads the model's metadata and config; an unknown or unready model is explained. */
export async function readModel(
  client: InferenceClient,
  config: BenchConfig,
  signal: AbortSignal,
): Promise<ModelDescription> {
  const metadata = await client
    .modelMetadata(config.model, config.modelVersion)
    .catch(async (error: unknown) => {
      throw await explainModelError(client, config.model, config.modelVersion, error, signal);
    });
  const modelConfig = (await client.modelConfig(config.model, config.modelVersion)) as Record<
    string,
    unknown
  >;
  return { metadata, config: modelConfig };
}

/**
 * Builds the run's requests for the model; when they carry validation data, sends each once and `warn`s
 * about the first mismatch. Not for a sequence model: a step alone means nothing to it (its answer depends
 * on the steps before it), so its responses are only checked during the run, step by step.
 */
export async function buildModelRequests(
  client: InferenceClient,
  config: BenchConfig,
  model: ModelDescription,
  sequenceModel: boolean,
  io: { signal: AbortSignal; warn: (text: string) => void },
): Promise<InputData> {
  const { signal, warn } = io;
  const maxBatchSize = Number(model.config["max_batch_size"] ?? 0);
  const data = await buildRequests(config, model.metadata.inputs as readonly InputMetadata[], maxBatchSize);
  const { requests } = data;
  if (!sequenceModel && requests.some((request) => request.expected !== undefined)) {
    const mismatch = await findValidationMismatch({
      client,
      model: config.model,
      modelVersion: config.modelVersion,
      requests,
      binaryInputs: config.inputTensorFormat === "binary",
      binaryOutputs: config.outputTensorFormat === "binary",
      batchSize: config.batchSize,
      signal,
    });
    if (mismatch !== undefined) warn(mismatch);
  }
  return data;
}
