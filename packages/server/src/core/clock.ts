/**
 * Time as the core sees it: a monotonic nanosecond clock, wall-clock milliseconds and one-shot timers. The
 * scheduler takes a Clock through options so tests can run it on a fake clock with exact arrival times.
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

/** A Clock whose time only moves when a test says so. */
export interface FakeClock extends Clock {
  /** Moves time forward by `us` microseconds, firing due timers in deadline order at their exact times. */
  advanceUs(us: number): void;
  /** Moves time forward to absolute `us` microseconds (no-op when already past). */
  advanceToUs(us: number): void;
  /** Current time in microseconds. */
  nowUs(): number;
  /** Number of armed timers. */
  pendingTimers(): number;
}

interface FakeTimer {
  readonly dueNs: number;
  readonly seq: number;
  readonly callback: () => void;
  cancelled: boolean;
}

/** Creates a FakeClock starting at `startUs` (default 0) and epoch `epochStartMs`. */
export function createFakeClock(startUs = 0, epochStartMs = 1_700_000_000_000): FakeClock {
  let nowNs = startUs * 1000;
  let seq = 0;
  const timers: FakeTimer[] = [];
  const advanceToNs = (targetNs: number) => {
    for (;;) {
      let next: FakeTimer | undefined;
      for (const timer of timers) {
        if (timer.cancelled || timer.dueNs > targetNs) continue;
        if (!next || timer.dueNs < next.dueNs || (timer.dueNs === next.dueNs && timer.seq < next.seq)) {
          next = timer;
        }
      }
      if (!next) break;
      timers.splice(timers.indexOf(next), 1);
      nowNs = Math.max(nowNs, next.dueNs);
      next.callback();
    }
    nowNs = Math.max(nowNs, targetNs);
    for (let i = timers.length - 1; i >= 0; i--) if (timers[i]!.cancelled) timers.splice(i, 1);
  };
  return {
    nowNs: () => nowNs,
    nowUs: () => nowNs / 1000,
    epochMs: () => epochStartMs + Math.floor(nowNs / 1e6),
    setTimer(callback, delayUs) {
      const timer: FakeTimer = {
        dueNs: nowNs + Math.max(0, delayUs) * 1000,
        seq: seq++,
        callback,
        cancelled: false,
      };
      timers.push(timer);
      return {
        cancel: () => {
          timer.cancelled = true;
        },
      };
    },
    advanceUs: (us) => advanceToNs(nowNs + us * 1000),
    advanceToUs: (us) => advanceToNs(us * 1000),
    pendingTimers: () => timers.filter((t) => !t.cancelled).length,
  };
}
