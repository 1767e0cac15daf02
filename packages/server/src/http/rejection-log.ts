/**
 * Admission rejections (503: a full queue, a queue timeout, a version not ready, a stopping server) are the
 * normal answer under overload, so each one writing an error line turns overload into a flood of log
 * writes (131k lines in 50 s in a probe) that slows the refusals themselves. They are counted by the
 * metrics already (nv_inference_request_failure{reason="REJECTED"}); the log gets at most one summary line
 * per interval, grouped by message: `W 131 requests rejected in the last second: 130 x 'Exceeds maximum
 * queue size', 1 x 'Request timeout expired'`.
 */
import type { Clock, TimerHandle } from "../core/clock.js";
import type { Logger } from "../core/logger.js";

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
/** Distinct messages kept per interval; the rest are counted under "other". */
const MAX_GROUPS = 8;

/** Creates the rejection summary of one front end. */
export function createRejectionLog(options: RejectionLogOptions): RejectionLog {
  const { logger, clock } = options;
  const intervalMs = options.intervalMs ?? 1000;
  const period = intervalMs === 1000 ? "second" : `${intervalMs} ms`;
  let groups = new Map<string, number>();
  let total = 0;
  let timer: TimerHandle | undefined;

  const flush = () => {
    timer = undefined;
    if (total === 0) return;
    const parts = [...groups].map(([message, count]) => `${count} x '${message}'`);
    const grouped = [...groups.values()].reduce((a, b) => a + b, 0);
    if (grouped < total) parts.push(`${total - grouped} x other messages`);
    logger.warn(
      `${total} request${total === 1 ? "" : "s"} rejected in the last ${period}: ${parts.join(", ")}`,
    );
    groups = new Map();
    total = 0;
  };

  return {
    record(message) {
      total++;
      const key = message.replace(REQUEST_ID_PREFIX, "");
      const count = groups.get(key);
      if (count !== undefined) groups.set(key, count + 1);
      else if (groups.size < MAX_GROUPS) groups.set(key, 1);
      // The first rejection of a quiet period starts the interval; its summary closes it.
      timer ??= clock.setTimer(flush, intervalMs * 1000);
    },
    close() {
      timer?.cancel();
      flush();
    },
  };
}
