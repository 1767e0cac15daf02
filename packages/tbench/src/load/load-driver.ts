import { createConcurrencyLoad } from "./concurrency-load.js";
import { createHttpTiming } from "./http-timing.js";
import { createRateLoad } from "./rate-load.js";
import type { RequestSender } from "./request-sender.js";
import { createRequestTicket } from "./request-ticket.js";
import { createRateSchedule, type RequestDistribution, type SendSchedule } from "./schedule.js";
import { createSequenceLoad, type SequenceSettings, sequencePicking } from "./sequence-load.js";
import { createWindowRecorder, type WindowPart } from "./window-recorder.js";

/** One point of a sweep: a concurrency, or a request rate (requests per second). */
export interface LoadLevel {
  readonly mode: "concurrency" | "request_rate";
  readonly value: number;
}

/** How request-rate levels turn into send schedules. */
export interface RateSettings {
  distribution: RequestDistribution;
  seed: number;
  /** `--request-intervals`: used instead of the rate (gaps in ms); the level's value is then informational. */
  customIntervalsMs: Float64Array | undefined;
  /** In-flight cap in rate mode (`--sync`: `--max-threads`), `Infinity` for open loop (`--async`). */
  maxInFlight: number;
  /** This driver's share of the rate (1 for one process; 1/N for each of N workers). */
  rateShare: number;
  /** Phase offset of this driver's sends as a fraction of one gap (spreads N workers' constant schedules). */
  phase: number;
}

/**
 * Generates load and hands out what it measured window by window. The in-process driver and the
 * worker-thread driver (`--workers N`) both implement it, so the measurement layer does not care which runs.
 */
export interface LoadDriver {
  /** Applies a level (starting load, or changing it without pausing). */
  apply(level: LoadLevel): Promise<void>;
  /** Limits how many more requests are sent (`Infinity`: no limit). */
  setBudget(requests: number): Promise<void>;
  /** Ends the current window: returns what it measured and starts the next. */
  collect(): Promise<WindowPart>;
  /** Requests completed in the current window so far (may lag by one progress tick with workers). */
  completedCount(): number;
  /** Stops sending and waits for in-flight requests. */
  stop(): Promise<void>;
  /** Stops and releases everything (senders, workers); idempotent. */
  close(): Promise<void>;
}

/** Options of {@link createLocalLoadDriver}. */
export interface LocalLoadDriverOptions {
  sender: RequestSender;
  rate: RateSettings;
  keepRequests: boolean;
  /** The run's mode; uncorrected latencies are tracked in request-rate mode only. */
  mode: LoadLevel["mode"];
  /** First request number and stride (workers interleave their data indices). */
  firstIndex?: number;
  indexStride?: number;
  /** A sequence model's load (perf_analyzer's sequence manager); undefined for other models. */
  sequences?: SequenceSettings | undefined;
}

/** Builds the send schedule for a rate level under the given settings. */
export function scheduleForLevel(level: LoadLevel, rate: RateSettings): SendSchedule {
  if (rate.customIntervalsMs !== undefined) {
    const intervals = rate.customIntervalsMs.map((ms) => ms / rate.rateShare);
    const totalMs = intervals.reduce((a, b) => a + b, 0);
    return { intervalsMs: intervals, ratePerSec: (intervals.length * 1000) / totalMs };
  }
  return createRateSchedule({
    ratePerSec: level.value * rate.rateShare,
    distribution: rate.distribution,
    seed: rate.seed,
  });
}

/**
 * Creates the in-process load driver. For a sequence model every request is a step of a sequence
 * (sequence-load.ts); a level change then pauses the load and ends the open sequences before the new
 * level starts, as perf_analyzer's managers pause their sequence workers, and so does stopping.
 */
export function createLocalLoadDriver(options: LocalLoadDriverOptions): LoadDriver {
  const { rate } = options;
  const tickets = createRequestTicket(options.firstIndex ?? 0, options.indexStride ?? 1);
  // In concurrency mode the send time is the due time, so an uncorrected histogram would only repeat it.
  const recorder = createWindowRecorder({
    keepRequests: options.keepRequests,
    trackUncorrected: options.mode === "request_rate",
    countSequences: options.sequences !== undefined,
  });
  const settings = options.sequences;
  const sequences =
    settings === undefined
      ? undefined
      : createSequenceLoad({
          sender: options.sender,
          settings,
          mode: options.mode,
          recordSequenceEnd: () => recorder.recordSequenceEnd(),
        });
  const sender = sequences?.sender ?? options.sender;
  // --serial-sequences: a request needs a sequence with nothing in flight, so no more are in flight than
  // there are sequences (a due send waits for one, as perf_analyzer's worker waits for a free context).
  const maxInFlight =
    settings !== undefined && sequencePicking(options.mode, settings.options.serial) === "fifo"
      ? Math.min(rate.maxInFlight, settings.options.numOfSequences)
      : rate.maxInFlight;
  const concurrency = createConcurrencyLoad({ sender, recorder, tickets });
  const rateLoad = createRateLoad({ sender, recorder, tickets, maxInFlight });
  const httpTiming = createHttpTiming();
  let closed = false;

  /** Stops sending, waits for the requests in flight, then ends the open sequences. */
  async function quiesce(): Promise<void> {
    await Promise.all([concurrency.stop(), rateLoad.stop()]);
    await sequences?.completeOngoing();
  }

  return {
    async apply(level) {
      if (level.mode !== options.mode) {
        throw new Error(`this driver runs ${options.mode} levels, got a ${level.mode} level`);
      }
      if (sequences !== undefined && settings !== undefined) {
        await quiesce();
        sequences.resize(level.mode === "concurrency" ? level.value : settings.options.numOfSequences);
      }
      if (level.mode === "concurrency") {
        concurrency.setConcurrency(level.value);
      } else {
        const schedule = scheduleForLevel(level, rate);
        const gapMs = 1000 / schedule.ratePerSec;
        rateLoad.setSchedule(schedule, gapMs * rate.phase);
      }
    },
    async setBudget(requests) {
      tickets.setBudget(requests);
    },
    async collect() {
      const part = recorder.swap();
      part.http = httpTiming.swap();
      return part;
    },
    completedCount() {
      return recorder.completedCount;
    },
    async stop() {
      await quiesce();
    },
    async close() {
      if (closed) return;
      closed = true;
      await quiesce();
      httpTiming.close();
      await sender.close();
    },
  };
}
