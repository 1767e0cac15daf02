/**
 * How errors leave the HTTP front end: a `{"error": "..."}` body with the status Triton's HTTP server
 * would send. Since Triton 24.01 every endpoint answers a core error through HttpCodeFromError
 * (`HTTP_STATUS_BY_ERROR`), so the status follows the core's code alone: an unknown model name is the
 * core's INVALID_ARG (400), a known model without the asked version NOT_FOUND (404), a version not
 * ready UNAVAILABLE (503). Health and model-ready keep their own 200/400 answers (see api-handlers.ts).
 */
import { HTTP_STATUS_BY_ERROR, ServerError } from "../core/server-error.js";

/** An error raised by the HTTP layer itself (bad wire input), with the HTTP status to answer. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  readonly statusCode: number;

  constructor(statusCode: number, message: string, options?: { cause?: unknown }) {
    // A wire error is the client's, answered and forgotten: a stack trace per error would make a flood of
    // bad requests cost several times as much CPU as good ones (measured: the constructor was 13% of the
    // main thread's time under a stream of 404s).
    const depth = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message, options);
    Error.stackTraceLimit = depth;
    this.statusCode = statusCode;
  }
}

/** An INVALID_ARG-like wire error (400). */
export function badRequest(message: string): HttpError {
  return new HttpError(400, message);
}

/** The status and message to send for any error thrown while serving a request. */
export function describeError(error: unknown): { status: number; message: string } {
  if (error instanceof HttpError) return { status: error.statusCode, message: error.message };
  if (error instanceof ServerError)
    return { status: HTTP_STATUS_BY_ERROR[error.status], message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return { status: 500, message: `internal error: ${message}` };
}

/** The JSON error body Triton sends. */
export function errorBody(message: string): string {
  return JSON.stringify({ error: message });
}
