/**
 * One error vocabulary for every part of tbench: Triton's status codes (TRITONSERVER_Error_Code), the HTTP
 * status and gRPC status Triton answers for each, and the kind of error (code and class name) that
 * @tbench/client raises for an HTTP status or a gRPC status. The server's front ends read the first two
 * mappings, the client's transports the last two, so a code means the same thing everywhere.
 *
 * Sources: HTTP from `HttpCodeFromError` (server src/http_server.cc, Triton 24.01 and later: NOT_FOUND 404,
 * UNAVAILABLE 503, INTERNAL 500, UNSUPPORTED 501, every other code 400); gRPC from
 * `GrpcStatusUtil::CodeToStatus` (server src/grpc/grpc_utils.cc); gRPC numbers from grpc/status.h.
 */

/** Triton's error codes, in TRITONSERVER_Error_Code order (UNKNOWN = 0 ... CANCELLED = 7). */
export const TRITON_ERROR_CODES = [
  "UNKNOWN",
  "INTERNAL",
  "NOT_FOUND",
  "INVALID_ARG",
  "UNAVAILABLE",
  "UNSUPPORTED",
  "ALREADY_EXISTS",
  "CANCELLED",
] as const;

/** A Triton error code, spelled as TRITONSERVER_ERROR_<code>. */
export type TritonErrorCode = (typeof TRITON_ERROR_CODES)[number];

/** gRPC status codes by number (grpc/status.h): GRPC_STATUS_NAMES[n] is the name of status n. */
export const GRPC_STATUS_NAMES = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
] as const;

/** A gRPC status name. */
export type GrpcStatusName = (typeof GRPC_STATUS_NAMES)[number];

/** A gRPC status number by name (the inverse of GRPC_STATUS_NAMES). */
export const GRPC_STATUS: Readonly<Record<GrpcStatusName, number>> = Object.freeze(
  Object.fromEntries(GRPC_STATUS_NAMES.map((name, code) => [name, code])) as Record<GrpcStatusName, number>,
);

/**
 * The kinds of failure a server's answer maps to in @tbench/client: its error `code` (the client's other
 * codes, CONNECTION, CLIENT_CLOSED and MALFORMED_RESPONSE, never come from a status).
 */
export type ClientErrorKind =
  | "NOT_FOUND"
  | "UNAVAILABLE"
  | "INVALID_ARGUMENT"
  | "UNSUPPORTED"
  | "INTERNAL"
  | "DEADLINE_EXCEEDED"
  | "ABORTED"
  | "UNAUTHENTICATED"
  | "PERMISSION_DENIED"
  | "UNKNOWN";

/** The @tbench/client class raised for each kind. */
export const CLIENT_ERROR_CLASS: Readonly<Record<ClientErrorKind, string>> = {
  NOT_FOUND: "ModelNotFoundError",
  UNAVAILABLE: "UnavailableError",
  INVALID_ARGUMENT: "InvalidArgumentError",
  UNSUPPORTED: "UnsupportedError",
  INTERNAL: "InternalServerError",
  DEADLINE_EXCEEDED: "DeadlineExceededError",
  ABORTED: "AbortedError",
  UNAUTHENTICATED: "UnauthenticatedError",
  PERMISSION_DENIED: "PermissionDeniedError",
  UNKNOWN: "UnknownError",
};

/** What Triton answers for one of its codes, and what the client makes of each answer. */
export interface TritonStatusRow {
  readonly triton: TritonErrorCode;
  /** HTTP status (HttpCodeFromError). */
  readonly http: number;
  /** gRPC status (GrpcStatusUtil::CodeToStatus). */
  readonly grpc: GrpcStatusName;
  /** The client's kind for the HTTP answer (clientKindFromHttpStatus of `http`). */
  readonly clientFromHttp: ClientErrorKind;
  /** The client's kind for the gRPC answer (clientKindFromGrpcStatus of `grpc`). */
  readonly clientFromGrpc: ClientErrorKind;
}

/** The HTTP status Triton answers for `code` (HttpCodeFromError). */
export function httpStatusFromTriton(code: TritonErrorCode): number {
  return TRITON_STATUS[code].http;
}

/** The gRPC status number Triton answers for `code` (GrpcStatusUtil::CodeToStatus). */
export function grpcStatusFromTriton(code: TritonErrorCode): number {
  return GRPC_STATUS[TRITON_STATUS[code].grpc];
}

/**
 * HTTP statuses the client names a kind for. Beyond Triton's own (400, 404, 500, 501, 503): what proxies
 * and other v2 servers send (401, 403, 408, 409, 413, 422, 429, 499, 502, 504) and tbench-server's 408 for
 * a slow client. Any other 4xx is INVALID_ARGUMENT, anything else UNKNOWN.
 */
export const HTTP_STATUS_CLIENT_KIND: Readonly<Record<number, ClientErrorKind>> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  408: "DEADLINE_EXCEEDED",
  409: "INVALID_ARGUMENT", // Conflict; Triton folds ALREADY_EXISTS into 400
  413: "INVALID_ARGUMENT",
  422: "INVALID_ARGUMENT",
  429: "UNAVAILABLE",
  499: "ABORTED", // client closed request (proxies); Triton answers CANCELLED with 400
  500: "INTERNAL",
  501: "UNSUPPORTED",
  502: "UNAVAILABLE",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** The client's kind for an HTTP error status, before the message is looked at. */
export function clientKindFromHttpStatus(status: number): ClientErrorKind {
  const kind = HTTP_STATUS_CLIENT_KIND[status];
  if (kind !== undefined) return kind;
  return status >= 400 && status < 500 ? "INVALID_ARGUMENT" : "UNKNOWN";
}

/** The client's kind for each gRPC status, by number. */
export const GRPC_STATUS_CLIENT_KIND: Readonly<Record<GrpcStatusName, ClientErrorKind>> = {
  OK: "UNKNOWN", // never an error; mapped defensively
  CANCELLED: "ABORTED",
  UNKNOWN: "UNKNOWN",
  INVALID_ARGUMENT: "INVALID_ARGUMENT",
  DEADLINE_EXCEEDED: "DEADLINE_EXCEEDED",
  NOT_FOUND: "NOT_FOUND",
  ALREADY_EXISTS: "INVALID_ARGUMENT",
  PERMISSION_DENIED: "PERMISSION_DENIED",
  RESOURCE_EXHAUSTED: "UNAVAILABLE",
  FAILED_PRECONDITION: "INVALID_ARGUMENT",
  ABORTED: "ABORTED",
  OUT_OF_RANGE: "INVALID_ARGUMENT",
  UNIMPLEMENTED: "UNSUPPORTED",
  INTERNAL: "INTERNAL",
  UNAVAILABLE: "UNAVAILABLE",
  DATA_LOSS: "INTERNAL",
  UNAUTHENTICATED: "UNAUTHENTICATED",
};

/** The client's kind for a gRPC status number, before the message is looked at. */
export function clientKindFromGrpcStatus(code: number): ClientErrorKind {
  const name = GRPC_STATUS_NAMES[code];
  return name === undefined ? "UNKNOWN" : GRPC_STATUS_CLIENT_KIND[name];
}

/**
 * Triton's code -> HTTP status, gRPC status and the client's kinds. HTTP folds four codes into 400, so an
 * ALREADY_EXISTS or CANCELLED is an InvalidArgumentError over HTTP but keeps its own kind over gRPC
 * (CANCELLED becomes ABORTED; ALREADY_EXISTS, which the client has no class for, INVALID_ARGUMENT).
 * Before the message refines it: client/src/error-mapping.ts turns "unknown model" into NOT_FOUND, etc.
 */
export const TRITON_STATUS: Readonly<Record<TritonErrorCode, TritonStatusRow>> = {
  UNKNOWN: row("UNKNOWN", 400, "UNKNOWN"),
  INTERNAL: row("INTERNAL", 500, "INTERNAL"),
  NOT_FOUND: row("NOT_FOUND", 404, "NOT_FOUND"),
  INVALID_ARG: row("INVALID_ARG", 400, "INVALID_ARGUMENT"),
  UNAVAILABLE: row("UNAVAILABLE", 503, "UNAVAILABLE"),
  UNSUPPORTED: row("UNSUPPORTED", 501, "UNIMPLEMENTED"),
  ALREADY_EXISTS: row("ALREADY_EXISTS", 400, "ALREADY_EXISTS"),
  CANCELLED: row("CANCELLED", 400, "CANCELLED"),
};

function row(triton: TritonErrorCode, http: number, grpc: GrpcStatusName): TritonStatusRow {
  return {
    triton,
    http,
    grpc,
    clientFromHttp: clientKindFromHttpStatus(http),
    clientFromGrpc: clientKindFromGrpcStatus(GRPC_STATUS[grpc]),
  };
}
