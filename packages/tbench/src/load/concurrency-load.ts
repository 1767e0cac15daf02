import { nowMs } from "./clock.js";
import { classifyError, type RequestSender } from "./request-sender.js";
import type { RequestTicket } from "./request-ticket.js";
import type { WindowRecorder } from "./window-recorder.js";

/** Options of {@link createConcurrencyLoad}. */
export interface ConcurrencyLoadOptions {
  sender: RequestSender;
  recorder: WindowRecorder;
  tickets: RequestTicket;
}

/** Closed-loop load: a target number of requests kept in flight. */
export interface ConcurrencyLoad {
  /**
   * Sets the number of requests kept in flight. Growing sends the missing requests at once; shrinking sends
   * nothing new until enough of the requests in flight have completed (they are never cancelled).
   */
  setConcurrency(contexts: number): void;
  readonly concurrency: number;
  /** Requests sent and not yet completed. Never above the target, except right after a shrink. */
  readonly inFlight: number;
  /** Stops sending and resolves when the requests in flight have completed. */
  stop(): Promise<void>;
}

/**
 * Creates closed-loop load. perf_analyzer's `--sync` (one thread per context) and `--async` (callbacks) do
 * the same thing here: a request is sent only while fewer than the target are in flight, so, as with
 * perf_analyzer's context tracker (a slot is taken at the send and given back at the response), a shrink
 * followed by a grow while a request is stalled never puts more than the target in flight.
 */
export function createConcurrencyLoad(options: ConcurrencyLoadOptions): ConcurrencyLoad {
  const { sender, recorder, tickets } = options;
  let target = 0;
  let inFlight = 0;
  const drained: (() => void)[] = [];

  function complete(): void {
    inFlight -= 1;
    if (inFlight === 0 && drained.length > 0) {
      for (const resolve of drained.splice(0)) resolve();
    }
    fill();
  }

  function launch(index: number): void {
    inFlight += 1;
    const sentMs = nowMs();
    recorder.recordSent(0, false);
    const note = recorder.keepsRequests ? { sequenceId: 0 } : undefined;
    sender.send(index, undefined, note).then(
      () => {
        recorder.recordSuccess(sentMs, sentMs, nowMs(), note);
        complete();
      },
      (error: unknown) => {
        recorder.recordError(classifyError(error), sentMs, nowMs(), note);
        complete();
      },
    );
  }

  /** Sends until the target is in flight (or the request budget is spent). */
  function fill(): void {
    while (inFlight < target) {
      const index = tickets.take();
      if (index < 0) return;
      launch(index);
    }
  }

  return {
    setConcurrency(contexts) {
      target = contexts;
      fill();
    },
    get concurrency() {
      return target;
    },
    get inFlight() {
      return inFlight;
    },
    stop() {
      target = 0;
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => drained.push(resolve));
    },
  };
}
