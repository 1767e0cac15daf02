// A sequence model's load, between the concurrency or rate load and the sender: every request the load sends
// becomes the next step of one of the sequences (sequence-manager.ts), chosen as perf_analyzer's context-id
// trackers choose a context. Concurrency mode: one sequence per context, a free one for each send (FIFO),
// so each sequence has one request in flight; request-rate mode: any of `--num-of-sequences` at random,
// or with `--serial-sequences` a free one round-robin. A request picked for a sequence whose previous
// request is still unanswered (random picking) leaves once that one is answered: perf_analyzer sends it at
// once and lets the transport keep the order, but over several HTTP connections (or gRPC streams) the
// server could then see a sequence's requests out of order and refuse them. Between levels and at the end,
// every unfinished sequence gets one last request with END (perf_analyzer's CompleteOngoingSequences), so
// the server is left holding none.
import type { RequestSender } from "./request-sender.js";
import { createSeededRandom } from "./schedule.js";
import {
  createSequenceManager,
  type SequenceManager,
  type SequenceOptions,
  type SequenceStep,
} from "./sequence-manager.js";

/** The load's mode (load-driver.ts's `LoadLevel["mode"]`, named here so that the driver can import this). */
type LoadMode = "concurrency" | "request_rate";

/**
 * A sequence model's load settings, as they cross to a load worker (plain data). With `--workers N` each
 * worker gets its share of the sequences and of the id range (see worker-driver.ts).
 */
export interface SequenceSettings {
  readonly options: SequenceOptions;
  /** Step counts of the JSON input-data streams (undefined without JSON data). */
  readonly streamSteps: readonly number[] | undefined;
  /** Seeds the lengths, the streams and the random choice of a sequence (`--seed`). */
  readonly seed: number;
}

/** What a sequence load needs; the sender is the real one, `recordSequenceEnd` counts the ended sequences. */
export interface SequenceLoadOptions {
  readonly sender: RequestSender;
  readonly settings: SequenceSettings;
  readonly mode: LoadMode;
  readonly recordSequenceEnd: () => void;
  /** A manager of one's own (tests); default: made from the settings. */
  readonly manager?: SequenceManager;
}

/** The sequence layer of a load. */
export interface SequenceLoad {
  /** What the concurrency or rate load sends through: each send is one step of a sequence. */
  readonly sender: RequestSender;
  /**
   * Spreads the following sends over `count` sequences (concurrency mode: the level's contexts; rate mode:
   * the number of sequences). Call while nothing is in flight.
   */
  resize(count: number): void;
  /** Sends END to every unfinished sequence and resolves when those requests are answered (failed or not). */
  completeOngoing(): Promise<void>;
  /** Sequences that sends go to now. */
  readonly count: number;
}

/** How each send picks its sequence: a free one, first in first out, or any one at random. */
export type SequencePicking = "fifo" | "random";

/** perf_analyzer's CtxIdTrackerFactory: FIFO in concurrency mode and with --serial-sequences, else random. */
export function sequencePicking(mode: LoadMode, serial: boolean): SequencePicking {
  return mode === "concurrency" || serial ? "fifo" : "random";
}

/** Creates the sequence layer over a sender. */
export function createSequenceLoad(options: SequenceLoadOptions): SequenceLoad {
  const { sender, settings } = options;
  const random = createSeededRandom(settings.seed);
  const manager =
    options.manager ??
    createSequenceManager({
      length: settings.options.length,
      lengthSpecified: settings.options.lengthSpecified,
      lengthVariationPercent: settings.options.lengthVariationPercent,
      idStart: settings.options.idStart,
      idRange: settings.options.idRange,
      streamSteps: settings.streamSteps,
      random,
    });
  const picking = sequencePicking(options.mode, settings.options.serial);
  let count = 0;
  /** FIFO picking: the sequences with nothing in flight, in the order they became free. */
  let free: number[] = [];
  /** Per sequence: its requests not yet answered, and the settling of the last one (what the next waits for). */
  const pending: number[] = [];
  const tails: Promise<void>[] = [];
  const settle = () => undefined;

  /** Sends a step once every earlier step of its sequence has been answered. */
  function sendInOrder(slot: number, step: SequenceStep): Promise<unknown> {
    const go = () => sender.send(step.dataIndex, step);
    const waiting = pending[slot] ?? 0;
    const sent = waiting === 0 ? go() : tails[slot]!.then(go, go);
    const done = sent.then(settle, settle);
    tails[slot] = done;
    pending[slot] = waiting + 1;
    void done.then(() => {
      pending[slot] = (pending[slot] ?? 1) - 1;
    });
    return sent;
  }

  function pick(): number {
    if (count === 0) return -1;
    if (picking === "random") return Math.min(count - 1, Math.floor(random() * count));
    return free.shift() ?? -1;
  }

  function release(slot: number): void {
    if (picking === "fifo" && slot < count) free.push(slot);
  }

  const wrapped: RequestSender = {
    send(_index, _sequence, note) {
      const slot = pick();
      if (slot < 0) {
        // The loads never send more than there are sequences (concurrency: one per context; serial rate
        // mode: the in-flight cap is the number of sequences), so this is a bug, not a load condition.
        return Promise.reject(new Error(`no free sequence (${count} sequences, picking ${picking})`));
      }
      const step = manager.next(slot);
      if (note !== undefined) note.sequenceId = step.id;
      return sendInOrder(slot, step).then(
        () => {
          release(slot);
          if (step.end) options.recordSequenceEnd();
        },
        (error: unknown) => {
          release(slot);
          throw error;
        },
      );
    },
    close: () => sender.close(),
  };

  return {
    sender: wrapped,
    get count() {
      return count;
    },
    resize(next) {
      manager.ensure(next);
      count = next;
      free = Array.from({ length: next }, (_, i) => i);
    },
    async completeOngoing() {
      await Promise.all(tails);
      const last: Promise<unknown>[] = [];
      for (let slot = 0; slot < manager.size; slot++) {
        const step = manager.finish(slot);
        if (step === undefined) continue;
        last.push(sendInOrder(slot, step).catch(() => undefined));
      }
      await Promise.all(last);
    },
  };
}
