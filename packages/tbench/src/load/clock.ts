// Read once: the getter is a native call, and nowMs() runs twice per request in the load loop.
const TIME_ORIGIN_MS = performance.timeOrigin;

/** Wall-clock milliseconds since the epoch with sub-millisecond resolution (monotonic within a process). */
export function nowMs(): number {
  return TIME_ORIGIN_MS + performance.now();
}

/**
 * A send counts as late ("Delayed Request Count") when it leaves more than this after its scheduled time:
 * perf_analyzer's `delay_tolerance_` of its request-rate worker (1 ms).
 */
export const LATE_SEND_THRESHOLD_MS = 1;
