/**
 * Statistics of an ensemble as Triton keeps them (core ensemble_scheduler.cc RequestTracker, infer_stats.cc):
 * the ensemble request is counted once, when its last step finishes. On success: `success` (count 1, ns from
 * arrival to answer), `queue` (from entering the ensemble scheduler to its steps being set up, next to
 * nothing), and `compute_input/infer/output` as the sums of its member requests' compute times, which each
 * member request reports to a per-request collector (Triton's secondary stats aggregator); then one
 * execution of max(1, batch size) rows (`inference_count`, `execution_count`, `batch_stats`). On failure:
 * `fail` with reason OTHER, whatever failed. Each member counts its own request, queue and compute on
 * its own statistics, as for any request.
 *
 * Both sinks below are method subsets of stats/model-stats.ts ModelStatsCollector, so the ensemble version's
 * collector and a member's per-request report plug in as they are.
 */
import type { ExecutionTimes, FailureReason } from "../stats/model-stats.js";

/** Where the ensemble's own statistics go (the ensemble version's ModelStatsCollector fits). */
export interface EnsembleStatsSink {
  requestSucceeded(durationNs: number, queueNs: number, times: ExecutionTimes, epochMs: number): void;
  requestFailed(durationNs: number, reason: FailureReason, epochMs: number): void;
  executed(batchSize: number, times: ExecutionTimes): void;
}

/**
 * What a member request reports back to its ensemble request when it succeeds: the member scheduler calls
 * it with the same arguments it gives its own collector's requestSucceeded. Failed member requests report
 * nothing (the ensemble request fails as a whole).
 */
export interface MemberStatsSink {
  requestSucceeded(durationNs: number, queueNs: number, times: ExecutionTimes, epochMs: number): void;
}

/** Sums the compute times of one ensemble request's member requests. */
export interface ComputeTotals extends MemberStatsSink {
  totals(): ExecutionTimes;
}

export function createComputeTotals(): ComputeTotals {
  let computeInputNs = 0;
  let computeInferNs = 0;
  let computeOutputNs = 0;
  return {
    requestSucceeded(_durationNs, _queueNs, times) {
      computeInputNs += times.computeInputNs;
      computeInferNs += times.computeInferNs;
      computeOutputNs += times.computeOutputNs;
    },
    totals: () => ({ computeInputNs, computeInferNs, computeOutputNs }),
  };
}
