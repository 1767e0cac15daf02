// The load driver's lifetime within a run, as perf_analyzer's load manager lives around its profiler:
// warm up at the first level (requests that are sent, not measured), keep the load going while the levels
// are profiled, then stop it. Closing it is the prepared run's, which created it.
import type { LoadDriver, LoadLevel } from "../load/load-driver.js";

/** How often warmup checks whether its requests have completed. */
const WARMUP_POLL_MS = 10;

/** Options of {@link driveLoad}. */
export interface DriveLoadOptions {
  /** Where warmup runs: the sweep's first level (`undefined`: nothing to measure, no warmup). */
  warmupLevel: LoadLevel | undefined;
  /** `--warmup-request-count` (0: none). */
  warmupRequestCount: number;
  signal: AbortSignal;
}

/** Sends the warmup requests at `level` and waits for them (or for an interrupt); discards what they measured. */
async function warmUp(driver: LoadDriver, level: LoadLevel, requests: number, signal: AbortSignal) {
  await driver.setBudget(requests);
  await driver.apply(level);
  while (driver.completedCount() < requests && !signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, WARMUP_POLL_MS));
  }
  await driver.collect();
}

/** Warms up, runs `measure` while the driver generates load, then stops the load; returns what `measure` returned. */
export async function driveLoad<T>(
  driver: LoadDriver,
  options: DriveLoadOptions,
  measure: () => Promise<T>,
): Promise<T> {
  if (options.warmupRequestCount > 0 && options.warmupLevel !== undefined) {
    await warmUp(driver, options.warmupLevel, options.warmupRequestCount, options.signal);
  }
  const measured = await measure();
  await driver.stop();
  return measured;
}
