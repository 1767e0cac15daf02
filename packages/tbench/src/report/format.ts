/**
 * Formats a number the way C++ iostreams print a double by default (6 significant digits, trailing zeros
 * dropped, exponent with at least two digits): perf_analyzer's throughput figures look like this.
 */
export function formatCppDouble(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return "0";
  const exponent = Math.floor(Math.log10(Math.abs(value)));
  if (exponent < -5 || exponent >= 6) {
    const [mantissa = "0", exp = "0"] = value.toExponential(5).split("e");
    const trimmed = mantissa.includes(".") ? mantissa.replace(/0+$/, "").replace(/\.$/, "") : mantissa;
    const sign = exp.startsWith("-") ? "-" : "+";
    const digits = exp.replace(/^[+-]/, "").padStart(2, "0");
    return `${trimmed}e${sign}${digits}`;
  }
  const fixed = value.toPrecision(6);
  return fixed.includes(".") ? fixed.replace(/0+$/, "").replace(/\.$/, "") : fixed;
}

/** Whole microseconds, truncated as perf_analyzer's integer division does. */
export function usec(value: number): number {
  return Math.max(0, Math.floor(value));
}

/** Label of a percentile key: 50 -> "p50", 99.9 -> "p99.9". */
export function percentileLabel(percentile: number | string): string {
  return `p${percentile}`;
}
