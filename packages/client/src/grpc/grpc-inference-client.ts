/**
 * The public face of the gRPC transport: the InferenceClient every transport implements, plus streaming
 * over Triton's ModelStreamInfer (one bidirectional call carrying many requests, answers matched by id).
 */
import type { InferenceError } from "../errors.js";
import type { InferResult } from "../infer-result.js";
import type { InferenceClient } from "../inference-client.js";
import type { InferRequest } from "../tensor-types.js";

/** The same InferenceClient as createHttpClient returns, plus streaming. */
export interface GrpcInferenceClient extends InferenceClient {
  /** Opens one ModelStreamInfer call for `model`. */
  stream(model: string, options?: StreamOptions): InferStream;
}

/** Options of one stream. */
export interface StreamOptions {
  /** Aborting cancels the stream; pending requests reject (or are yielded) with AbortedError. */
  signal?: AbortSignal;
  /** Deadline of the whole stream, in ms (default: the client's `timeoutMs`). */
  timeoutMs?: number;
  /** Metadata of the stream call; it wins over the client's headers. */
  headers?: Record<string, string>;
}

/** One answer read from a stream: its request's id, and the result or the error. */
export type StreamResult =
  | { readonly id: string; readonly ok: true; readonly result: InferResult }
  | { readonly id: string; readonly ok: false; readonly error: InferenceError };

/** An open ModelStreamInfer call. */
export interface InferStream extends AsyncIterable<StreamResult>, AsyncDisposable {
  /**
   * Sends a request; returns its id (`request.id`, or a generated unique one). Its answer is yielded by the
   * async iterator, matched by id; an error answer is yielded as `{ ok: false }` (never dropped). Throws
   * InvalidArgumentError for a bad request or an id already waiting for its answer.
   */
  write(request: InferRequest): string;
  /**
   * Sends a request and resolves with its own answer (rejects with its error); that answer is NOT yielded
   * to the iterator. One promise per request, like a unary call.
   */
  infer(request: InferRequest): Promise<InferResult>;
  /**
   * Encodes a request once; each send() writes it with a fresh id (only the id is encoded again) and
   * resolves with its own answer, like infer().
   */
  prepare(request: InferRequest): { readonly byteLength: number; send(): Promise<InferResult> };
  /** Half-closes: no more requests; the iterator ends once every request written is answered. */
  end(): void;
  /** Cancels now: pending requests reject / are yielded with AbortedError (`cause` = `reason`). */
  cancel(reason?: unknown): void;
}
