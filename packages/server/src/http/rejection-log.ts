/**
 * Admission rejections (503: a full queue, a queue timeout, a version not ready, a stopping server) are the
 * normal answer under overload, so each one writing an error line turns overload into a flood of log
 * writes (131k lines in 50 s in a probe) that slows the refusals themselves. They are counted by the
 * metrics already (nv_inference_request_failure{reason="REJECTED"}); the log gets at most one summary line
 * per interval, grouped by message: `W 131 requests rejected in the last second: 130 x 'Exceeds maximum
 * queue size', 1 x 'Request timeout expired'`.
 */
import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import { createSummarizingLog } from "../core/summarizing-log.js";

/** Options of createRejectionLog. */
export interface RejectionLogOptions {
  readonly logger: Logger;
  /** Runs the summary timer (tests pass a fake clock). */
  readonly clock: Clock;
  /** How often at most a summary is written. Default 1 s. */
  readonly intervalMs?: number;
}

/** Collects rejections and writes their summary; close() writes what is pending. */
export interface RejectionLog {
  /** Records one rejection with its message (a `[request id: ...] ` prefix is dropped for grouping). */
  record(message: string): void;
  /** Writes the pending summary now and stops the timer. Idempotent. */
  close(): void;
}

const REQUEST_ID_PREFIX = /^\[request id: [^\]]*\] /;

/**
 * Creates the rejection summary of one front end: core/summarizing-log.ts writing no line in full, so its
 * line is clipped like every summarised one (a message can carry a client's model name).
 */
export function createRejectionLog(options: RejectionLogOptions): RejectionLog {
  const { logger } = options;
  const log = createSummarizingLog({
    write: (line) => logger.warn(line),
    clock: options.clock,
    linesPerInterval: 0,
    ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
    summary: (total, period, groups) =>
      `${total} request${total === 1 ? "" : "s"} rejected in the last ${period}: ${groups}`,
  });
  return {
    record(message) {
      const key = message.replace(REQUEST_ID_PREFIX, "");
      log.record(key, key);
    },
    close: () => log.close(),
  };
}
