// The requests a run sends, built once before any load from the model's metadata and config and the input
// flags (`--input-data` zero, random or perf_analyzer's JSON files, `--shape`, `-b`, `--string-*`). An
// unknown model is explained, bad input data is a usage error, and a mismatch with the input's
// validation data is described once, all before the first request of load goes out.
import { readFile } from "node:fs/promises";
import type { InferenceClient } from "@tbench/client";
import {
  buildRequestData,
  type InputDataFile,
  type InputMetadata,
  type RequestData,
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
): Promise<RequestData[]> {
  try {
    return buildRequestData({
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

/**
 * Reads the model's metadata and config and builds the run's requests for them; when the requests carry
 * validation data, sends each once and `warn`s about the first mismatch.
 */
export async function buildModelRequests(
  client: InferenceClient,
  config: BenchConfig,
  signal: AbortSignal,
  warn: (text: string) => void,
): Promise<RequestData[]> {
  const metadata = await client
    .modelMetadata(config.model, config.modelVersion)
    .catch(async (error: unknown) => {
      throw await explainModelError(client, config.model, config.modelVersion, error, signal);
    });
  const modelConfig = (await client.modelConfig(config.model, config.modelVersion)) as {
    max_batch_size?: number;
  };
  const maxBatchSize = Number(modelConfig.max_batch_size ?? 0);
  const requests = await buildRequests(config, metadata.inputs as readonly InputMetadata[], maxBatchSize);
  if (requests.some((request) => request.expected !== undefined)) {
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
  return requests;
}
