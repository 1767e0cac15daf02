/**
 * Triton's Status::AsString: "<code text>: <message>", the form of load failure reasons in the repository
 * index and the log ("Invalid argument: unexpected directory name ...").
 */
import { ServerError, type ServerErrorStatus } from "./server-error.js";

const CODE_TEXT: Readonly<Record<ServerErrorStatus, string>> = {
  INVALID_ARG: "Invalid argument",
  NOT_FOUND: "Not found",
  UNAVAILABLE: "Unavailable",
  UNSUPPORTED: "Unsupported",
  INTERNAL: "Internal",
  ALREADY_EXISTS: "Already exists",
  CANCELLED: "Cancelled",
};

/** The reason text of an error, as Triton prints a Status. */
export function statusText(error: unknown): string {
  if (error instanceof ServerError) return `${CODE_TEXT[error.status]}: ${error.message}`;
  return `Internal: ${error instanceof Error ? error.message : String(error)}`;
}
