/**
 * One error hierarchy for every transport. Each class has a stable string `code` that callers can switch
 * on; HTTP statuses and (later) gRPC status codes map into the same classes (see error-mapping.ts), so
 * callers never branch on the transport. `cause` is always kept; `status` (HTTP) and `requestId` are set
 * where known; `serverMessage` is the server's own text, unchanged.
 */

/** Every error code this package raises. Each one is documented in the package README (a test checks). */
export const ERROR_CODES = [
  "NOT_FOUND",
  "UNAVAILABLE",
  "INVALID_ARGUMENT",
  "UNSUPPORTED",
  "INTERNAL",
  "DEADLINE_EXCEEDED",
  "ABORTED",
  "CONNECTION",
  "CLIENT_CLOSED",
  "MALFORMED_RESPONSE",
  "UNAUTHENTICATED",
  "PERMISSION_DENIED",
  "UNKNOWN",
] as const;

/** A stable error code: what kind of failure, independent of transport. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Extra facts an error may carry. */
export interface InferenceErrorOptions {
  /** The underlying error (network error, abort reason, parse error, ...). */
  cause?: unknown;
  /** HTTP status of the server's answer, when there was one. */
  status?: number;
  /** gRPC status code of the server's answer, when there was one. */
  grpcStatus?: number;
  /** The request id: the infer request's `id`, or the server's `x-request-id` header. */
  requestId?: string;
  /** The server's own error message, unchanged. */
  serverMessage?: string;
}

/** Base class of every error the client raises. Switch on `code`, or use `instanceof` on a subclass. */
export class InferenceError extends Error {
  override name = "InferenceError";
  /** Stable code of this failure kind (see {@link ERROR_CODES}). */
  readonly code: ErrorCode;
  /** HTTP status of the server's answer, when the error came from one. */
  readonly status: number | undefined;
  /**
   * gRPC status code of the server's answer, when the error came from one (a stream's error answer has
   * none: Triton sends only its message).
   */
  readonly grpcStatus: number | undefined;
  /** The request id, where known. */
  readonly requestId: string | undefined;
  /** The server's own message, unchanged, when the error came from the server. */
  readonly serverMessage: string | undefined;

  /** @param code stable code; @param message human-readable text; @param options extra facts. */
  constructor(code: ErrorCode, message: string, options: InferenceErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.grpcStatus = options.grpcStatus;
    this.requestId = options.requestId;
    this.serverMessage = options.serverMessage;
  }
}

/** The model (or model version, or other named resource) does not exist or is not loaded. Code `NOT_FOUND`. */
export class ModelNotFoundError extends InferenceError {
  override name = "ModelNotFoundError";
  /** @param message what was not found; @param options extra facts. */
  constructor(message: string, options?: InferenceErrorOptions) {
    super("NOT_FOUND", message, options);
  }
}

/**
 * The server cannot take the request now: not ready, queue full, overloaded (HTTP 503/429/502).
 * Code `UNAVAILABLE`. Usually worth retrying; `retryAfterMs` is the server's `retry-after`, if it sent one.
 */
export class UnavailableError extends InferenceError {
  override name = "UnavailableError";
  /** How long the server asked the client to wait before retrying, in milliseconds. */
  readonly retryAfterMs: number | undefined;
  /** @param message what is unavailable; @param options extra facts, plus the server's retry-after. */
  constructor(message: string, options: InferenceErrorOptions & { retryAfterMs?: number } = {}) {
    super("UNAVAILABLE", message, options);
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** The request (or a client option) is invalid: bad shape, wrong datatype, bad option. Code `INVALID_ARGUMENT`. */
export class InvalidArgumentError extends InferenceError {
  override name = "InvalidArgumentError";
  /** @param message what is invalid, what was given and what is allowed; @param options extra facts. */
  constructor(message: string, options?: InferenceErrorOptions) {
    super("INVALID_ARGUMENT", message, options);
  }
}

/** The server does not implement this call or feature (HTTP 501). Code `UNSUPPORTED`. */
export class UnsupportedError extends InferenceError {
  override name = "UnsupportedError";
  /** @param message what is unsupported; @param options extra facts. */
  constructor(message: string, options?: InferenceErrorOptions) {
    super("UNSUPPORTED", message, options);
  }
}

/** The server failed internally (HTTP 500). Code `INTERNAL`. */
export class InternalServerError extends InferenceError {
  override name = "InternalServerError";
  /** @param message the server's message; @param options extra facts. */
  constructor(message: string, options?: InferenceErrorOptions) {
    super("INTERNAL", message, options);
  }
}

/** The call's deadline (`timeoutMs`) passed, or the server's queue timeout expired. Code `DEADLINE_EXCEEDED`. */
export class DeadlineExceededError extends InferenceError {
  override name = "DeadlineExceededError";
  /** @param message which deadline passed; @param options extra facts. */
  constructor(message: string, options?: InferenceErrorOptions) {
    super("DEADLINE_EXCEEDED", message, options);
  }
}

/** The caller aborted the call through its `signal`; `cause` is `signal.reason`. Code `ABORTED`. */
export class AbortedError extends InferenceError {
  override name = "AbortedError";
  /** @param message what was aborted; @param options extra facts (`cause` = the signal's reason). */
  constructor(message: string, options?: InferenceErrorOptions) {
    super("ABORTED", message, options);
  }
}

/**
 * The connection failed: refused, reset, DNS, TLS, connect timeout. Code `CONNECTION`. `requestSent` tells
 * whether the request may have reached the server (false: it certainly did not, so a retry is safe).
 */
export class ConnectionError extends InferenceError {
  override name = "ConnectionError";
  /** False when the failure happened before the request was handed to a connection. */
  readonly requestSent: boolean;
  /** @param message what failed; @param options extra facts, plus whether the request was sent. */
  constructor(message: string, options: InferenceErrorOptions & { requestSent?: boolean } = {}) {
    super("CONNECTION", message, options);
    this.requestSent = options.requestSent ?? true;
  }
}

/** The client was closed or destroyed before or during the call. Code `CLIENT_CLOSED`. */
export class ClientClosedError extends InferenceError {
  override name = "ClientClosedError";
  /** @param message what happened; @param options extra facts. */
  constructor(message = "the client is closed", options?: InferenceErrorOptions) {
    super("CLIENT_CLOSED", message, options);
  }
}

/** The server answered, but the answer does not parse into the typed result. Code `MALFORMED_RESPONSE`. */
export class MalformedResponseError extends InferenceError {
  override name = "MalformedResponseError";
  /** @param message what is wrong with the answer; @param options extra facts. */
  constructor(message: string, options?: InferenceErrorOptions) {
    super("MALFORMED_RESPONSE", message, options);
  }
}

/** The server rejected the credentials (HTTP 401). Code `UNAUTHENTICATED`. */
export class UnauthenticatedError extends InferenceError {
  override name = "UnauthenticatedError";
  /** @param message the server's message; @param options extra facts. */
  constructor(message: string, options?: InferenceErrorOptions) {
    super("UNAUTHENTICATED", message, options);
  }
}

/** The credentials are valid but not allowed to do this (HTTP 403). Code `PERMISSION_DENIED`. */
export class PermissionDeniedError extends InferenceError {
  override name = "PermissionDeniedError";
  /** @param message the server's message; @param options extra facts. */
  constructor(message: string, options?: InferenceErrorOptions) {
    super("PERMISSION_DENIED", message, options);
  }
}

/** An error status the client has no better class for. Code `UNKNOWN`. */
export class UnknownError extends InferenceError {
  override name = "UnknownError";
  /** @param message the server's message; @param options extra facts. */
  constructor(message: string, options?: InferenceErrorOptions) {
    super("UNKNOWN", message, options);
  }
}
