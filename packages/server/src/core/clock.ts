/**
 * Time as the core sees it: a monotonic nanosecond clock, wall-clock milliseconds and one-shot timers. The
 * scheduler takes a Clock through options so tests can run it on a fake clock with exact arrival times
 * (`testing/fake-clock.ts`, not exported).
 */

/** An armed one-shot timer; `cancel()` is idempotent. */
export interface TimerHandle {
  cancel(): void;
}

/** The clock and timer interface the core runs on. */
export interface Clock {
  /** Monotonic time in nanoseconds (arbitrary origin). */
  nowNs(): number;
  /** Wall-clock milliseconds since the epoch (statistics' `last_inference`). */
  epochMs(): number;
  /** Calls `callback` once after `delayUs` microseconds. */
  setTimer(callback: () => void, delayUs: number): TimerHandle;
}

/** The real clock: `performance.now()` and `setTimeout` (millisecond resolution, rounded up). */
export function createSystemClock(): Clock {
  return {
    nowNs: () => Math.round(performance.now() * 1e6),
    epochMs: () => Date.now(),
    setTimer(callback, delayUs) {
      // setTimeout has 1 ms granularity; rounding up never fires before the deadline.
      const timer = setTimeout(callback, Math.max(0, Math.ceil(delayUs / 1000)));
      timer.unref?.();
      return { cancel: () => clearTimeout(timer) };
    },
  };
}
