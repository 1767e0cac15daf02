/** Distribution of the gaps between sends in request-rate mode (perf_analyzer's `--request-distribution`). */
export type RequestDistribution = "constant" | "poisson";

/** A repeating sequence of gaps between consecutive sends, in milliseconds. */
export interface SendSchedule {
  /** The gaps, looped over when the run outlasts them. */
  readonly intervalsMs: Float64Array;
  /** Average rate the schedule produces, requests per second. */
  readonly ratePerSec: number;
}

/**
 * A small seeded PRNG (mulberry32): the same seed gives the same sequence on every machine and Node version,
 * which is what makes a Poisson schedule reproducible. Returns numbers in [0, 1).
 */
export function createSeededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Options of {@link createRateSchedule}. */
export interface RateScheduleOptions {
  ratePerSec: number;
  distribution: RequestDistribution;
  /** Seed of the Poisson gaps; ignored for `constant`. */
  seed: number;
  /** How many gaps to precompute before looping (Poisson); default 16384. */
  length?: number;
}

/**
 * Precomputes the send schedule for a request rate: constant gaps of `1000 / rate` ms, or exponentially
 * distributed gaps with that mean (a Poisson arrival process), drawn from a seeded generator.
 */
export function createRateSchedule(options: RateScheduleOptions): SendSchedule {
  const { ratePerSec, distribution, seed } = options;
  if (!(ratePerSec > 0) || !Number.isFinite(ratePerSec)) {
    throw new RangeError(`request rate must be a positive number, got ${ratePerSec}`);
  }
  const meanMs = 1000 / ratePerSec;
  if (distribution === "constant") {
    return { intervalsMs: Float64Array.of(meanMs), ratePerSec };
  }
  const length = options.length ?? 16384;
  const random = createSeededRandom(seed);
  const intervalsMs = new Float64Array(length);
  for (let i = 0; i < length; i++) {
    // Inverse transform sampling; 1 - u is in (0, 1], so the log is finite.
    intervalsMs[i] = -Math.log(1 - random()) * meanMs;
  }
  return { intervalsMs, ratePerSec };
}

/**
 * Parses a `--request-intervals` file: one gap in microseconds per line (perf_analyzer's format); blank
 * lines are skipped. Throws naming the line that is not a non-negative number.
 */
export function parseRequestIntervals(text: string, source = "request intervals file"): SendSchedule {
  const gaps: number[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? "").trim();
    if (line === "") continue;
    const us = Number(line);
    if (!Number.isFinite(us) || us < 0) {
      throw new Error(
        `${source}, line ${i + 1}: expected a non-negative number of microseconds, got "${line}"`,
      );
    }
    gaps.push(us / 1000);
  }
  if (gaps.length === 0) throw new Error(`${source}: expected at least one interval, the file has none`);
  const totalMs = gaps.reduce((a, b) => a + b, 0);
  if (totalMs <= 0)
    throw new Error(`${source}: the intervals add up to 0 microseconds; give at least one > 0`);
  return { intervalsMs: Float64Array.from(gaps), ratePerSec: (gaps.length * 1000) / totalMs };
}

/**
 * Returns a schedule whose sends are shifted by `fraction` of one average gap, so that N workers each
 * running a constant schedule at rate R/N with fractions 0, 1/N, ... together send at an even rate R.
 */
export function phaseShift(
  schedule: SendSchedule,
  fraction: number,
): { schedule: SendSchedule; firstDelayMs: number } {
  return { schedule, firstDelayMs: (1000 / schedule.ratePerSec) * fraction };
}
