/**
 * The one error type the server's core raises. Its `status` is Triton's error code (TRITONSERVER_Error
 * codes); the HTTP and gRPC front ends map it to 400/404/503/501/500 and INVALID_ARGUMENT/NOT_FOUND/...,
 * and send `message` unchanged, so messages must already read like Triton's.
 */
import { grpcStatusFromTriton, httpStatusFromTriton, type TritonErrorCode } from "@tbench/proto";

/** The Triton codes the core raises (every one but UNKNOWN). */
export const SERVER_ERROR_STATUSES = [
  "INVALID_ARG",
  "NOT_FOUND",
  "UNAVAILABLE",
  "UNSUPPORTED",
  "INTERNAL",
  "ALREADY_EXISTS",
  "CANCELLED",
] as const satisfies readonly TritonErrorCode[];

export type ServerErrorStatus = (typeof SERVER_ERROR_STATUSES)[number];

export class ServerError extends Error {
  override readonly name = "ServerError";
  readonly status: ServerErrorStatus;

  constructor(status: ServerErrorStatus, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
  }
}

/**
 * A plain infer (one response expected) to a decoupled model: UNSUPPORTED. Each front end answers it in
 * Triton's words for its endpoint ("HTTP end point doesn't support ...", "ModelInfer RPC doesn't support ...").
 */
export class DecoupledModelError extends ServerError {
  constructor(readonly model: string) {
    super("UNSUPPORTED", `model '${model}' has a decoupled transaction policy: use a streaming endpoint`);
  }
}

/**
 * HTTP status for each core status, as Triton's HttpCodeFromError maps it on every endpoint (Triton 24.01
 * and later): the codes with no HTTP counterpart (INVALID_ARG, ALREADY_EXISTS, CANCELLED, and UNKNOWN,
 * which the core never raises) answer 400. Read from @tbench/proto's one status table.
 */
export const HTTP_STATUS_BY_ERROR: Readonly<Record<ServerErrorStatus, number>> =
  statusMap(httpStatusFromTriton);

/** gRPC status for each core status, as Triton's GrpcStatusUtil::CodeToStatus maps it. */
export const GRPC_STATUS_BY_ERROR: Readonly<Record<ServerErrorStatus, number>> =
  statusMap(grpcStatusFromTriton);

function statusMap(map: (code: ServerErrorStatus) => number): Readonly<Record<ServerErrorStatus, number>> {
  return Object.freeze(
    Object.fromEntries(SERVER_ERROR_STATUSES.map((code) => [code, map(code)])) as Record<
      ServerErrorStatus,
      number
    >,
  );
}
