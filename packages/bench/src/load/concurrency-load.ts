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

/** Closed-loop load: N contexts, each keeping exactly one request in flight. */
export interface ConcurrencyLoad {
  /** Grows or shrinks the number of contexts; shrinking lets the extra contexts finish their request. */
  setConcurrency(contexts: number): void;
  readonly concurrency: number;
  /** Stops all contexts and resolves when their last requests have completed. */
  stop(): Promise<void>;
}

/**
 * Creates closed-loop load. perf_analyzer's `--sync` (one thread per context) and `--async` (callbacks) do
 * the same thing here: each context awaits its response before sending the next request.
 */
export function createConcurrencyLoad(options: ConcurrencyLoadOptions): ConcurrencyLoad {
  const { sender, recorder, tickets } = options;
  // active[i] says whether context i should keep going; a context checks it before each send.
  const active: boolean[] = [];
  const running = new Set<Promise<void>>();
  let target = 0;

  async function runContext(id: number): Promise<void> {
    while (active[id] === true) {
      const index = tickets.take();
      if (index < 0) break;
      const sentMs = nowMs();
      recorder.recordSent(0, false);
      try {
        await sender.send(index);
        recorder.recordSuccess(sentMs, sentMs, nowMs());
      } catch (error) {
        recorder.recordError(classifyError(error), sentMs, nowMs());
      }
    }
    active[id] = false;
  }

  function start(id: number): void {
    active[id] = true;
    const done = runContext(id).finally(() => running.delete(done));
    running.add(done);
  }

  return {
    setConcurrency(contexts) {
      target = contexts;
      for (let id = 0; id < contexts; id++) if (active[id] !== true) start(id);
      for (let id = contexts; id < active.length; id++) active[id] = false;
    },
    get concurrency() {
      return target;
    },
    async stop() {
      for (let id = 0; id < active.length; id++) active[id] = false;
      target = 0;
      await Promise.all([...running]);
    },
  };
}
