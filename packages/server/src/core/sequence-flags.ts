/**
 * A request's sequence fields as both front ends read them (Triton's sequence extension): the correlation
 * id is a uint64 or a string of at most 128 characters, START and END are flags. Triton refuses a longer
 * string id when it is set on the request (TRITONSERVER_InferenceRequestSetCorrelationIdString), before
 * any model looks at it, so this check is the front ends', with Triton's code and words.
 */
import { ServerError } from "./server-error.js";
import type { SequenceFlags } from "./types.js";

/** Triton's limit on a string correlation id. */
const MAX_STRING_ID_LENGTH = 128;

/** The request's SequenceFlags, or undefined when it carries none of the three fields. */
export function sequenceFlags(
  id: bigint | string | undefined,
  start: boolean | undefined,
  end: boolean | undefined,
): SequenceFlags | undefined {
  if (id === undefined && start === undefined && end === undefined) return undefined;
  if (typeof id === "string" && id.length > MAX_STRING_ID_LENGTH) {
    throw new ServerError(
      "UNSUPPORTED",
      `string correlation ID cannot be longer than ${MAX_STRING_ID_LENGTH} characters`,
    );
  }
  return { id: id ?? 0n, start: start === true, end: end === true };
}
