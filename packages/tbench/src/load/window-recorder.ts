import { createLatencyHistogram, type LatencyHistogram } from "../stats/histogram.js";
import { addLatency, createLatencyMoments, type LatencyMoments } from "../stats/latency-stats.js";
import { emptyHttpTiming, type HttpTimingTotals } from "./http-timing.js";
import type { SendNote } from "./request-sender.js";

/** One request as perf_analyzer's profile export records it (epoch milliseconds, fractional). */
export interface RequestRecord {
  /** When the request was due: the scheduled time in rate mode, the send time otherwise. */
  readonly startMs: number;
  /** When the response (or error) arrived. */
  readonly endMs: number;
  readonly ok: boolean;
  /** The request's correlation id (sequence models; 0 or absent otherwise). */
  readonly sequenceId?: number;
}

/**
 * Everything the load layer measured between two window boundaries. Latencies count successful requests
 * only. `latency` is measured from the scheduled send time in rate mode (coordinated omission corrected)
 * and from the actual send otherwise; `uncorrected` (rate mode only, else `undefined`) from the actual send.
 */
export interface WindowPart {
  sentCount: number;
  successCount: number;
  errorCount: number;
  errorsByKind: Record<string, number>;
  /** Sends dispatched later than the late threshold after their scheduled time (rate mode). */
  lateSendCount: number;
  /** Largest dispatch lag seen (behind the schedule, whatever the cause), microseconds. */
  maxSendLagUs: number;
  /**
   * Rate mode: how late each send left behind the moment it could have left (its due time, or the moment a
   * `--sync` slot freed up when it had to wait for one), microseconds: the generator's own lateness, not the
   * server's. `undefined` in concurrency mode.
   */
  sendDelay: LatencyHistogram | undefined;
  latency: LatencyHistogram;
  latencyMoments: LatencyMoments;
  uncorrected: LatencyHistogram | undefined;
  uncorrectedMoments: LatencyMoments | undefined;
  requests: RequestRecord[] | undefined;
  /** Client-library send/receive time of the window's requests (filled in by the load driver). */
  http: HttpTimingTotals;
  /**
   * Sequence models: requests with END that completed successfully (perf_analyzer's sequence count);
   * `undefined` for other models.
   */
  sequenceEndCount: number | undefined;
}

/** Options of {@link createWindowRecorder}. */
export interface WindowRecorderOptions {
  /** Keep one record per request (for `--profile-export-file`); costs memory. */
  keepRequests: boolean;
  /** Rate mode: record uncorrected latencies separately, and the send delay. */
  trackUncorrected: boolean;
  /** A sequence model's load: count the sequences that ended. */
  countSequences?: boolean;
}

/** Accumulates request outcomes; `swap()` hands over the current window and starts a new one. */
export interface WindowRecorder {
  recordSuccess(scheduledMs: number, sentMs: number, endMs: number, note?: SendNote): void;
  recordError(kind: string, scheduledMs: number, endMs: number, note?: SendNote): void;
  /** Whether per-request records are kept (the load then passes each request's note). */
  readonly keepsRequests: boolean;
  recordSent(lagMs: number, late: boolean): void;
  /** Rate mode: the generator's own lateness of one send, milliseconds (ignored in concurrency mode). */
  recordSendDelay(delayMs: number): void;
  /** A request with END completed successfully (counted when the options ask for sequences). */
  recordSequenceEnd(): void;
  /** Completed (success + error) requests in the current window. */
  readonly completedCount: number;
  swap(): WindowPart;
}

function emptyPart(options: WindowRecorderOptions): WindowPart {
  return {
    sentCount: 0,
    successCount: 0,
    errorCount: 0,
    errorsByKind: {},
    lateSendCount: 0,
    maxSendLagUs: 0,
    sendDelay: options.trackUncorrected ? createLatencyHistogram() : undefined,
    latency: createLatencyHistogram(),
    latencyMoments: createLatencyMoments(),
    uncorrected: options.trackUncorrected ? createLatencyHistogram() : undefined,
    uncorrectedMoments: options.trackUncorrected ? createLatencyMoments() : undefined,
    requests: options.keepRequests ? [] : undefined,
    http: emptyHttpTiming(),
    sequenceEndCount: options.countSequences === true ? 0 : undefined,
  };
}

function requestRecord(
  startMs: number,
  endMs: number,
  ok: boolean,
  note: SendNote | undefined,
): RequestRecord {
  const sequenceId = note?.sequenceId ?? 0;
  return sequenceId === 0 ? { startMs, endMs, ok } : { startMs, endMs, ok, sequenceId };
}

/** Creates a recorder. Latencies are rounded to whole microseconds (at least 1) before recording. */
export function createWindowRecorder(options: WindowRecorderOptions): WindowRecorder {
  let part = emptyPart(options);
  return {
    keepsRequests: options.keepRequests,
    recordSuccess(scheduledMs, sentMs, endMs, note) {
      part.successCount += 1;
      const latencyUs = Math.max(1, Math.round((endMs - scheduledMs) * 1000));
      part.latency.recordValue(latencyUs);
      addLatency(part.latencyMoments, latencyUs);
      if (part.uncorrected !== undefined && part.uncorrectedMoments !== undefined) {
        const uncorrectedUs = Math.max(1, Math.round((endMs - sentMs) * 1000));
        part.uncorrected.recordValue(uncorrectedUs);
        addLatency(part.uncorrectedMoments, uncorrectedUs);
      }
      part.requests?.push(requestRecord(scheduledMs, endMs, true, note));
    },
    recordError(kind, scheduledMs, endMs, note) {
      part.errorCount += 1;
      part.errorsByKind[kind] = (part.errorsByKind[kind] ?? 0) + 1;
      part.requests?.push(requestRecord(scheduledMs, endMs, false, note));
    },
    recordSent(lagMs, late) {
      part.sentCount += 1;
      if (late) part.lateSendCount += 1;
      const lagUs = lagMs * 1000;
      if (lagUs > part.maxSendLagUs) part.maxSendLagUs = lagUs;
    },
    recordSendDelay(delayMs) {
      part.sendDelay?.recordValue(Math.max(0, Math.round(delayMs * 1000)));
    },
    recordSequenceEnd() {
      if (part.sequenceEndCount !== undefined) part.sequenceEndCount += 1;
    },
    get completedCount() {
      return part.successCount + part.errorCount;
    },
    swap() {
      const done = part;
      part = emptyPart(options);
      return done;
    },
  };
}
