/**
 * The batch decision of Triton's dynamic batcher (dynamic_batch_scheduler.cc GetDynamicBatch), as a pure
 * function of the queue and the time, so tests on a fake clock get exact batches:
 *  - requests are taken in queue order and never split;
 *  - a request whose variable-size input shapes differ from the first request's ends the batch;
 *  - the largest preferred batch size reached wins while the oldest request has not waited
 *    max_queue_delay_microseconds;
 *  - the batch goes at once when adding the next request would pass max_batch_size, when it reached the
 *    largest preferred size, when the delay is over, or when there is no delay;
 *  - otherwise the batcher waits until the oldest request's delay (or the closest queue timeout) expires.
 */
import type { QueueEntry } from "./priority-queue.js";

/** The batcher's settings for one model version. */
export interface BatcherSettings {
  /** max(1, max_batch_size). */
  readonly maxBatchSize: number;
  /** Ascending; Triton defaults it to [max_batch_size]. */
  readonly preferredBatchSizes: readonly number[];
  readonly maxQueueDelayUs: number;
}

/** A queue entry with the shapes the batch must agree on. */
export interface BatchableEntry extends QueueEntry {
  /** Shapes of the inputs that must be equal within a batch (the variable-size ones), as one key. */
  readonly shapeKey: string;
}

/** What the batcher decided. */
export type BatchDecision<T> =
  | {
      readonly kind: "send";
      readonly entries: readonly T[];
      readonly batchSize: number;
      readonly reason: string;
    }
  | {
      readonly kind: "wait";
      readonly waitUs: number;
      readonly reason: string;
    }
  | { readonly kind: "empty" };

/**
 * Decides the next batch from `entries` (in scheduling order) at time `nowNs`. `closestTimeoutNs` is the
 * earliest queue-policy deadline (0: none); the batcher wakes for it so expired requests leave promptly.
 */
export function decideBatch<T extends BatchableEntry>(
  entries: Iterable<T>,
  settings: BatcherSettings,
  nowNs: number,
  closestTimeoutNs = 0,
): BatchDecision<T> {
  const maxPreferred = settings.preferredBatchSizes.at(-1) ?? 0;
  const preferred = new Set(settings.preferredBatchSizes);
  const delayNs = settings.maxQueueDelayUs * 1000;
  const pending: T[] = [];
  let pendingSize = 0;
  let bestSize = 0;
  let bestCount = 0;
  let sendNow = false;
  let stopReason = "";
  let oldestNs = Number.POSITIVE_INFINITY;
  for (const entry of entries) {
    const size = Math.max(1, entry.batchSize);
    if (pending.length > 0) {
      if (pendingSize + size > maxPreferred && bestSize === 0) {
        bestSize = pendingSize;
        bestCount = pending.length;
      }
      if (pendingSize + size > settings.maxBatchSize) {
        sendNow = true;
        stopReason = `next request (batch ${size}) would exceed max_batch_size ${settings.maxBatchSize}`;
        break;
      }
      if (entry.shapeKey !== pending[0]!.shapeKey) {
        sendNow = true;
        stopReason = "next request has different input shapes";
        break;
      }
    }
    pending.push(entry);
    pendingSize += size;
    oldestNs = Math.min(oldestNs, entry.enqueueNs);
    if (preferred.has(pendingSize)) {
      bestSize = pendingSize;
      bestCount = pending.length;
    }
  }
  if (pending.length === 0) return { kind: "empty" };
  const waitedNs = nowNs - oldestNs;
  const delayExceeded = delayNs !== 0 && waitedNs >= delayNs;
  const send = (count: number, size: number, reason: string): BatchDecision<T> => ({
    kind: "send",
    entries: pending.slice(0, count),
    batchSize: size,
    reason,
  });
  if (bestSize !== 0 && !delayExceeded) {
    return send(bestCount, bestSize, `preferred batch size ${bestSize} reached`);
  }
  if (sendNow) return send(pending.length, pendingSize, stopReason);
  if (pendingSize >= maxPreferred) {
    return send(pending.length, pendingSize, `batch ${pendingSize} reached the largest preferred size`);
  }
  if (delayExceeded) {
    return send(
      pending.length,
      pendingSize,
      `oldest request waited ${waitedNs / 1000} us >= max_queue_delay ${settings.maxQueueDelayUs} us`,
    );
  }
  if (delayNs === 0)
    return send(pending.length, pendingSize, "no max_queue_delay_microseconds: send what is queued");
  let waitNs = delayNs - waitedNs;
  if (closestTimeoutNs !== 0)
    waitNs = nowNs <= closestTimeoutNs ? Math.min(closestTimeoutNs - nowNs, waitNs) : 1000;
  return {
    kind: "wait",
    waitUs: Math.max(1, Math.ceil(waitNs / 1000)),
    reason: `batch ${pendingSize} below preferred sizes [${settings.preferredBatchSizes.join(",")}], oldest waited ${waitedNs / 1000} us`,
  };
}
