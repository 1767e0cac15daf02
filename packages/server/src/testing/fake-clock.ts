/**
 * A fake Clock for tests: time moves only when the test says so, and due timers fire in deadline order at
 * their exact times, so the batcher's and the queue policies' decisions can be asserted to the microsecond.
 * Tests pass it through the `clock` option; it is not part of the server's public API.
 */
import type { Clock } from "../core/clock.js";

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
