import type { BenchConfig } from "../run/bench-config.js";
import { UsageError } from "../run/usage-error.js";
import { type Objective, parseDurationMs, parseLatencyBudget } from "../tune/objective.js";
import type { TuneOptions } from "../tune/run-tune.js";
import { resolveBenchConfig } from "./bench-config.js";

/** Concurrency levels each candidate is swept over when `--concurrency` is not given. */
export const DEFAULT_TUNE_CONCURRENCY = [1, 2, 4, 8, 16, 32] as const;

function optionalString(options: Record<string, unknown>, key: string): string | undefined {
  const value = options[key];
  return typeof value === "string" ? value : undefined;
}

function levels(text: string | undefined): number[] {
  if (text === undefined) return [...DEFAULT_TUNE_CONCURRENCY];
  const parts = text.split(",").map((s) => s.trim());
  const values = parts.map(Number);
  if (parts.some((p, i) => !/^\d+$/.test(p) || (values[i] ?? 0) < 1)) {
    throw new UsageError(
      `--concurrency: expected a list of concurrency levels >= 1 such as 1,2,4,8, got "${text}"`,
    );
  }
  return [...new Set(values)].sort((a, b) => a - b);
}

function positiveNumber(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || value <= 0) {
    throw new UsageError(`${flag}: expected a number > 0, got "${text}"`);
  }
  return value;
}

function wholeNumber(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < 1) {
    throw new UsageError(`${flag}: expected a whole number >= 1, got "${text}"`);
  }
  return value;
}

/**
 * Turns the `tune` subcommand's options into {@link TuneOptions}: the per-candidate sweep goes through
 * tbench's own config resolver (same flags, defaults and checks as a plain run), the tune's flags are
 * checked here. Throws {@link UsageError} naming the flag, what was expected and what was given.
 */
export function resolveTuneOptions(options: Record<string, unknown>): TuneOptions {
  const s = (key: string) => optionalString(options, key);
  const raw: Record<string, unknown> = {};
  for (const key of [
    "model",
    "url",
    "protocol",
    "header",
    "measurementInterval",
    "stabilityPercentage",
    "maxTrials",
    "measurementMode",
    "measurementRequestCount",
    "batchSize",
    "inputData",
    "shape",
    "verbose",
    "warmupRequestCount",
  ]) {
    if (options[key] !== undefined) raw[key] = options[key];
  }
  const resolved = resolveBenchConfig(raw);
  const bench: BenchConfig = Object.freeze({ ...resolved, levels: Object.freeze(levels(s("concurrency"))) });

  const goal = s("goal") ?? "throughput";
  if (goal !== "throughput" && goal !== "latency") {
    throw new UsageError(`--goal: expected throughput or latency, got "${goal}"`);
  }
  const budgetText = s("latencyBudget");
  const objective: Objective = {
    goal,
    budget: budgetText === undefined ? undefined : parseLatencyBudget(budgetText),
    minThroughput: positiveNumber("--min-throughput", s("minThroughput")),
  };
  if (objective.goal === "throughput" && objective.budget === undefined) {
    throw new UsageError(
      "--latency-budget: expected a budget such as p95:10ms with --goal throughput (the default), got none",
    );
  }
  const outputConfig = s("outputConfig");
  const json = s("json");
  if (outputConfig === "") throw new UsageError('--output-config: expected a directory, got ""');
  if (json === "") throw new UsageError('--json: expected a file path, got ""');
  const timeBudget = s("timeBudget");
  const restoreTimeout = s("restoreTimeout");
  return {
    bench,
    search: {
      batching: s("batching"),
      maxQueueDelayUs: s("maxQueueDelayUs"),
      preferredBatchSize: s("preferredBatchSize"),
      maxBatchSize: s("maxBatchSize"),
      instanceCount: s("instanceCount"),
    },
    objective,
    maxRuns: wholeNumber("--max-runs", s("maxRuns")),
    timeBudgetMs: timeBudget === undefined ? undefined : parseDurationMs("--time-budget", timeBudget),
    outputConfigDir: outputConfig,
    jsonFile: json,
    restoreTimeoutMs:
      restoreTimeout === undefined ? 60_000 : parseDurationMs("--restore-timeout", restoreTimeout),
  };
}
