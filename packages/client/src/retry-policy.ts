/**
 * When to retry a failed attempt and how long to wait first. Pure functions, shared by the transports.
 *
 * Retried: connection failures that happened before the request was sent (any call: the server never saw
 * it), and, for idempotent calls only, UNAVAILABLE answers (503, 429, 502) and connection failures after
 * sending. `infer` counts as idempotent only when the caller opts in to retries. The wait is exponential
 * backoff with jitter, or the server's `retry-after` when it sent one (capped by `maxDelayMs`).
 */
import { ConnectionError, type InferenceError, UnavailableError } from "./errors.js";

/** Backoff settings (all optional in the client options; these are the resolved values). */
export interface BackoffOptions {
  /** Wait before the first retry, in ms (default 100). */
  initialDelayMs: number;
  /** Longest wait between attempts, in ms, also the cap on `retry-after` (default 5000). */
  maxDelayMs: number;
  /** Factor by which the wait grows per attempt (default 2). */
  multiplier: number;
  /** Fraction of the wait that is random, 0..1 (default 0.2: waits vary between 80% and 100%). */
  jitter: number;
}

/** The default backoff. */
export const DEFAULT_BACKOFF: Readonly<BackoffOptions> = Object.freeze({
  initialDelayMs: 100,
  maxDelayMs: 5000,
  multiplier: 2,
  jitter: 0.2,
});

/** Whether an attempt that failed with `error` may be retried. */
export function isRetryable(error: unknown, idempotent: boolean): boolean {
  if (error instanceof ConnectionError) return idempotent || !error.requestSent;
  if (error instanceof UnavailableError) return idempotent;
  return false;
}

/**
 * How long to wait before retry number `retry` (0 for the first retry), in ms. A server's `retry-after`
 * wins over the computed backoff, capped at `maxDelayMs`.
 */
export function retryDelayMs(
  retry: number,
  backoff: Readonly<BackoffOptions>,
  error: InferenceError | undefined,
  random: () => number = Math.random,
): number {
  const retryAfter = error instanceof UnavailableError ? error.retryAfterMs : undefined;
  if (retryAfter !== undefined) return Math.min(retryAfter, backoff.maxDelayMs);
  const base = Math.min(backoff.initialDelayMs * backoff.multiplier ** retry, backoff.maxDelayMs);
  return base * (1 - backoff.jitter * random());
}

/**
 * Parses a `retry-after` header: delay-seconds or an HTTP-date. Returns milliseconds from `nowMs`, or
 * undefined when the header is absent or unreadable.
 */
export function parseRetryAfterMs(
  value: string | string[] | undefined,
  nowMs = Date.now(),
): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
