import { readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { InferenceClient } from "@tbench/client";
import { buildRequestData, type InputDataFile, type InputMetadata } from "../load/input-data.js";
import {
  createLocalLoadDriver,
  type LoadDriver,
  type LoadLevel,
  type RateSettings,
} from "../load/load-driver.js";
import { parseRequestIntervals } from "../load/schedule.js";
import { createSender, SENDER_MODULE_URL, type SenderSpec } from "../load/sender-factory.js";
import { createTransportClient, type TransportSpec } from "../load/transport.js";
import { createWorkerLoadDriver } from "../load/worker-driver.js";
import { createLevelProfiler, type LevelResult } from "../measure/level-profiler.js";
import { createMetricsScraper } from "../measure/metrics-scraper.js";
import { createOverheadMonitor } from "../measure/overhead-monitor.js";
import { type ModelTree, snapshotFromStatistics } from "../measure/server-stats.js";
import { runSweep } from "../measure/sweep.js";
import {
  formatFinalSummary,
  formatLevelSummary,
  formatSettings,
  levelHeading,
} from "../report/console-summary.js";
import { formatComposingCsvs, formatCsv } from "../report/csv-report.js";
import { toResultJson } from "../report/json-result.js";
import { formatProfileExport } from "../report/profile-export.js";
import { createProgressLine, type ProgressStream } from "../report/progress-line.js";
import { formatSweepTable } from "../report/sweep-table.js";
import { STANDARD_PERCENTILES } from "../stats/histogram.js";
import type { BenchConfig } from "./bench-config.js";
import { readGrpcTls } from "./grpc-tls-files.js";
import { explainModelError } from "./model-availability.js";
import { UsageError } from "./usage-error.js";
import { findValidationMismatch } from "./validation-check.js";

/** Where a run writes, and how it is interrupted. */
export interface RunIo {
  stdout: ProgressStream;
  stderr: ProgressStream;
  /** Aborted on Ctrl-C: the current window ends, what was measured is reported. */
  signal: AbortSignal;
  /**
   * Client for metadata, config and statistics (tests may pass their own); default: `@tbench/client` over
   * the run's transport (`-i`).
   */
  createClient?: ((url: string, headers: Record<string, string>) => InferenceClient) | undefined;
  version: string;
  /** Called as each level starts (tbench tune's progress line). */
  onLevel?: ((level: LoadLevel) => void) | undefined;
}

/** The result of a run: every level, and the exit code tbench should end with. */
export interface RunOutcome {
  results: LevelResult[];
  exitCode: number;
}

/** Reads the model's composing models (ensembles), recursively, from the model configs. */
async function modelTree(
  client: InferenceClient,
  name: string,
  version: string,
  depth = 0,
): Promise<ModelTree> {
  const tree: ModelTree = { name, version, composing: [] };
  if (depth > 8) return tree;
  const config = (await client.modelConfig(name, version === "" ? undefined : version)) as {
    platform?: string;
    ensemble_scheduling?: { step?: { model_name?: string; model_version?: number | string }[] };
  };
  if (config.platform !== "ensemble") return tree;
  for (const step of config.ensemble_scheduling?.step ?? []) {
    if (step.model_name === undefined || tree.composing.some((c) => c.name === step.model_name)) continue;
    const stepVersion =
      step.model_version === undefined || Number(step.model_version) < 0 ? "" : String(step.model_version);
    tree.composing.push(await modelTree(client, step.model_name, stepVersion, depth + 1));
  }
  return tree;
}

async function readInputFiles(paths: readonly string[]): Promise<InputDataFile[]> {
  return Promise.all(
    paths.map(async (path) => {
      let text: string;
      try {
        text = await readFile(path, "utf8");
      } catch (error) {
        throw new UsageError(`--input-data ${path}: cannot read the file (${(error as Error).message})`);
      }
      try {
        return { path, json: JSON.parse(text) as unknown };
      } catch {
        throw new UsageError(
          `--input-data ${path}: expected perf_analyzer's JSON input format, the file is not JSON`,
        );
      }
    }),
  );
}

function levelsOf(config: BenchConfig, rateFromIntervals: number | undefined): number[] | undefined {
  if (config.levels !== undefined) return [...config.levels];
  if (rateFromIntervals !== undefined) return [rateFromIntervals];
  return undefined;
}

/**
 * Runs a benchmark as configured: reads the model's metadata and config, builds inputs, generates load
 * level by level, measures, prints perf_analyzer's summaries and the sweep table, and writes the files
 * asked for. Never throws for failed requests; throws for setup problems (unreachable server, bad input).
 */
export async function runBenchmark(config: BenchConfig, io: RunIo): Promise<RunOutcome> {
  const print = (text: string) => io.stdout.write(text);
  const warn = (text: string) => io.stderr.write(`${text}\n`);
  const transport: TransportSpec = {
    protocol: config.protocol,
    url: config.url,
    headers: { ...config.headers },
    compression: config.grpcCompression,
    tls: config.grpcSsl === undefined ? undefined : await readGrpcTls(config.grpcSsl),
  };
  const client =
    io.createClient !== undefined
      ? io.createClient(config.url, { ...config.headers })
      : createTransportClient(transport, { connections: 4, maxRetries: 2 });
  let driver: LoadDriver | undefined;
  const scraper = config.collectMetrics
    ? createMetricsScraper({
        url: config.metricsUrl,
        intervalMs: config.metricsIntervalMs,
        model: config.model,
      })
    : undefined;
  const overhead = createOverheadMonitor({ loadThreads: config.workers });
  try {
    const metadata = await client
      .modelMetadata(config.model, config.modelVersion)
      .catch(async (error: unknown) => {
        throw await explainModelError(client, config.model, config.modelVersion, error, io.signal);
      });
    const modelConfig = (await client.modelConfig(config.model, config.modelVersion)) as {
      max_batch_size?: number;
    };
    const maxBatchSize = Number(modelConfig.max_batch_size ?? 0);
    let requests: ReturnType<typeof buildRequestData>;
    try {
      requests = buildRequestData({
        model: config.model,
        inputs: metadata.inputs as readonly InputMetadata[],
        maxBatchSize,
        batchSize: config.batchSize,
        shapes: config.shapes,
        source:
          typeof config.inputData === "string" ? config.inputData : await readInputFiles(config.inputData),
        stringLength: config.stringLength,
        stringData: config.stringData,
        seed: config.seed,
      });
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError((error as Error).message);
    }
    if (requests.some((request) => request.expected !== undefined)) {
      const mismatch = await findValidationMismatch({
        client,
        model: config.model,
        modelVersion: config.modelVersion,
        requests,
        binaryInputs: config.inputTensorFormat === "binary",
        binaryOutputs: config.outputTensorFormat === "binary",
        batchSize: config.batchSize,
        signal: io.signal,
      });
      if (mismatch !== undefined) warn(mismatch);
    }
    const tree = await modelTree(client, config.model, config.modelVersion ?? "");
    let statsAvailable = true;
    const readStats = async () => {
      const ensemble = tree.composing.length > 0;
      const stats = await client.modelStatistics(
        ensemble ? undefined : config.model,
        ensemble ? undefined : config.modelVersion,
      );
      return snapshotFromStatistics(stats);
    };
    try {
      await readStats();
    } catch {
      statsAvailable = false;
      warn("Server statistics are not available: the report has client-side figures only.");
    }

    let customIntervalsMs: Float64Array | undefined;
    let rateFromIntervals: number | undefined;
    if (config.requestIntervalsFile !== undefined) {
      let text: string;
      try {
        text = await readFile(config.requestIntervalsFile, "utf8");
      } catch (error) {
        throw new UsageError(
          `--request-intervals ${config.requestIntervalsFile}: cannot read the file (${(error as Error).message})`,
        );
      }
      let schedule: ReturnType<typeof parseRequestIntervals>;
      try {
        schedule = parseRequestIntervals(text, `--request-intervals ${config.requestIntervalsFile}`);
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
      customIntervalsMs = schedule.intervalsMs;
      rateFromIntervals = Math.round(schedule.ratePerSec * 1000) / 1000;
    }
    const explicitLevels = levelsOf(config, rateFromIntervals);
    const maxLevel =
      explicitLevels !== undefined
        ? Math.max(...explicitLevels)
        : Math.max(config.range.start, config.range.end);
    const rateInFlight = config.async ? Number.POSITIVE_INFINITY : config.maxThreads;
    const perWorker = (n: number) => Math.max(1, Math.ceil(n / config.workers));
    const spec: SenderSpec = {
      target: "infer",
      transport,
      streaming: config.streaming,
      // perf_analyzer: one stream per context; in rate mode, one per --max-threads thread.
      streams:
        config.mode === "concurrency"
          ? perWorker(config.range.end === 0 && explicitLevels === undefined ? 1024 : maxLevel)
          : perWorker(config.maxThreads),
      connections:
        config.mode === "concurrency"
          ? perWorker(config.range.end === 0 && explicitLevels === undefined ? 1024 : maxLevel)
          : perWorker(Number.isFinite(rateInFlight) ? rateInFlight : 1024),
      model: config.model,
      modelVersion: config.modelVersion,
      requests,
      binaryInputs: config.inputTensorFormat === "binary",
      binaryOutputs: config.outputTensorFormat === "binary",
    };
    const rate: RateSettings = {
      distribution: config.requestDistribution,
      seed: config.seed,
      customIntervalsMs,
      maxInFlight: Number.isFinite(rateInFlight) ? perWorker(rateInFlight) : rateInFlight,
      rateShare: 1,
      phase: 0,
    };
    const keepRequests = config.profileExportFile !== undefined;
    driver =
      config.workers > 1
        ? await createWorkerLoadDriver({
            workers: config.workers,
            senderModule: SENDER_MODULE_URL,
            senderSpec: spec,
            rate,
            mode: config.mode,
            keepRequests,
          })
        : createLocalLoadDriver({ sender: await createSender(spec), rate, mode: config.mode, keepRequests });

    const percentiles = [
      ...new Set([...STANDARD_PERCENTILES, ...(config.percentile !== undefined ? [config.percentile] : [])]),
    ].sort((a, b) => a - b);
    print(
      formatSettings({
        batchSize: config.batchSize,
        measurementMode: config.measurementMode,
        measurementIntervalMs: config.measurementIntervalMs,
        measurementRequestCount: config.measurementRequestCount,
        percentile: config.percentile,
        latencyThresholdMs: config.latencyThresholdMs,
        mode: config.mode,
        limit: maxLevel,
        async: config.async,
        distribution: customIntervalsMs !== undefined ? "custom" : config.requestDistribution,
        workers: config.workers,
      }),
    );
    print("\n");

    const firstLevel: LoadLevel = {
      mode: config.mode,
      value: explicitLevels?.[0] ?? config.range.start,
    };
    if (config.warmupRequestCount > 0) {
      await driver.setBudget(config.warmupRequestCount);
      await driver.apply(firstLevel);
      while (driver.completedCount() < config.warmupRequestCount && !io.signal.aborted) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await driver.collect();
    }

    const progress = createProgressLine(io.stderr, config.batchSize);
    scraper?.start();
    const profiler = createLevelProfiler({
      driver,
      readStats: statsAvailable ? readStats : undefined,
      modelTree: tree,
      scraper,
      overhead,
      measurementMode: config.measurementMode,
      measurementIntervalMs: config.measurementIntervalMs,
      measurementRequestCount: config.measurementRequestCount,
      requestCount: config.requestCount,
      stabilityPercent: config.stabilityPercent,
      maxTrials: config.maxTrials,
      asyncMode: config.async,
      percentile: config.percentile,
      percentiles,
      latencyThresholdMs: config.latencyThresholdMs,
      maxErrorRate: config.maxErrorRate,
      batchSize: config.batchSize,
      signal: io.signal,
      onProgress: (p) => progress.update(p),
      onWindow: (_level, index, w) => {
        if (config.verbosity === 0) return;
        progress.clear();
        const latency =
          config.percentile === undefined
            ? `Avg latency: ${Math.floor(w.latency.avgUs)} usec (std ${Math.floor(w.latency.stdUs)} usec)`
            : `p${config.percentile} latency: ${Math.floor(w.latency.percentiles[String(config.percentile)] ?? 0)} usec`;
        print(
          `  Pass [${index}] throughput: ${w.inferPerSec.toPrecision(6).replace(/\.?0+$/, "")} infer/sec. ${latency}\n`,
        );
      },
    });

    const results: LevelResult[] = [];
    const profileAndReport = async (level: LoadLevel) => {
      print(`${levelHeading(level)}\n`);
      io.onLevel?.(level);
      const result = await profiler.profile(level);
      progress.clear();
      results.push(result);
      print(formatLevelSummary(result, config.percentile, config.verbosity > 0));
      for (const message of result.messages) warn(message);
      print("\n");
      return result;
    };
    if (explicitLevels !== undefined) {
      for (const value of explicitLevels) {
        if (io.signal.aborted) break;
        const result = await profileAndReport({ mode: config.mode, value });
        if (result.status === "latency_threshold" || (config.stopOnError && result.status === "error_rate"))
          break;
      }
    } else {
      await runSweep({
        range: { mode: config.mode, ...config.range },
        binarySearch: config.binarySearch,
        stopOnError: config.stopOnError,
        signal: io.signal,
        profile: profileAndReport,
      });
    }
    await driver.stop();

    if (io.signal.aborted) warn("Interrupted: reporting what was measured so far.");
    print(formatFinalSummary(results, config.percentile));
    print("\n");
    print(formatSweepTable(results));

    const csvOptions = {
      mode: config.mode,
      percentile: config.percentile,
      verbose: config.verboseCsv,
      includeServerStats: statsAvailable,
      includeMetrics: config.collectMetrics,
    };
    if (config.csvFile !== undefined) {
      await writeFile(config.csvFile, formatCsv(results, csvOptions));
      for (const [prefix, text] of formatComposingCsvs(results, config.mode)) {
        await writeFile(join(dirname(config.csvFile), `${prefix}.${basename(config.csvFile)}`), text);
      }
    }
    if (config.profileExportFile !== undefined) {
      await writeFile(config.profileExportFile, formatProfileExport(results, io.version));
    }
    if (config.jsonFile !== undefined) {
      const run = { ...config, url: config.url, startedBy: "tbench", version: io.version };
      await writeFile(
        config.jsonFile,
        `${JSON.stringify(toResultJson(results, run, io.version), null, 2)}\n`,
      );
    }
    const failed = results.some((r) => r.status === "error_rate" || r.status === "no_data");
    return { results, exitCode: io.signal.aborted ? 130 : failed ? 1 : 0 };
  } finally {
    scraper?.close();
    overhead.close();
    await driver?.close();
    await client.close();
  }
}
