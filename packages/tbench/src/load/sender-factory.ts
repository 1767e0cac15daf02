import { createHealthSender, createInferSender } from "./infer-sender.js";
import type { RequestData } from "./input-data.js";
import type { RequestSender } from "./request-sender.js";
import { createStreamSender } from "./stream-sender.js";
import { createGrpcTransportClient, createTransportClient, type TransportSpec } from "./transport.js";

/** Everything needed to build a sender, in a form that crosses to a worker thread by structured clone. */
export interface SenderSpec {
  /** `infer` the model, or `health`: `GET /v2/health/ready` (the trivial endpoint of the benchmark). */
  target: "infer" | "health";
  transport: TransportSpec;
  /** Keep-alive connections of this sender's HTTP client pool. */
  connections: number;
  /** `--streaming` (gRPC): infer over bidirectional streams, at most `streams` of them. */
  streaming: boolean;
  /** Streams of this sender: its share of the contexts (concurrency), or of `--max-threads` (rate). */
  streams: number;
  model: string;
  modelVersion: string | undefined;
  requests: RequestData[];
  binaryInputs: boolean;
  binaryOutputs: boolean;
}

/**
 * Builds a sender over a new `@tbench/client` client of the spec's transport (no retries: a failed request
 * is counted, not hidden). This module is also what load workers import to build theirs.
 */
export async function createSender(spec: SenderSpec): Promise<RequestSender> {
  if (spec.streaming && spec.target === "infer") {
    if (spec.transport.protocol !== "grpc") throw new Error("streaming needs the gRPC transport");
    return createStreamSender({
      client: createGrpcTransportClient(spec.transport, { maxRetries: 0 }),
      model: spec.model,
      modelVersion: spec.modelVersion,
      requests: spec.requests,
      maxStreams: spec.streams,
      ownsClient: true,
    });
  }
  const client = createTransportClient(spec.transport, { connections: spec.connections, maxRetries: 0 });
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
