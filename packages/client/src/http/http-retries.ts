/**
 * The retry loop of an HTTP call, shared by both transports: attempts under one overall deadline, UNAVAILABLE
 * answers (503, 429, 502) and retryable failures retried per retry-policy.ts, the wait between attempts cut
 * short by the caller's abort. Timers only (no `node:` import): it runs in browsers too.
 */
import {
  AbortedError,
  ClientClosedError,
  DeadlineExceededError,
  InferenceError,
  UnavailableError,
} from "../errors.js";
import { type BackoffOptions, isRetryable, parseRetryAfterMs, retryDelayMs } from "../retry-policy.js";
import { type HttpAnswer, isUnavailableStatus } from "./http-answer.js";

/** How one call is sent. */
export interface SendPolicy {
  /** Safe to repeat (then UNAVAILABLE answers and any connection failure are retried). */
  readonly idempotent: boolean;
  /** Retries allowed. */
  readonly maxRetries: number;
}

/** What the loop needs besides the attempt itself. */
export interface RetryContext {
  /** "GET /v2/...", for messages. */
  readonly what: string;
  readonly signal: AbortSignal | undefined;
  /** Deadline of the whole call (all attempts and the waits between them). */
  readonly timeoutMs: number | undefined;
  readonly backoff: Readonly<BackoffOptions>;
  /** Whether the client was closed (checked after each wait). */
  readonly isClosed: () => boolean;
}

/**
 * Runs `attempt` (given the time left before the deadline) until it answers with something final, retries
 * run out, or the deadline would pass during the next wait. Resolves with the last answer, whatever its
 * status (the caller turns an error status into its error); rejects with the last failure.
 */
export async function sendWithRetries<A extends HttpAnswer>(
  attempt: (remainingMs: number | undefined) => Promise<A>,
  policy: SendPolicy,
  context: RetryContext,
): Promise<A> {
  const { timeoutMs, signal } = context;
  const deadlineAt = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  for (let retry = 0; ; retry++) {
    const remainingMs = deadlineAt === undefined ? undefined : deadlineAt - Date.now();
    if (remainingMs !== undefined && remainingMs <= 0) {
      throw new DeadlineExceededError(`${context.what}: deadline of ${timeoutMs} ms exceeded`);
    }
    let failure: InferenceError;
    let answer: A | undefined;
    try {
      answer = await attempt(remainingMs);
      if (!isUnavailableStatus(answer.status) || !policy.idempotent || retry >= policy.maxRetries)
        return answer;
      const retryAfterMs = parseRetryAfterMs(answer.header("retry-after"));
      failure = new UnavailableError(
        `HTTP ${answer.status}`,
        retryAfterMs === undefined ? {} : { retryAfterMs },
      );
    } catch (error) {
      if (!(error instanceof InferenceError) || retry >= policy.maxRetries) throw error;
      if (!isRetryable(error, policy.idempotent)) throw error;
      failure = error;
    }
    const delayMs = retryDelayMs(retry, context.backoff, failure);
    if (deadlineAt !== undefined && Date.now() + delayMs >= deadlineAt) {
      if (answer !== undefined) return answer; // the caller turns it into the right error
      throw failure;
    }
    await waitUnlessAborted(delayMs, signal, context.what);
    if (context.isClosed()) throw new ClientClosedError();
  }
}

/** Resolves after `delayMs`, or rejects with AbortedError (`cause` = `signal.reason`) once `signal` aborts. */
export function waitUnlessAborted(
  delayMs: number,
  signal: AbortSignal | undefined,
  what: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () => new AbortedError(`${what}: aborted`, { cause: signal?.reason });
    if (signal?.aborted) {
      reject(aborted());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
