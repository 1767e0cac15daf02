/**
 * `--metrics-config <setting>=<value>` (repeatable), Triton's settings for the per-model latency families
 * (server command_line_parser.cc, core metric_model_reporter.cc): `counter_latencies=false` drops the
 * `*_duration_us` counters, `summary_latencies=true` adds the `*_summary_us` summaries, and
 * `summary_quantiles=<q>:<error>,...` sets their quantiles. As in Triton, other settings are accepted
 * and have no effect, and a value other than the one that switches a family leaves it as it is.
 */

/** One requested quantile and the error Triton's summary allows around it. */
export interface SummaryQuantile {
  readonly quantile: number;
  readonly error: number;
}

/** The latency families to publish. */
export interface MetricsConfig {
  /** Default true: the `nv_inference_*_duration_us` counters. */
  readonly counterLatencies: boolean;
  /** Default false: the `nv_inference_*_summary_us` summaries. */
  readonly summaryLatencies: boolean;
  readonly summaryQuantiles: readonly SummaryQuantile[];
}

/** Triton's default quantiles (metric_model_reporter.h). */
export const DEFAULT_SUMMARY_QUANTILES: readonly SummaryQuantile[] = [
  { quantile: 0.5, error: 0.05 },
  { quantile: 0.9, error: 0.01 },
  { quantile: 0.95, error: 0.001 },
  { quantile: 0.99, error: 0.001 },
  { quantile: 0.999, error: 0.001 },
];

export const DEFAULT_METRICS_CONFIG: MetricsConfig = {
  counterLatencies: true,
  summaryLatencies: false,
  summaryQuantiles: DEFAULT_SUMMARY_QUANTILES,
};

/** A `--metrics-config` argument that cannot be read; the message names it. */
export class MetricsConfigFlagError extends Error {
  override readonly name = "MetricsConfigFlagError";
}

const formatError = (arg: string) =>
  new MetricsConfigFlagError(`--metrics-config option format is <setting>=<value>. Got ${arg}`);

/** One quantile pair; a quantile or error outside (0, 1) is refused (Triton logs and skips it). */
function parseQuantile(pair: string, arg: string): SummaryQuantile {
  const [q, e, extra] = pair.split(":");
  const quantile = Number(q);
  const error = Number(e);
  const inUnit = (x: number) => Number.isFinite(x) && x > 0 && x < 1;
  if (extra !== undefined || q === undefined || e === undefined || !inUnit(quantile) || !inUnit(error))
    throw new MetricsConfigFlagError(
      `--metrics-config ${arg}: expected <quantile>:<error> pairs with both in (0, 1), got '${pair}'`,
    );
  return { quantile, error };
}

/** Parses every `--metrics-config` argument in order; a later setting overrides an earlier one. */
export function parseMetricsConfig(args: readonly string[]): MetricsConfig {
  let config = DEFAULT_METRICS_CONFIG;
  for (const arg of args) {
    const equals = arg.indexOf("=");
    // Triton reserves `<group>,` before the setting and supports no group yet.
    if (equals <= 0 || arg.slice(0, equals).includes(",") || equals === arg.length - 1)
      throw formatError(arg);
    const setting = arg.slice(0, equals);
    const value = arg.slice(equals + 1);
    if (setting === "counter_latencies" && value === "false") config = { ...config, counterLatencies: false };
    if (setting === "summary_latencies" && value === "true") config = { ...config, summaryLatencies: true };
    if (setting === "summary_quantiles")
      config = { ...config, summaryQuantiles: value.split(",").map((pair) => parseQuantile(pair, arg)) };
  }
  return config;
}
