/**
 * How errors leave the HTTP front end: a `{"error": "..."}` body with the status Triton's HTTP server
 * would send. Triton answers every failure of a non-infer endpoint with 400 (its RETURN_AND_RESPOND_IF_ERR),
 * and maps core errors of the infer endpoint through HttpCodeFromError, where unknown models and versions are
 * caught by a transaction-policy lookup before the request reaches the core and so also answer 400. The
 * repository load and unload endpoints answer with HttpCodeFromError's status (Triton 24.01 and later).
 */
import { ServerError, type ServerErrorStatus } from "../core/server-error.js";

/** An error raised by the HTTP layer itself (bad wire input), with the HTTP status to answer. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  readonly statusCode: number;

  constructor(statusCode: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.statusCode = statusCode;
  }
}

/** An INVALID_ARG-like wire error (400). */
export function badRequest(message: string): HttpError {
  return new HttpError(400, message);
}

/** Status of the infer endpoint for a core error, as Triton answers it. */
const INFER_STATUS: Readonly<Record<ServerErrorStatus, number>> = {
  INVALID_ARG: 400,
  // Triton resolves the model before inference (CheckTransactionPolicy) and answers a failed lookup with 400.
  NOT_FOUND: 400,
  UNAVAILABLE: 503,
  UNSUPPORTED: 501,
  INTERNAL: 500,
  ALREADY_EXISTS: 400,
  CANCELLED: 400,
};

/** Triton's HttpCodeFromError: the status of a core error where no lookup answers first. */
const TRITON_STATUS: Readonly<Record<ServerErrorStatus, number>> = { ...INFER_STATUS, NOT_FOUND: 404 };

/** `error` as the repository endpoints answer it: a core error keeps its message with Triton's status. */
export function repositoryError(error: unknown): unknown {
  if (!(error instanceof ServerError)) return error;
  return new HttpError(TRITON_STATUS[error.status], error.message, { cause: error });
}

/** The status and message to send for any error thrown while serving `endpoint`. */
export function describeError(
  error: unknown,
  endpoint: "infer" | "other",
): { status: number; message: string } {
  if (error instanceof HttpError) return { status: error.statusCode, message: error.message };
  if (error instanceof ServerError) {
    return { status: endpoint === "infer" ? INFER_STATUS[error.status] : 400, message: error.message };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { status: 500, message: `internal error: ${message}` };
}

/** The JSON error body Triton sends. */
export function errorBody(message: string): string {
  return JSON.stringify({ error: message });
}
