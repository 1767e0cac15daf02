import type { InferenceClient } from "@tbench/client";
import { createInferSender, ValidationMismatchError } from "../load/infer-sender.js";
import type { RequestData } from "../load/input-data.js";

/** The most distinct requests sent once before measuring to find a mismatch. */
const MAX_CHECKED_REQUESTS = 100;

/** Options of {@link findValidationMismatch}. */
export interface ValidationCheckOptions {
  client: InferenceClient;
  model: string;
  modelVersion: string | undefined;
  requests: readonly RequestData[];
  binaryInputs: boolean;
  binaryOutputs: boolean;
  /** `-b`: with N > 1 each request stacks N data entries from its own on. */
  batchSize: number;
  signal: AbortSignal;
}

/**
 * Sends each distinct request that carries `validation_data` once (at most {@link MAX_CHECKED_REQUESTS}),
 * one at a time, through the same sender the load uses, and returns a line describing the first
 * mismatch: which data entry, which output, the first differing element with what was expected and what
 * came back. During the run mismatches are only counted (as `VALIDATION`), so this is where the user
 * learns what differs. Other failures are left to the run to count. Undefined when all match.
 */
export async function findValidationMismatch(options: ValidationCheckOptions): Promise<string | undefined> {
  const sender = createInferSender({
    client: options.client,
    model: options.model,
    modelVersion: options.modelVersion,
    requests: options.requests,
    binaryInputs: options.binaryInputs,
    binaryOutputs: options.binaryOutputs,
    ownsClient: false,
  });
  try {
    let checked = 0;
    for (let slot = 0; slot < options.requests.length && checked < MAX_CHECKED_REQUESTS; slot++) {
      if (options.signal.aborted) return undefined;
      if (options.requests[slot]?.expected === undefined) continue;
      checked += 1;
      try {
        await sender.send(slot);
      } catch (error) {
        if (!(error instanceof ValidationMismatchError)) return undefined;
        const entries =
          options.batchSize > 1
            ? `data[${slot}] (batched with the ${options.batchSize - 1} after it)`
            : `data[${slot}]`;
        return (
          `validation_data: the response to ${entries} does not match: ${error.message} ` +
          "(such responses are counted as VALIDATION errors)"
        );
      }
    }
    return undefined;
  } finally {
    await sender.close();
  }
}
