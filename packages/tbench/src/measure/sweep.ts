import type { LoadLevel } from "../load/load-driver.js";
import type { LevelResult } from "./level-profiler.js";

/** The levels to visit, perf_analyzer's `start:end:step` (end 0: until the latency threshold). */
export interface SweepRange {
  mode: LoadLevel["mode"];
  start: number;
  end: number;
  step: number;
}

/** Options of {@link runSweep}. */
export interface SweepOptions {
  range: SweepRange;
  binarySearch: boolean;
  stopOnError: boolean;
  signal: AbortSignal;
  profile(level: LoadLevel): Promise<LevelResult>;
}

/**
 * Whether a level passes in a binary search: stable (or accepted by the async fallback), under the latency
 * threshold and under the error-rate limit. perf_analyzer's `meets_threshold` is false for an unstable
 * level too, so the search goes below a level it could not measure reliably.
 */
export function meetsThreshold(result: LevelResult): boolean {
  return result.status === "ok";
}

/** Whether the sweep must stop after this level. */
function stopsSweep(result: LevelResult, stopOnError: boolean): boolean {
  if (result.status === "latency_threshold" || result.status === "interrupted") return true;
  if (stopOnError && (result.status === "error_rate" || result.status === "no_data")) return true;
  return false;
}

function round(mode: LoadLevel["mode"], value: number): number {
  // Concurrency is a whole number of contexts; rates keep 6 decimals so 0.1 steps do not drift.
  return mode === "concurrency" ? Math.round(value) : Math.round(value * 1e6) / 1e6;
}

/** The middle of a binary search step: perf_analyzer's `(end + start) / 2`, an integer division for concurrency. */
function middle(mode: LoadLevel["mode"], low: number, high: number): number {
  return mode === "concurrency" ? Math.floor((low + high) / 2) : round(mode, (low + high) / 2);
}

/**
 * Visits the levels: linearly from start to end by step (end 0: until a level goes over the latency
 * threshold), or by binary search between start and end with step as the precision, as perf_analyzer does
 * (start must pass, then end must fail, then halve until the bracket is no wider than step). Unlike
 * perf_analyzer, an unstable level does not end a linear sweep; a level over the error-rate limit is marked
 * failed and the sweep goes on unless `stopOnError`.
 */
export async function runSweep(options: SweepOptions): Promise<LevelResult[]> {
  const { range, signal } = options;
  const results: LevelResult[] = [];
  const visit = async (value: number) => {
    const result = await options.profile({ mode: range.mode, value: round(range.mode, value) });
    results.push(result);
    return result;
  };

  if (!options.binarySearch) {
    for (let value = range.start; range.end === 0 || value <= range.end + 1e-9; value += range.step) {
      if (signal.aborted) break;
      const result = await visit(value);
      if (stopsSweep(result, options.stopOnError)) break;
    }
    return results;
  }

  let low = range.start;
  let high = range.end;
  const first = await visit(low);
  if (!meetsThreshold(first) || signal.aborted) return results;
  const last = await visit(high);
  if (meetsThreshold(last) || signal.aborted) return results;
  while (high - low > range.step && !signal.aborted) {
    const mid = middle(range.mode, low, high);
    if (mid === low || mid === high) break;
    const result = await visit(mid);
    if (meetsThreshold(result)) low = mid;
    else high = mid;
  }
  return results;
}
