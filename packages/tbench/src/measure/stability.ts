/** What the stability check looks at in one measurement window. */
export interface StabilitySample {
  /** Throughput of the window, inferences per second. */
  inferPerSec: number;
  /**
   * The stabilizing latency: the average, or the `--percentile` latency when one is given (microseconds).
   * `Infinity` for a window in which no request succeeded (perf_analyzer records the largest latency there).
   */
  latencyUs: number;
}

/** Number of consecutive windows that must agree (perf_analyzer's `stability_window`). */
export const STABILITY_WINDOW_COUNT = 3;

/** Whether the largest of the values is at most `1 + threshold` times the smallest. */
function withinRatio(values: readonly number[], threshold: number): boolean {
  const max = Math.max(...values);
  const min = Math.min(...values);
  // Written as perf_analyzer writes it (max / min <= 1 + s): the boundary cases come out the same.
  return max / min <= 1 + threshold;
}

/**
 * perf_analyzer's stability rule (`DetermineStability`, `IsInferWindowStable`, `IsLatencyWindowStable` in
 * `inference_profiler.cc`): the last 3 windows are stable when none had zero throughput, the largest
 * throughput is at most `1 + s` times the smallest, and (when `checkLatency`) the same holds for the
 * stabilizing latency; `s` is `thresholdPercent / 100`. Fewer than 3 windows are never stable.
 */
export function isStable(
  samples: readonly StabilitySample[],
  thresholdPercent: number,
  checkLatency = true,
): boolean {
  if (samples.length < STABILITY_WINDOW_COUNT) return false;
  const recent = samples.slice(-STABILITY_WINDOW_COUNT);
  if (recent.some((s) => s.inferPerSec === 0)) return false;
  const threshold = thresholdPercent / 100;
  if (
    !withinRatio(
      recent.map((s) => s.inferPerSec),
      threshold,
    )
  )
    return false;
  return (
    !checkLatency ||
    withinRatio(
      recent.map((s) => s.latencyUs),
      threshold,
    )
  );
}

/**
 * perf_analyzer's early stop (`IsDoneProfiling`, `CheckWithinThreshold`): once there are 3 windows, it stops
 * measuring a level as soon as any of the last 3 has its stabilizing latency at or over the latency
 * threshold. `thresholdMs` 0 means no threshold.
 */
export function anyOverThreshold(samples: readonly StabilitySample[], thresholdMs: number): boolean {
  if (thresholdMs <= 0 || samples.length < STABILITY_WINDOW_COUNT) return false;
  return samples.slice(-STABILITY_WINDOW_COUNT).some((s) => !(s.latencyUs < thresholdMs * 1000));
}
