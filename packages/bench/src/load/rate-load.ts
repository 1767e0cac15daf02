import { LATE_SEND_THRESHOLD_MS, nowMs } from "./clock.js";
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
}

/** Open-loop load following a precomputed send schedule. */
export interface RateLoad {
  /** Starts (or switches to) a schedule; the first send is due `firstDelayMs` from now. */
  setSchedule(schedule: SendSchedule, firstDelayMs?: number): void;
  readonly inFlight: number;
  /** Stops sending and resolves when the requests in flight have completed. */
  stop(): Promise<void>;
}

/**
 * Creates open-loop load. Each send has a due time from the schedule; latency is recorded from that due
 * time (coordinated omission corrected, as wrk2 does) and, separately, from the moment the send really left.
 * When the process falls behind, overdue sends go out at once (never dropped) and are counted as late.
 */
export function createRateLoad(options: RateLoadOptions): RateLoad {
  const { sender, recorder, tickets, maxInFlight } = options;
  let schedule: SendSchedule | undefined;
  let position = 0;
  let dueMs = 0;
  let timer: NodeJS.Timeout | undefined;
  let inFlight = 0;
  let stopped = false;
  let drained: (() => void) | undefined;

  function fire(scheduledMs: number, index: number): void {
    const sentMs = nowMs();
    const lagMs = sentMs - scheduledMs;
    recorder.recordSent(lagMs, lagMs > LATE_SEND_THRESHOLD_MS);
    inFlight += 1;
    sender.send(index).then(
      () => complete(() => recorder.recordSuccess(scheduledMs, sentMs, nowMs())),
      (error: unknown) => complete(() => recorder.recordError(classifyError(error), scheduledMs, nowMs())),
    );
  }

  function complete(record: () => void): void {
    inFlight -= 1;
    record();
    if (inFlight === 0 && drained !== undefined) drained();
    // A freed slot may unblock a send that is already due.
    if (inFlight === maxInFlight - 1 && !stopped) tick();
  }

  function tick(): void {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (stopped || schedule === undefined) return;
    const intervals = schedule.intervalsMs;
    let now = nowMs();
    while (dueMs <= now) {
      if (inFlight >= maxInFlight) return; // resumed by complete()
      const index = tickets.take();
      if (index < 0) return;
      fire(dueMs, index);
      dueMs += intervals[position] ?? 0;
      position = (position + 1) % intervals.length;
      now = nowMs();
    }
    timer = setTimeout(tick, Math.max(0, Math.floor(dueMs - now)));
  }

  return {
    setSchedule(next, firstDelayMs = 0) {
      schedule = next;
      position = 0;
      dueMs = nowMs() + firstDelayMs;
      stopped = false;
      tick();
    },
    get inFlight() {
      return inFlight;
    },
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        drained = resolve;
      });
    },
  };
}
