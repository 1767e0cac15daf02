// The one loop over load levels and its one stop rule, as perf_analyzer's inference profiler walks a range:
// every run goes through runSweep, whether it was given a range (linear or binary search) or a list of
// levels, so when a sweep stops does not depend on how its levels were named.
import type { LoadLevel } from "../load/load-driver.js";
import type { LevelResult } from "./level-profiler.js";

/** The levels to visit, perf_analyzer's `start:end:step` (end 0: until the latency threshold). */
export interface SweepRange {
  mode: LoadLevel["mode"];
  start: number;
  end: number;
  step: number;
}

/**
 * Levels named one by one, visited in the order given: the library's `levels` (tbench tune's
 * `--concurrency 1,4,16`), or the one rate a `--request-intervals` file sets.
 */
export interface LevelList {
  mode: LoadLevel["mode"];
  values: readonly number[];
}

/** What a sweep visits: a range to walk, or a list of levels. */
export type SweepLevels = SweepRange | LevelList;

/** Options of {@link runSweep}. */
export interface SweepOptions {
  levels: SweepLevels;
  /** Search a range by bisection instead of walking it; a list is always visited in order. */
  binarySearch: boolean;
  stopOnError: boolean;
  signal: AbortSignal;
  profile(level: LoadLevel): Promise<LevelResult>;
}

function isLevelList(levels: SweepLevels): levels is LevelList {
  return "values" in levels;
}

/** The level a sweep measures first (`undefined` for an empty list): where warmup runs. */
export function firstLevel(levels: SweepLevels): LoadLevel | undefined {
  const value = isLevelList(levels) ? levels.values[0] : levels.start;
  return value === undefined ? undefined : { mode: levels.mode, value };
}

/** The highest level named, perf_analyzer's "limit": a range's larger bound, a list's largest level. */
export function highestLevel(levels: SweepLevels): number {
  return isLevelList(levels) ? Math.max(...levels.values) : Math.max(levels.start, levels.end);
}

/** Whether the sweep has no highest level: a range with end 0 goes on until the latency threshold. */
export function isOpenEnded(levels: SweepLevels): boolean {
  return !isLevelList(levels) && levels.end === 0;
}

/**
 * Whether a level passes in a binary search: stable (or accepted by the async fallback), under the latency
 * threshold and under the error-rate limit. perf_analyzer's `meets_threshold` is false for an unstable
 * level too, so the search goes below a level it could not measure reliably.
 */
export function meetsThreshold(result: LevelResult): boolean {
  return result.status === "ok";
}

/**
 * Whether a sweep visiting levels in order (a linear range or a list) must stop after this level: over the
 * latency threshold, interrupted, or with `stopOnError` a level that failed on errors or got no answer.
 */
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

/** A range's levels from start by step, up to end (or without end when it is 0). */
function* walk(range: SweepRange): Generator<number> {
  for (let value = range.start; range.end === 0 || value <= range.end + 1e-9; value += range.step) {
    yield round(range.mode, value);
  }
}

/**
 * Visits the levels: a list in the order given, a range linearly from start to end by step (end 0: until a
 * level goes over the latency threshold), or by binary search between start and end with step as the
 * precision, as perf_analyzer does (start must pass, then end must fail, then halve until the bracket is no
 * wider than step). Levels visited in order stop on {@link stopsSweep}. Unlike perf_analyzer, an unstable
 * level does not end them; a level over the error-rate limit is marked failed and the sweep goes on unless
 * `stopOnError`.
 */
export async function runSweep(options: SweepOptions): Promise<LevelResult[]> {
  const { levels, signal } = options;
  const results: LevelResult[] = [];
  const visit = async (value: number) => {
    const result = await options.profile({ mode: levels.mode, value });
    results.push(result);
    return result;
  };

  if (isLevelList(levels) || !options.binarySearch) {
    for (const value of isLevelList(levels) ? levels.values : walk(levels)) {
      if (signal.aborted) break;
      const result = await visit(value);
      if (stopsSweep(result, options.stopOnError)) break;
    }
    return results;
  }

  const range = levels;
  let low = range.start;
  let high = range.end;
  const first = await visit(round(range.mode, low));
  if (!meetsThreshold(first) || signal.aborted) return results;
  const last = await visit(round(range.mode, high));
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
