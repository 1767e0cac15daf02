// What a benchmark reads from tbench-server's statistics extension (GET /v2/models/{m}/stats, through
// @tbench/client) around a run: requests answered, batches run and their sizes, and the instance's compute time per
// batch size. Two snapshots give the run's batching figures: the average batch, and the instance's busy
// fraction (the time its session spent running batches, batch_stats' compute_infer, over the wall time
// between the snapshots; with one instance, the share of the run it spent on batches rather than waiting for
// one). compute_input and compute_output are left out: they include the main thread's batch assembly and
// split, which overlap the instance's run of another batch where an instance holds two.
import type { InferenceClient } from "@tbench/client";

/** One batch size's executions and their session run time (compute_infer), ns. */
export interface BatchSizeTotals {
  executions: number;
  inferNs: number;
}

/** The counters of one model version at one moment. */
export interface StatsSnapshot {
  atMs: number;
  succeeded: number;
  executions: number;
  rows: number;
  /** Summed queue time of the answered requests, ns. */
  queueNs: number;
  bySize: Map<number, BatchSizeTotals>;
}

/** Reads the statistics of `model` through `client` (@tbench/client, HTTP). */
export async function readStats(
  client: Pick<InferenceClient, "modelStatistics">,
  model: string,
): Promise<StatsSnapshot> {
  const stats = (await client.modelStatistics(model))[0];
  if (stats === undefined) throw new Error(`stats of ${model}: no model_stats`);
  const bySize = new Map<number, BatchSizeTotals>();
  for (const entry of stats.batchStats) {
    bySize.set(entry.batchSize, { executions: entry.computeInfer.count, inferNs: entry.computeInfer.ns });
  }
  return {
    atMs: performance.now(),
    succeeded: stats.inferenceStats.success.count,
    executions: stats.executionCount,
    rows: stats.inferenceCount,
    queueNs: stats.inferenceStats.queue.ns,
    bySize,
  };
}

/** What happened between two snapshots. */
export interface BatchingFigures {
  requests: number;
  executions: number;
  /** Rows per batch run. */
  averageBatch: number;
  /** Batches run per batch size. */
  executionsBySize: Record<number, number>;
  /** The session's run time over the wall time (one instance: its busy share). */
  busyFraction: number;
  /** Average time a request waited in the queue before its batch started, µs. */
  queueUsPerRequest: number;
  wallMs: number;
}

export function batchingBetween(before: StatsSnapshot, after: StatsSnapshot): BatchingFigures {
  const executionsBySize: Record<number, number> = {};
  let inferNs = 0;
  for (const [size, totals] of after.bySize) {
    const earlier = before.bySize.get(size) ?? { executions: 0, inferNs: 0 };
    const executions = totals.executions - earlier.executions;
    if (executions > 0) executionsBySize[size] = executions;
    inferNs += totals.inferNs - earlier.inferNs;
  }
  const requests = after.succeeded - before.succeeded;
  const executions = after.executions - before.executions;
  const wallMs = after.atMs - before.atMs;
  return {
    requests,
    executions,
    averageBatch: executions > 0 ? (after.rows - before.rows) / executions : Number.NaN,
    executionsBySize,
    busyFraction: inferNs / 1e6 / wallMs,
    queueUsPerRequest: requests > 0 ? (after.queueNs - before.queueNs) / 1000 / requests : Number.NaN,
    wallMs,
  };
}
