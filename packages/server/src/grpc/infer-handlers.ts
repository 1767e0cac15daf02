/**
 * ModelInfer: decode, run through the core (aborted when the client cancels), answer the encoded response
 * or the error's status. The stream (stream-infer-handler.ts) runs each of its requests through runInfer.
 */
import { GRPC_STATUS, inference } from "@tbench/proto";
import type { CancelSignal } from "../core/cancel-signal.js";
import { DecoupledModelError, ServerError } from "../core/server-error.js";
import type { InferenceCore, InferenceRequest } from "../core/types.js";
import { GrpcStatusError } from "./grpc-status.js";
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
  /** --grpc-max-send-message-size in bytes; -1: none. */
  readonly maxSendMessageBytes: number;
  /** False once close() began: requests arriving on open streams are refused, as Triton refuses them. */
  readonly accepting: () => boolean;
}

/** Runs one request; resolves to the response's properties, rejects with a ServerError (or other error). */
export async function runInfer(
  context: InferContext,
  request: ModelInferRequest,
  signal: CancelSignal,
): Promise<ModelInferResponse> {
  const decoded = decodeInfer(context, request, signal);
  try {
    return encodeGrpcInferResponse(await context.core.infer(decoded));
  } catch (error) {
    if (error instanceof DecoupledModelError) throw new ServerError("UNSUPPORTED", DECOUPLED_REFUSED);
    throw error;
  }
}

/** Triton's words for a ModelInfer (unary) to a decoupled model: its responses need the stream. */
export const DECOUPLED_REFUSED = "ModelInfer RPC doesn't support models with decoupled transaction policy";

/** The request decoded for the core; throws UNAVAILABLE once shutdown began, or the decoder's errors. */
export function decodeInfer(
  context: InferContext,
  request: ModelInferRequest,
  signal: CancelSignal,
): InferenceRequest {
  if (!context.accepting()) throw new ServerError("UNAVAILABLE", SHUTTING_DOWN);
  return decodeGrpcInferRequest(request, { maxBytesTensorElements: context.maxBytesTensorElements, signal });
}

/**
 * `response` encoded as `type`, or RESOURCE_EXHAUSTED naming its model when it is over the send bound
 * (gRPC core's words, then which model and which flag): the front end sends the bytes as they are, so
 * the response is serialized once.
 */
export function encodeWithinSendBound<T>(
  context: InferContext,
  type: { encode(message: T): { finish(): Uint8Array } },
  message: T,
  response: ModelInferResponse,
): Buffer {
  const bytes = type.encode(message).finish();
  const limit = context.maxSendMessageBytes;
  if (limit >= 0 && bytes.byteLength > limit) {
    throw new GrpcStatusError(
      GRPC_STATUS.RESOURCE_EXHAUSTED,
      `Sent message larger than max (${bytes.byteLength} vs. ${limit}): the response of model ` +
        `'${response.model_name}' version ${response.model_version}; --grpc-max-send-message-size raises the limit`,
    );
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A unary ModelInfer: the encoded response (within the send bound), or the error. */
export async function runUnaryInfer(
  context: InferContext,
  request: ModelInferRequest,
  signal: CancelSignal,
): Promise<Buffer> {
  const response = await runInfer(context, request, signal);
  return encodeWithinSendBound(context, inference.ModelInferResponse, response, response);
}
