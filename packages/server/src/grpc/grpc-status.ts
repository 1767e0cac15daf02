/**
 * How errors leave the gRPC front end: a gRPC status with the code Triton's GrpcStatusUtil::CodeToStatus
 * gives the core's error code (@tbench/proto's status table) and the message in Triton's words, with the
 * client's text in it cut short and the whole bounded (client-text.ts). Also the version string rule every
 * model RPC shares (Triton's GetModelVersionFromString).
 */
import { GRPC_STATUS } from "@tbench/proto";
import { GRPC_STATUS_BY_ERROR, ServerError } from "../core/server-error.js";
import { boundedMessage } from "./client-text.js";

/** A gRPC status to answer: code and details, as @grpc/grpc-js takes them. */
export interface GrpcStatus {
  readonly code: number;
  readonly details: string;
}

/** An error the gRPC front end answers with a gRPC code the core has no name for (RESOURCE_EXHAUSTED). */
export class GrpcStatusError extends Error {
  override readonly name = "GrpcStatusError";
  readonly code: number;

  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

/** The status for any error thrown while serving `request` (its long strings are not echoed whole). */
export function grpcStatusOf(error: unknown, request?: unknown): GrpcStatus {
  const status = (code: number, message: string): GrpcStatus => ({
    code,
    details: boundedMessage(message, request),
  });
  if (error instanceof ServerError) return status(GRPC_STATUS_BY_ERROR[error.status], error.message);
  if (error instanceof GrpcStatusError) return status(error.code, error.message);
  const message = error instanceof Error ? error.message : String(error);
  return status(GRPC_STATUS.INTERNAL, `internal error: ${message}`);
}

/** An INVALID_ARG core error (Triton's code for every malformed request). */
export function invalidArg(message: string): ServerError {
  return new ServerError("INVALID_ARG", message);
}

/** What std::stol reads: leading whitespace, a sign, decimal digits (anything after them is ignored). */
const STOL = /^[ \t\n\v\f\r]*([+-]?[0-9]+)/;

/**
 * The version a request names, as Triton reads it: empty means the model's current version (undefined
 * here); otherwise a non-negative integer, with Triton's messages for anything else.
 */
export function versionFromString(version: string | undefined | null): string | undefined {
  if (version === undefined || version === null || version === "") return undefined;
  const match = STOL.exec(version);
  const value = match === null ? Number.NaN : Number(match[1]);
  if (!Number.isSafeInteger(value)) {
    throw invalidArg(
      `failed to get model version from specified version string '${version}' (details: stol), ` +
        "version should be an integral value > 0",
    );
  }
  if (value < 0) {
    throw invalidArg(
      `invalid model version specified '${version}' , version should be an integral value > 0`,
    );
  }
  return String(value);
}
