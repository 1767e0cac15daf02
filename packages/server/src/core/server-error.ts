/**
 * The one error type the server's core raises. Its `status` is Triton's error code (TRITONSERVER_Error
 * codes); the HTTP and gRPC front ends map it to 400/404/503/501/500 and INVALID_ARGUMENT/NOT_FOUND/...,
 * and send `message` unchanged, so messages must already read like Triton's.
 */
export type ServerErrorStatus =
  | "INVALID_ARG"
  | "NOT_FOUND"
  | "UNAVAILABLE"
  | "UNSUPPORTED"
  | "INTERNAL"
  | "ALREADY_EXISTS"
  | "CANCELLED";

export class ServerError extends Error {
  override readonly name = "ServerError";
  readonly status: ServerErrorStatus;

  constructor(status: ServerErrorStatus, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
  }
}

/**
 * HTTP status for each core status, as Triton's HttpCodeFromError maps it on every endpoint (Triton 24.01
 * and later): the codes with no HTTP counterpart (INVALID_ARG, ALREADY_EXISTS, CANCELLED, and UNKNOWN,
 * which the core never raises) answer 400.
 */
export const HTTP_STATUS_BY_ERROR: Readonly<Record<ServerErrorStatus, number>> = {
  INVALID_ARG: 400,
  NOT_FOUND: 404,
  UNAVAILABLE: 503,
  UNSUPPORTED: 501,
  INTERNAL: 500,
  ALREADY_EXISTS: 400,
  CANCELLED: 400,
};
