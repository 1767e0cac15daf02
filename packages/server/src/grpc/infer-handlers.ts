/**
 * ModelInfer: decode, run through the core (aborted when the client cancels), answer the encoded response
 * or the error's status. The stream (stream-infer-handler.ts) runs each of its requests through runInfer.
 */
import type { inference } from "@tbench/proto";
import { ServerError } from "../core/server-error.js";
import type { InferenceCore } from "../core/types.js";
import { decodeGrpcInferRequest } from "./infer-request-decoder.js";
import { encodeGrpcInferResponse } from "./infer-response-encoder.js";

type ModelInferRequest = inference.ModelInferRequest;
type ModelInferResponse = inference.ModelInferResponse.$Properties;

/** Triton's words for an infer request that reaches the server after shutdown began. */
export const SHUTTING_DOWN = "GRPC server is shutting down and has stopped accepting new requests.";

/** What the infer handlers need from the front end. */
export interface InferContext {
  readonly core: InferenceCore;
  readonly maxBytesTensorElements: number;
  /** False once close() began: requests arriving on open streams are refused, as Triton refuses them. */
  readonly accepting: () => boolean;
}

/** Runs one request; resolves to the response's properties, rejects with a ServerError (or other error). */
export async function runInfer(
  context: InferContext,
  request: ModelInferRequest,
  signal: AbortSignal,
): Promise<ModelInferResponse> {
  if (!context.accepting()) throw new ServerError("UNAVAILABLE", SHUTTING_DOWN);
  const decoded = decodeGrpcInferRequest(request, {
    maxBytesTensorElements: context.maxBytesTensorElements,
    signal,
  });
  return encodeGrpcInferResponse(await context.core.infer(decoded));
}
