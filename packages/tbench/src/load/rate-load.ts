import { nowMs as clockNowMs, LATE_SEND_THRESHOLD_MS } from "./clock.js";
import { classifyError, type RequestSender } from "./request-sender.js";
import type { RequestTicket } from "./request-ticket.js";
import type { SendSchedule } from "./schedule.js";
import type { WindowRecorder } from "./window-recorder.js";

/** Options of {@link createRateLoad}. */
export interface RateLoadOptions {
  sender: RequestSender;
  recorder: WindowRecorder;
  tickets: RequestTicket;
  /**
   * At most this many requests in flight (`--sync` with `--max-threads`, like perf_analyzer's synchronous
   * threads); a due send that finds no free slot waits and is counted late. `Infinity` for open loop.
   */
  maxInFlight: number;
  /** The clock and the event loop's timers (tests run the load on a simulated loop); Node's by default. */
  timers?: RateLoadTimers;
}

/** What the load needs of the clock and the event loop. */
export interface RateLoadTimers {
  nowMs(): number;
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
  setImmediate(callback: () => void): unknown;
  clearImmediate(handle: unknown): void;
}

const nodeTimers: RateLoadTimers = {
  nowMs: clockNowMs,
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  setImmediate: (callback) => setImmediate(callback),
  clearImmediate: (handle) => clearImmediate(handle as NodeJS.Immediate),
};

/** Open-loop load following a precomputed send schedule. */
export interface RateLoad {
  /** Starts (or switches to) a schedule; the first send is due `firstDelayMs` from now. */
  setSchedule(schedule: SendSchedule, firstDelayMs?: number): void;
  readonly inFlight: number;
  /** Stops sending and resolves when the requests in flight have completed. */
  stop(): Promise<void>;
}

/**
 * How long before a due time the timer hands over to the event loop. Node truncates a timer's delay to whole
 * milliseconds and fires it a little after that (about 0.2 ms on an idle machine, more under load), so a
 * timer alone sends up to 1-2 ms late; the last stretch (at most this plus the truncated fraction, under
 * 1.5 ms) is waited out by yielding to the event loop with setImmediate, which still runs I/O in between.
 */
export const SPIN_LEAD_MS = 0.5;
/** The share of one core the final waits may spend yielding; past it, sends fall back to the timer. */
export const MAX_SPIN_SHARE = 0.25;
/** Unused yielding time saved up for bursts (milliseconds of spin). */
const SPIN_CREDIT_CAP_MS = 10;

/**
 * Creates open-loop load. Each send has a due time from the schedule; latency is recorded from that due
 * time (coordinated omission corrected, as wrk2 does) and, separately, from the moment the send really left.
 * The generator's own lateness (behind the due time, or behind the moment a `--sync` slot freed up, which
 * is the server's doing) is recorded as the send delay. When the process falls behind, overdue sends go out
 * at once (never dropped).
 */
export function createRateLoad(options: RateLoadOptions): RateLoad {
  const { sender, recorder, tickets, maxInFlight } = options;
  const { nowMs, setTimeout, clearTimeout, setImmediate, clearImmediate } = options.timers ?? nodeTimers;
  let schedule: SendSchedule | undefined;
  let position = 0;
  let dueMs = 0;
  let timer: unknown;
  let immediate: unknown;
  let inFlight = 0;
  let blocked = false;
  let stopped = false;
  const drained: (() => void)[] = [];
  // Spin budget: credit grows by MAX_SPIN_SHARE per millisecond of wall time and each millisecond spent
  // yielding costs one, so yielding never takes more than that share of a core over time.
  let spinCreditMs = SPIN_CREDIT_CAP_MS;
  let lastTickMs = nowMs();
  let spinning = false;

  function fire(scheduledMs: number, readyMs: number, index: number): void {
    const sentMs = nowMs();
    const lagMs = sentMs - scheduledMs;
    recorder.recordSent(lagMs, lagMs > LATE_SEND_THRESHOLD_MS);
    recorder.recordSendDelay(sentMs - Math.max(scheduledMs, readyMs));
    inFlight += 1;
    const note = recorder.keepsRequests ? { sequenceId: 0 } : undefined;
    sender.send(index, undefined, note).then(
      () => complete(() => recorder.recordSuccess(scheduledMs, sentMs, nowMs(), note)),
      (error: unknown) =>
        complete(() => recorder.recordError(classifyError(error), scheduledMs, nowMs(), note)),
    );
  }

  function complete(record: () => void): void {
    inFlight -= 1;
    record();
    if (inFlight === 0 && drained.length > 0) {
      for (const resolve of drained.splice(0)) resolve();
    }
    // A freed slot unblocks a send that is already due; it could leave from now on.
    if (blocked && !stopped) tick(nowMs());
  }

  function cancelWait(): void {
    if (timer !== undefined) clearTimeout(timer);
    if (immediate !== undefined) clearImmediate(immediate);
    timer = undefined;
    immediate = undefined;
  }

  function onWake(): void {
    tick(Number.NEGATIVE_INFINITY);
  }

  /** Sends whatever is due, then waits for the next due time. `readyMs`: when a blocked slot freed up. */
  function tick(readyMs: number): void {
    cancelWait();
    blocked = false;
    let now = nowMs();
    const elapsedMs = now - lastTickMs;
    lastTickMs = now;
    spinCreditMs = Math.min(
      SPIN_CREDIT_CAP_MS,
      spinCreditMs + elapsedMs * MAX_SPIN_SHARE - (spinning ? elapsedMs : 0),
    );
    spinning = false;
    if (stopped || schedule === undefined) return;
    const intervals = schedule.intervalsMs;
    while (dueMs <= now) {
      if (inFlight >= maxInFlight) {
        blocked = true; // resumed by complete()
        return;
      }
      const index = tickets.take();
      if (index < 0) return;
      fire(dueMs, readyMs, index);
      dueMs += intervals[position] ?? 0;
      position = (position + 1) % intervals.length;
      now = nowMs();
    }
    const waitMs = dueMs - now;
    const timerMs = Math.floor(waitMs - SPIN_LEAD_MS);
    if (timerMs >= 1) {
      timer = setTimeout(onWake, timerMs);
    } else if (spinCreditMs > 0) {
      spinning = true;
      immediate = setImmediate(onWake);
    } else {
      // Out of budget: the timer's granularity shows up as send delay, not hidden.
      timer = setTimeout(onWake, waitMs);
    }
  }

  return {
    setSchedule(next, firstDelayMs = 0) {
      schedule = next;
      position = 0;
      dueMs = nowMs() + firstDelayMs;
      stopped = false;
      tick(Number.NEGATIVE_INFINITY);
    },
    get inFlight() {
      return inFlight;
    },
    stop() {
      stopped = true;
      blocked = false;
      cancelWait();
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => drained.push(resolve));
    },
  };
}
