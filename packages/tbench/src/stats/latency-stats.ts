/**
 * Exact running moments of latencies (microseconds): count, sum, sum of squares, min, max. The histogram gives
 * percentiles at 3 significant digits; the average and standard deviation come from here, exactly, and two
 * of these add without loss (merge of windows, workers and machines).
 */
export interface LatencyMoments {
  count: number;
  sumUs: number;
  sumSquaresUs2: number;
  minUs: number;
  maxUs: number;
}

/** Creates empty moments. */
export function createLatencyMoments(): LatencyMoments {
  return { count: 0, sumUs: 0, sumSquaresUs2: 0, minUs: Number.POSITIVE_INFINITY, maxUs: 0 };
}

/** Adds one latency (microseconds). */
export function addLatency(moments: LatencyMoments, latencyUs: number): void {
  moments.count += 1;
  moments.sumUs += latencyUs;
  moments.sumSquaresUs2 += latencyUs * latencyUs;
  if (latencyUs < moments.minUs) moments.minUs = latencyUs;
  if (latencyUs > moments.maxUs) moments.maxUs = latencyUs;
}

/** Returns the sum of several moments. */
export function mergeMoments(all: readonly LatencyMoments[]): LatencyMoments {
  const merged = createLatencyMoments();
  for (const m of all) {
    merged.count += m.count;
    merged.sumUs += m.sumUs;
    merged.sumSquaresUs2 += m.sumSquaresUs2;
    merged.minUs = Math.min(merged.minUs, m.minUs);
    merged.maxUs = Math.max(merged.maxUs, m.maxUs);
  }
  return merged;
}

/** Average latency in microseconds (0 when empty). */
export function averageUs(moments: LatencyMoments): number {
  return moments.count === 0 ? 0 : moments.sumUs / moments.count;
}

/** Population standard deviation in microseconds (0 when empty). */
export function standardDeviationUs(moments: LatencyMoments): number {
  if (moments.count === 0) return 0;
  const mean = moments.sumUs / moments.count;
  return Math.sqrt(Math.max(0, moments.sumSquaresUs2 / moments.count - mean * mean));
}
