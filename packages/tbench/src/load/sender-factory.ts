import { createHttpClient } from "@tbench/client";
import { createHealthSender, createInferSender } from "./infer-sender.js";
import type { RequestData } from "./input-data.js";
import type { RequestSender } from "./request-sender.js";

/** Everything needed to build a sender, in a form that crosses to a worker thread by structured clone. */
export interface SenderSpec {
  /** `infer` the model, or `health`: `GET /v2/health/ready` (the trivial endpoint of the benchmark). */
  target: "infer" | "health";
  url: string;
  headers: Record<string, string>;
  /** Keep-alive connections of this sender's client pool. */
  connections: number;
  model: string;
  modelVersion: string | undefined;
  requests: RequestData[];
  binaryInputs: boolean;
  binaryOutputs: boolean;
}

/**
 * Builds a sender over a new `@tbench/client` HTTP client (no retries: a failed request is counted, not
 * hidden). This module is also what load workers import to build theirs.
 */
export async function createSender(spec: SenderSpec): Promise<RequestSender> {
  const client = createHttpClient({
    url: spec.url,
    connections: spec.connections,
    headers: spec.headers,
    maxRetries: 0,
  });
  if (spec.target === "health") return createHealthSender(client, true);
  return createInferSender({
    client,
    model: spec.model,
    modelVersion: spec.modelVersion,
    requests: spec.requests,
    binaryInputs: spec.binaryInputs,
    binaryOutputs: spec.binaryOutputs,
    ownsClient: true,
  });
}

/** URL of this module, what `--workers` passes to each worker as its sender module. */
export const SENDER_MODULE_URL = import.meta.url;
