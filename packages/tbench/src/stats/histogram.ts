import hdr from "hdr-histogram-js";

/** An HDR histogram of latencies in microseconds (hdr-histogram-js, 64-bit buckets, 3 significant digits). */
export type LatencyHistogram = hdr.Histogram;

/** Highest latency tracked without resizing: one hour in microseconds (the histogram auto-resizes past it). */
const HIGHEST_TRACKABLE_US = 3_600_000_000;

/** Creates an empty latency histogram (values in microseconds, resolution 3 significant digits). */
export function createLatencyHistogram(): LatencyHistogram {
  return hdr.build({
    bitBucketSize: 64,
    numberOfSignificantValueDigits: 3,
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_TRACKABLE_US,
    autoResize: true,
    useWebAssembly: false,
  });
}

/**
 * Encodes a histogram losslessly (HdrHistogram's compressed V2 encoding, base64), the form tbench writes into
 * `--json` results so that `tbench merge` can add histograms bucket by bucket.
 */
export function encodeHistogram(histogram: LatencyHistogram): string {
  return hdr.encodeIntoCompressedBase64(histogram);
}

/** Decodes a histogram written by {@link encodeHistogram}. Throws a clear error for anything else. */
export function decodeHistogram(encoded: string): LatencyHistogram {
  let decoded: LatencyHistogram;
  try {
    decoded = hdr.decodeFromCompressedBase64(encoded, 64, false);
  } catch (cause) {
    throw new Error(
      `expected a compressed base64 HDR histogram, got ${JSON.stringify(encoded.slice(0, 24))}...`,
      {
        cause,
      },
    );
  }
  // Decoded histograms may come back with a narrower range; copy into a standard one so later adds never throw.
  const result = createLatencyHistogram();
  result.add(decoded);
  return result;
}

/** Returns a new histogram holding the values of all the given ones (exact: bucket counts are added). */
export function mergeHistograms(histograms: readonly LatencyHistogram[]): LatencyHistogram {
  const merged = createLatencyHistogram();
  for (const histogram of histograms) merged.add(histogram);
  return merged;
}

/** The percentiles tbench always reports, in perf_analyzer's order, plus p99.9. */
export const STANDARD_PERCENTILES: readonly number[] = [50, 90, 95, 99, 99.9];

/** Latency percentiles in microseconds keyed by percentile (e.g. `{ "50": 812, "99.9": 2401 }`). */
export type PercentileMap = Record<string, number>;

/** Reads the given percentiles (0 < p <= 100) from a histogram; an empty histogram yields zeros. */
export function readPercentiles(histogram: LatencyHistogram, percentiles: readonly number[]): PercentileMap {
  const result: PercentileMap = {};
  for (const p of percentiles) {
    result[String(p)] = histogram.totalCount === 0 ? 0 : histogram.getValueAtPercentile(p);
  }
  return result;
}
