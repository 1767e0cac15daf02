/** What the stability check looks at in one measurement window. */
export interface StabilitySample {
  /** Throughput of the window, inferences per second. */
  inferPerSec: number;
  /** The stabilizing latency: the average, or the `--percentile` latency when one is given (microseconds). */
  latencyUs: number;
}

/** Number of consecutive windows that must agree (perf_analyzer's stability window). */
export const STABILITY_WINDOW_COUNT = 3;

/**
 * perf_analyzer's stability rule: the last 3 windows are stable when each one's throughput and latency lie
 * within +/- `thresholdPercent` of the average of the three, and no window had zero throughput.
 */
export function isStable(samples: readonly StabilitySample[], thresholdPercent: number): boolean {
  if (samples.length < STABILITY_WINDOW_COUNT) return false;
  const recent = samples.slice(-STABILITY_WINDOW_COUNT);
  const threshold = thresholdPercent / 100;
  const avgIps = recent.reduce((total, s) => total + s.inferPerSec, 0) / recent.length;
  const avgLatency = recent.reduce((total, s) => total + s.latencyUs, 0) / recent.length;
  for (const sample of recent) {
    if (sample.inferPerSec === 0) return false;
    if (sample.inferPerSec < avgIps * (1 - threshold) || sample.inferPerSec > avgIps * (1 + threshold))
      return false;
    if (sample.latencyUs < avgLatency * (1 - threshold) || sample.latencyUs > avgLatency * (1 + threshold)) {
      return false;
    }
  }
  return true;
}

/**
 * perf_analyzer stops trying a level early when none of the last 3 windows came in under the latency
 * threshold: waiting longer will not bring it under. `thresholdMs` 0 means no threshold.
 */
export function hopelesslyOverThreshold(samples: readonly StabilitySample[], thresholdMs: number): boolean {
  if (thresholdMs <= 0 || samples.length < STABILITY_WINDOW_COUNT) return false;
  return samples.slice(-STABILITY_WINDOW_COUNT).every((s) => s.latencyUs >= thresholdMs * 1000);
}
