/**
 * An HTTP answer as both transports hand it over (Node's raw-response.ts, fetch/fetch-answer.ts): status,
 * the few headers the client reads, and the whole body. Error answers become InferenceError subclasses here,
 * the same way whatever sent the request.
 */
import { errorFromHttpStatus } from "../error-mapping.js";
import type { InferenceError } from "../errors.js";
import { parseRetryAfterMs } from "../retry-policy.js";
import { errorMessageOf } from "./response-schemas.js";

/** A completed answer (any status). */
export interface HttpAnswer {
  readonly status: number;
  /** The body as received (still compressed where the transport leaves that to the client). */
  readonly body: Uint8Array;
  /** A response header by its lower-case name (repeated headers joined with ", "), or undefined. */
  header(name: string): string | undefined;
}

/** HTTP statuses that mean "try again later". */
export function isUnavailableStatus(status: number): boolean {
  return status === 503 || status === 429 || status === 502;
}

/**
 * The error of an error answer whose (decompressed) body is `body`: the status picks the class, the
 * server's `{"error": "..."}` message refines it (error-mapping.ts); `requestId` is the request's own id, or
 * else the answer's `x-request-id`; `retry-after` is kept.
 */
export function errorOfAnswer(
  answer: HttpAnswer,
  body: Uint8Array,
  requestId: string | undefined,
): InferenceError {
  const details: { requestId?: string; retryAfterMs?: number } = {};
  const id = requestId ?? answer.header("x-request-id");
  if (id !== undefined) details.requestId = id;
  const retryAfterMs = parseRetryAfterMs(answer.header("retry-after"));
  if (retryAfterMs !== undefined) details.retryAfterMs = retryAfterMs;
  return errorFromHttpStatus(answer.status, errorMessageOf(body, answer.status), details);
}
