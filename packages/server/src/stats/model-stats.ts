/**
 * Statistics of one model version with Triton's meaning (statistics extension, infer_stats.cc):
 * per request `success`/`fail` (count 1, ns: request duration), `queue` and the `compute_*` durations of
 * the batch it ran in; per execution `execution_count` + 1, `inference_count` + batch size and one
 * `batch_stats` entry per batch size; per response index of a model that sends several responses (a decoupled
 * model's), `response_stats` as Triton's core aggregates what a backend reports (UpdateResponseSuccess and
 * Fail): compute_infer from the previous response's end (or the request's start) to the output's start,
 * compute_output to the response's end, success or fail or cancel over both. Also what metrics need: failures by reason, and pending requests (Triton's
 * nv_inference_pending_request_count: received and not yet handed to an instance), counted by the scheduler.
 */
import type {
  ModelMetricsSnapshot,
  ModelStatistics,
  ResponseStatistics,
  StatisticDuration,
} from "../core/types.js";

/** Triton's failure reasons (nv_inference_request_failure `reason` label). */
export type FailureReason = "REJECTED" | "CANCELED" | "BACKEND" | "OTHER";

/** Durations of one batch execution, in ns. */
export interface ExecutionTimes {
  readonly computeInputNs: number;
  readonly computeInferNs: number;
  readonly computeOutputNs: number;
}

/** Durations of one response, in ns: making it (the steps since the previous one), then its output. */
export interface ResponseTimes {
  readonly computeInferNs: number;
  readonly computeOutputNs: number;
}

interface MutableDuration {
  count: number;
  ns: number;
}

type ResponseEntry = { -readonly [K in keyof ResponseStatistics]: MutableDuration };

interface BatchEntry {
  compute_input: MutableDuration;
  compute_infer: MutableDuration;
  compute_output: MutableDuration;
}

/**
 * Receives each successful request's durations as it finishes, for metrics that cannot be computed from
 * totals at scrape time (the latency summaries of metrics/latency-summaries.ts).
 */
export interface LatencyObserver {
  requestSucceeded(
    model: string,
    version: string,
    durationNs: number,
    queueNs: number,
    times: ExecutionTimes,
  ): void;
}

/** Collects the statistics of one model version. */
export interface ModelStatsCollector {
  /** Where the pending request count comes from: the scheduler's queue (default: none, 0). */
  setPendingCounter(count: () => number): void;
  /** A request finished successfully. */
  requestSucceeded(durationNs: number, queueNs: number, times: ExecutionTimes, epochMs: number): void;
  /** A request failed after `durationNs`, for Triton's failure `reason`. */
  requestFailed(durationNs: number, reason: FailureReason, epochMs: number): void;
  /**
   * One model execution of `batchSize` rows, `inferences` of them real requests' (default all: the
   * sequence batcher's padding rows count in batch_stats but not in inference_count, as in Triton).
   */
  executed(batchSize: number, times: ExecutionTimes, inferences?: number): void;
  /** Response `index` (0 for a request's first) was sent. */
  responseSent(index: number, times: ResponseTimes): void;
  /** The request failed (or was cancelled) `durationNs` after its response `index - 1` (or its start). */
  responseFailed(index: number, durationNs: number, cancelled: boolean): void;
  /** Seconds the load took. */
  setLoadDuration(seconds: number): void;
  statistics(): ModelStatistics;
  metrics(): ModelMetricsSnapshot;
}

const zero = (): MutableDuration => ({ count: 0, ns: 0 });
const add = (d: MutableDuration, ns: number) => {
  d.count += 1;
  d.ns += Math.max(0, Math.round(ns));
};
const freeze = (d: MutableDuration): StatisticDuration => ({ count: d.count, ns: d.ns });

/** Creates the collector for `model` version `version`; `observer` also sees every success. */
export function createModelStats(
  model: string,
  version: string,
  observer?: LatencyObserver,
): ModelStatsCollector {
  let lastInference = 0;
  let inferenceCount = 0;
  let executionCount = 0;
  let pending = () => 0;
  let loadDurationSecs = 0;
  const stats = {
    success: zero(),
    fail: zero(),
    queue: zero(),
    compute_input: zero(),
    compute_infer: zero(),
    compute_output: zero(),
  };
  const failures: Record<FailureReason, number> = { REJECTED: 0, CANCELED: 0, BACKEND: 0, OTHER: 0 };
  const batches = new Map<number, BatchEntry>();
  const responses = new Map<number, ResponseEntry>();
  const responseEntry = (index: number): ResponseEntry => {
    let entry = responses.get(index);
    if (entry === undefined) {
      entry = {
        compute_infer: zero(),
        compute_output: zero(),
        success: zero(),
        fail: zero(),
        empty_response: zero(),
        cancel: zero(),
      };
      responses.set(index, entry);
    }
    return entry;
  };
  return {
    setPendingCounter(count) {
      pending = count;
    },
    requestSucceeded(durationNs, queueNs, times, epochMs) {
      add(stats.success, durationNs);
      add(stats.queue, queueNs);
      add(stats.compute_input, times.computeInputNs);
      add(stats.compute_infer, times.computeInferNs);
      add(stats.compute_output, times.computeOutputNs);
      lastInference = Math.max(lastInference, epochMs);
      observer?.requestSucceeded(model, version, durationNs, queueNs, times);
    },
    requestFailed(durationNs, reason, epochMs) {
      add(stats.fail, durationNs);
      failures[reason]++;
      lastInference = Math.max(lastInference, epochMs);
    },
    executed(batchSize, times, inferences = batchSize) {
      executionCount++;
      inferenceCount += inferences;
      let entry = batches.get(batchSize);
      if (!entry) {
        entry = { compute_input: zero(), compute_infer: zero(), compute_output: zero() };
        batches.set(batchSize, entry);
      }
      add(entry.compute_input, times.computeInputNs);
      add(entry.compute_infer, times.computeInferNs);
      add(entry.compute_output, times.computeOutputNs);
    },
    responseSent(index, times) {
      const entry = responseEntry(index);
      add(entry.compute_infer, times.computeInferNs);
      add(entry.compute_output, times.computeOutputNs);
      add(entry.success, times.computeInferNs + times.computeOutputNs);
    },
    responseFailed(index, durationNs, cancelled) {
      const entry = responseEntry(index);
      if (cancelled) add(entry.cancel, durationNs);
      else {
        add(entry.compute_infer, durationNs);
        add(entry.fail, durationNs);
      }
    },
    setLoadDuration(seconds) {
      loadDurationSecs = seconds;
    },
    statistics() {
      return {
        name: model,
        version,
        last_inference: lastInference,
        inference_count: inferenceCount,
        execution_count: executionCount,
        inference_stats: {
          success: freeze(stats.success),
          fail: freeze(stats.fail),
          queue: freeze(stats.queue),
          compute_input: freeze(stats.compute_input),
          compute_infer: freeze(stats.compute_infer),
          compute_output: freeze(stats.compute_output),
          cache_hit: { count: 0, ns: 0 },
          cache_miss: { count: 0, ns: 0 },
        },
        response_stats: Object.fromEntries(
          [...responses.entries()]
            .sort(([a], [b]) => a - b)
            .map(([index, entry]) => [
              String(index),
              {
                compute_infer: freeze(entry.compute_infer),
                compute_output: freeze(entry.compute_output),
                success: freeze(entry.success),
                fail: freeze(entry.fail),
                empty_response: freeze(entry.empty_response),
                cancel: freeze(entry.cancel),
              },
            ]),
        ),
        batch_stats: [...batches.entries()]
          .sort(([a], [b]) => a - b)
          .map(([batchSize, entry]) => ({
            batch_size: batchSize,
            compute_input: freeze(entry.compute_input),
            compute_infer: freeze(entry.compute_infer),
            compute_output: freeze(entry.compute_output),
          })),
        memory_usage: [],
      };
    },
    metrics() {
      return {
        model,
        version,
        pendingRequests: pending(),
        failuresByReason: { ...failures },
        loadDurationSecs,
      };
    },
  };
}
