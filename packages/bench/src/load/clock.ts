// Read once: the getter is a native call, and nowMs() runs twice per request in the load loop.
const TIME_ORIGIN_MS = performance.timeOrigin;

/** Wall-clock milliseconds since the epoch with sub-millisecond resolution (monotonic within a process). */
export function nowMs(): number {
  return TIME_ORIGIN_MS + performance.now();
}

/**
 * A send counts as late when it leaves this long after its scheduled time. Node's timers wake up to about a
 * millisecond after their due time as a matter of course, so lag below this is timer granularity, not load.
 */
export const LATE_SEND_THRESHOLD_MS = 2;
