/**
 * gRPC call failures as the client's error classes. A status the server sent goes through
 * errorFromGrpcStatus (@tbench/proto's table, refined by Triton's message); statuses grpc-js makes up on
 * this side are told apart by their details and become what they are: a connection that never came up or
 * dropped (ConnectionError, `requestSent` false when no connection was ever established), our own deadline
 * (DeadlineExceededError), an answer that does not parse (MalformedResponseError).
 */
import { GRPC_STATUS } from "@tbench/proto";
import { errorFromGrpcStatus } from "../error-mapping.js";
import {
  ConnectionError,
  DeadlineExceededError,
  type InferenceError,
  MalformedResponseError,
} from "../errors.js";

/** What grpc-js reports a failed call with (grpc-js's ServiceError / StatusObject). */
export interface GrpcFailure {
  readonly code: number;
  readonly details: string;
}

/** What the error message says about the call. */
export interface FailureContext {
  /** e.g. "ModelInfer simple". */
  readonly what: string;
  /** The call's deadline, when it had one. */
  readonly timeoutMs: number | undefined;
  readonly requestId?: string | undefined;
}

// grpc-js's own words (subchannel / load balancer / transport): the call never reached a server.
const NOT_CONNECTED =
  /No connection established|failed to connect|Name resolution failed|DNS resolution failed|No address added|ECONNREFUSED|connect EHOSTUNREACH|ENOTFOUND|ENETUNREACH/i;
// ...or the connection went away under the call.
const DROPPED =
  /Connection dropped|ECONNRESET|Stream refused by server|RST_STREAM|GOAWAY|socket hang up|EPIPE|Call ended without gRPC status|Protocol error/i;

/** The error for a failed call. */
export function errorFromGrpcFailure(failure: GrpcFailure, context: FailureContext): InferenceError {
  const { code, details } = failure;
  const cause = failure;
  if (
    code === GRPC_STATUS.DEADLINE_EXCEEDED &&
    context.timeoutMs !== undefined &&
    /^Deadline exceeded/.test(details)
  ) {
    return new DeadlineExceededError(
      `${context.what}: deadline of ${context.timeoutMs} ms exceeded`,
      withId({ cause }, context),
    );
  }
  if (code === GRPC_STATUS.UNAVAILABLE || code === GRPC_STATUS.INTERNAL || code === GRPC_STATUS.UNKNOWN) {
    if (NOT_CONNECTED.test(details)) {
      return new ConnectionError(
        `${context.what}: ${details}`,
        withId({ cause, requestSent: false }, context),
      );
    }
    if (DROPPED.test(details)) {
      return new ConnectionError(
        `${context.what}: ${details}`,
        withId({ cause, requestSent: true }, context),
      );
    }
  }
  if (code === GRPC_STATUS.INTERNAL && /^Response message parsing error/.test(details)) {
    return new MalformedResponseError(`${context.what}: ${details}`, withId({ cause }, context));
  }
  const details2 = context.requestId === undefined ? {} : { requestId: context.requestId };
  return errorFromGrpcStatus(code, details, details2);
}

function withId<T extends object>(options: T, context: FailureContext): T & { requestId?: string } {
  return context.requestId === undefined ? options : { ...options, requestId: context.requestId };
}
