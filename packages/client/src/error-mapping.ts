/**
 * Maps a server's error answer (HTTP status or gRPC status code, plus its message) to the error classes.
 * Shared by both transports: the status picks a kind, then the message refines it, because Triton's status
 * codes are not always the right kind. With model namespacing off (its default) Triton answers an unknown
 * model name or version NOT_FOUND (404, "Request for unknown model: 'x' is not found", ModelLifeCycle::
 * GetModel), with namespacing on an unknown name is INVALID_ARG (400, the same words), and before 24.01
 * every non-infer endpoint answered 400; its queue-policy timeout is a 503 "Request timeout expired".
 */
import { type ClientErrorKind, clientKindFromGrpcStatus, clientKindFromHttpStatus } from "@tbench/proto";
import {
  AbortedError,
  DeadlineExceededError,
  type ErrorCode,
  type InferenceError,
  type InferenceErrorOptions,
  InternalServerError,
  InvalidArgumentError,
  ModelNotFoundError,
  PermissionDeniedError,
  UnauthenticatedError,
  UnavailableError,
  UnknownError,
  UnsupportedError,
} from "./errors.js";

/** Facts about the failed call that the error keeps. */
export interface ServerErrorDetails {
  /** HTTP status, when the transport is HTTP. */
  status?: number;
  /** gRPC status code, when the transport is gRPC and the server answered with a status. */
  grpcStatus?: number;
  /** The request id, where known. */
  requestId?: string;
  /** The server's `retry-after`, in milliseconds. */
  retryAfterMs?: number;
}

/** The kinds of failure a server answer can report (a subset of the error codes; @tbench/proto's table). */
type ServerKind = Extract<ErrorCode, ClientErrorKind>;
// Compile-time check that the table's kinds are all error codes of this package.
const KINDS_ARE_CODES: ClientErrorKind extends ErrorCode ? true : never = true;
void KINDS_ARE_CODES;

/** The kind an HTTP error status stands for, before the message is looked at (@tbench/proto's table). */
export function kindFromHttpStatus(status: number): ServerKind {
  return clientKindFromHttpStatus(status);
}

/** The kind a gRPC status code stands for, before the message is looked at (@tbench/proto's table). */
export function kindFromGrpcStatus(code: number): ServerKind {
  return clientKindFromGrpcStatus(code);
}

const UNKNOWN_MODEL =
  /request for unknown model|unknown model|model '[^']*'(?: version [^ ]+)? is not found/i;
const NOT_READY = /is not ready|not at ready state|is not loaded|is unavailable/i;
const QUEUE_FULL = /exceeds maximum queue size|queue is full|too many requests/i;
const TIMEOUT = /request timeout expired|deadline exceeded|timed out/i;
/** Triton's answer (503 / UNAVAILABLE) to trace and logging calls when the feature is built out. */
const FEATURE_OFF = /\bdoes not support\b/i;

/** Refines a status-derived kind by the server's message (Triton's statuses are coarse; see the top). */
export function refineKind(kind: ServerKind, message: string): ServerKind {
  if (kind === "UNAUTHENTICATED" || kind === "PERMISSION_DENIED") return kind;
  if (UNKNOWN_MODEL.test(message)) return "NOT_FOUND";
  if (kind === "INTERNAL" || kind === "UNSUPPORTED") return kind;
  if (kind === "UNAVAILABLE" && FEATURE_OFF.test(message)) return "UNSUPPORTED";
  if (TIMEOUT.test(message)) return "DEADLINE_EXCEEDED";
  if (QUEUE_FULL.test(message) || (kind !== "NOT_FOUND" && NOT_READY.test(message))) return "UNAVAILABLE";
  return kind;
}

/** Builds the error class for a kind. */
export function errorForKind(kind: ServerKind, message: string, details: ServerErrorDetails): InferenceError {
  const options: InferenceErrorOptions = { serverMessage: message };
  if (details.status !== undefined) options.status = details.status;
  if (details.grpcStatus !== undefined) options.grpcStatus = details.grpcStatus;
  if (details.requestId !== undefined) options.requestId = details.requestId;
  switch (kind) {
    case "NOT_FOUND":
      return new ModelNotFoundError(message, options);
    case "UNAVAILABLE":
      return new UnavailableError(
        message,
        details.retryAfterMs === undefined ? options : { ...options, retryAfterMs: details.retryAfterMs },
      );
    case "INVALID_ARGUMENT":
      return new InvalidArgumentError(message, options);
    case "UNSUPPORTED":
      return new UnsupportedError(message, options);
    case "INTERNAL":
      return new InternalServerError(message, options);
    case "DEADLINE_EXCEEDED":
      return new DeadlineExceededError(message, options);
    case "ABORTED":
      return new AbortedError(message, options);
    case "UNAUTHENTICATED":
      return new UnauthenticatedError(message, options);
    case "PERMISSION_DENIED":
      return new PermissionDeniedError(message, options);
    default:
      return new UnknownError(message, options);
  }
}

/** The error for an HTTP error answer: status picks the kind, the message refines it. */
export function errorFromHttpStatus(
  status: number,
  message: string,
  details: Omit<ServerErrorDetails, "status" | "grpcStatus"> = {},
): InferenceError {
  return errorForKind(refineKind(kindFromHttpStatus(status), message), message, { ...details, status });
}

/** The error for a gRPC error status: code picks the kind, the message refines it. */
export function errorFromGrpcStatus(
  code: number,
  message: string,
  details: Omit<ServerErrorDetails, "status" | "grpcStatus"> = {},
): InferenceError {
  return errorForKind(refineKind(kindFromGrpcStatus(code), message), message, {
    ...details,
    grpcStatus: code,
  });
}
