import { z } from "zod";
import type { BenchConfig, GrpcSslFiles } from "../run/bench-config.js";
import { UsageError } from "../run/usage-error.js";
import { normalizeGrpcUrl, normalizeUrl, parseHeader, parseRange, parseShape } from "./parse-values.js";
import { resolveSequenceFlags } from "./sequence-flags.js";

/** Default `-u` per protocol: Triton's ports, as perf_analyzer picks them. */
export const DEFAULT_URLS = { http: "localhost:8000", grpc: "localhost:8001" } as const;

/** The options as commander hands them over (strings; lists for repeatable flags). */
export type RawOptions = Record<string, unknown>;

function int(flag: string, min: number, what = "a whole number") {
  return z.string().transform((text, ctx) => {
    const value = Number(text);
    if (text.trim() === "" || !Number.isInteger(value) || value < min) {
      ctx.addIssue({ code: "custom", message: `${flag}: expected ${what} >= ${min}, got "${text}"` });
      return z.NEVER;
    }
    return value;
  });
}

function number(flag: string, min: number, max: number, what: string) {
  return z.string().transform((text, ctx) => {
    const value = Number(text);
    if (text.trim() === "" || !Number.isFinite(value) || value < min || value > max) {
      ctx.addIssue({ code: "custom", message: `${flag}: expected ${what}, got "${text}"` });
      return z.NEVER;
    }
    return value;
  });
}

function choice<const T extends readonly [string, ...string[]]>(flag: string, values: T) {
  return z.string().transform((text, ctx) => {
    if (!(values as readonly string[]).includes(text)) {
      ctx.addIssue({
        code: "custom",
        message: `${flag}: expected one of ${values.join("|")}, got "${text}"`,
      });
      return z.NEVER;
    }
    return text as T[number];
  });
}

const list = z.array(z.string()).default([]);

const rawSchema = z.object({
  model: z
    .string({ error: "-m: the model name is required (e.g. tbench -m simple)" })
    .min(1, "-m: the model name is required"),
  modelVersion: z.string().optional(),
  url: z.string().optional(),
  protocol: z.string().default("http"),
  streaming: z.boolean().default(false),
  grpcCompressionAlgorithm: z.string().optional(),
  // Bare flag as in perf_analyzer (no_argument); its help text shows "<bool>", so true/false are taken too.
  sslGrpcUseSsl: z.union([z.boolean(), z.string()]).optional(),
  sslGrpcRootCertificationsFile: z.string().optional(),
  sslGrpcPrivateKeyFile: z.string().optional(),
  sslGrpcCertificateChainFile: z.string().optional(),
  verbose: z.number().default(0),
  workers: int("--workers", 1).default(1),
  seed: int("--seed", 0).default(1),
  concurrencyRange: z.string().optional(),
  requestRateRange: z.string().optional(),
  requestIntervals: z.string().optional(),
  requestDistribution: choice("--request-distribution", ["constant", "poisson"]).default("constant"),
  binarySearch: z.boolean().default(false),
  async: z.boolean().default(false),
  sync: z.boolean().default(false),
  maxThreads: int("--max-threads", 1).optional(),
  measurementMode: choice("--measurement-mode", ["time_windows", "count_windows"]).default("time_windows"),
  measurementInterval: int("-p/--measurement-interval", 1, "a number of milliseconds").default(5000),
  measurementRequestCount: int("--measurement-request-count", 1).default(50),
  stabilityPercentage: number("-s/--stability-percentage", 0, 1e9, "a percentage > 0").default(10),
  maxTrials: int("-r/--max-trials", 1).default(10),
  percentile: z
    .string()
    .transform((text, ctx) => {
      const value = Number(text);
      if (value === -1) return undefined;
      if (!Number.isFinite(value) || value <= 0 || value >= 100) {
        ctx.addIssue({
          code: "custom",
          message: `--percentile: expected a percentile between 1 and 99 (or -1 for the average), got "${text}"`,
        });
        return z.NEVER;
      }
      return value;
    })
    .optional(),
  latencyThreshold: int("-l/--latency-threshold", 0, "a number of milliseconds").default(0),
  warmupRequestCount: int("--warmup-request-count", 0).default(0),
  requestCount: int("--request-count", 0).default(0),
  maxErrorRate: number("--max-error-rate", 0, 100, "a percentage between 0 and 100").default(0),
  stopOnError: z.boolean().default(false),
  // Parsed with perf_analyzer's messages by sequence-flags.ts.
  sequenceLength: z.string().optional(),
  sequenceLengthVariation: z.string().optional(),
  sequenceIdRange: z.string().optional(),
  numOfSequences: z.string().optional(),
  serialSequences: z.boolean().optional(),
  batchSize: int("-b", 1, "a batch size").default(1),
  shape: list,
  inputData: list,
  stringLength: int("--string-length", 1).default(128),
  stringData: z.string().optional(),
  inputTensorFormat: choice("--input-tensor-format", ["binary", "json"]).default("binary"),
  outputTensorFormat: choice("--output-tensor-format", ["binary", "json"]).default("binary"),
  header: list,
  collectMetrics: z.boolean().default(false),
  metricsUrl: z.string().default("localhost:8002/metrics"),
  metricsInterval: int("--metrics-interval", 1, "a number of milliseconds").default(1000),
  file: z.string().min(1, "-f: expected a file path").optional(),
  verboseCsv: z.boolean().default(false),
  profileExportFile: z.string().min(1).optional(),
  json: z.string().min(1, "--json: expected a file path").optional(),
});

/**
 * Validates commander's options once, applies perf_analyzer's defaults and cross-flag rules, and returns a
 * frozen {@link BenchConfig}. Throws {@link UsageError} with a one-line message naming the flag; perf_analyzer's
 * warnings (a value it replaces by its default) go to `warn`, one line each.
 */
export function resolveBenchConfig(raw: RawOptions, warn: (line: string) => void = () => {}): BenchConfig {
  const parsed = rawSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(issue?.message ?? "invalid options");
  }
  const o = parsed.data;
  // perf_analyzer's ParseProtocol lower-cases: -i gRPC and -i HTTP are accepted.
  const protocol = o.protocol.toLowerCase();
  if (protocol !== "http" && protocol !== "grpc") {
    throw new UsageError(`-i: expected http or grpc, got "${o.protocol}"`);
  }
  if (o.async && o.sync) throw new UsageError("--async and --sync cannot be used together");
  const grpc = resolveGrpcOptions(o, protocol);
  const given = [o.concurrencyRange, o.requestRateRange, o.requestIntervals].filter((v) => v !== undefined);
  if (given.length > 1) {
    throw new UsageError(
      "--concurrency-range, --request-rate-range and --request-intervals cannot be used together",
    );
  }
  const mode =
    o.requestRateRange !== undefined || o.requestIntervals !== undefined ? "request_rate" : "concurrency";
  const range =
    o.requestRateRange !== undefined
      ? parseRange("--request-rate-range", o.requestRateRange, false)
      : o.requestIntervals !== undefined
        ? { start: 1, end: 1, step: 1 }
        : parseRange("--concurrency-range", o.concurrencyRange ?? "1", true);
  const flag = mode === "concurrency" ? "--concurrency-range" : "--request-rate-range";
  if (range.end === 0 && o.latencyThreshold === 0) {
    throw new UsageError(`${flag}: 'end' and --latency-threshold cannot both be 0`);
  }
  if (o.binarySearch) {
    if (range.end === 0 || range.end === range.start) {
      throw new UsageError(`--binary-search: expected ${flag} with an explicit start and end (start < end)`);
    }
    if (o.latencyThreshold === 0)
      throw new UsageError("--binary-search: expected a --latency-threshold to search for");
  }
  const sequence = resolveSequenceFlags(o, warn);
  if (o.percentile !== undefined && o.requestCount > 0 && o.requestCount < 2) {
    throw new UsageError("--request-count: expected at least 2 requests to compute a percentile");
  }
  const shapes: Record<string, number[]> = {};
  for (const text of o.shape) {
    const [name, dims] = parseShape(text);
    shapes[name] = dims;
  }
  const headers: Record<string, string> = {};
  for (const text of o.header) {
    const [name, value] = parseHeader(text);
    headers[name] = value;
  }
  const inputData =
    o.inputData.length === 0
      ? "random"
      : o.inputData.length === 1 && (o.inputData[0] === "zero" || o.inputData[0] === "random")
        ? (o.inputData[0] as "zero" | "random")
        : o.inputData;
  if (Array.isArray(inputData) && inputData.some((d) => d === "zero" || d === "random")) {
    throw new UsageError("--input-data: zero and random cannot be combined with JSON files");
  }
  const config: BenchConfig = {
    model: o.model,
    modelVersion: o.modelVersion,
    url:
      protocol === "grpc"
        ? normalizeGrpcUrl("-u", o.url ?? DEFAULT_URLS.grpc)
        : normalizeUrl("-u", o.url ?? DEFAULT_URLS.http),
    protocol,
    streaming: o.streaming,
    grpcCompression: grpc.compression,
    grpcSsl: grpc.ssl,
    verbosity: o.verbose,
    workers: o.workers,
    seed: o.seed,
    mode,
    range: Object.freeze(range),
    levels: undefined,
    requestIntervalsFile: o.requestIntervals,
    requestDistribution: o.requestDistribution,
    binarySearch: o.binarySearch,
    // perf_analyzer turns --streaming into async calls (perf_analyzer.cc); --sync is refused with it above.
    async: o.async || o.streaming || (mode === "request_rate" && !o.sync),
    forcedSync: o.sync,
    maxThreads: o.maxThreads ?? (mode === "request_rate" ? 4 : 16),
    measurementMode: o.measurementMode,
    measurementIntervalMs: o.measurementInterval,
    measurementRequestCount: o.measurementRequestCount,
    stabilityPercent: o.stabilityPercentage,
    maxTrials: o.maxTrials,
    percentile: o.percentile,
    latencyThresholdMs: o.latencyThreshold,
    warmupRequestCount: o.warmupRequestCount,
    requestCount: o.requestCount,
    maxErrorRate: o.maxErrorRate / 100,
    stopOnError: o.stopOnError,
    sequence,
    batchSize: o.batchSize,
    shapes: Object.freeze(shapes),
    inputData: Array.isArray(inputData) ? Object.freeze([...inputData]) : inputData,
    stringLength: o.stringLength,
    stringData: o.stringData,
    inputTensorFormat: o.inputTensorFormat,
    outputTensorFormat: o.outputTensorFormat,
    headers: Object.freeze(headers),
    collectMetrics: o.collectMetrics,
    metricsUrl: normalizeUrl("--metrics-url", o.metricsUrl),
    metricsIntervalMs: o.metricsInterval,
    csvFile: o.file,
    verboseCsv: o.verboseCsv,
    profileExportFile: o.profileExportFile,
    jsonFile: o.json,
  };
  return Object.freeze(config);
}

type ParsedRaw = z.infer<typeof rawSchema>;

/**
 * The gRPC-only flags: perf_analyzer refuses --streaming and --grpc-compression-algorithm without -i grpc
 * (command_line_parser.cc) and streaming with --sync (perf_analyzer.cc); it silently ignores the
 * --ssl-grpc-* flags over HTTP and the PEM files without --ssl-grpc-use-ssl, which tbench refuses instead
 * (a flag that does nothing is a mistake the user wants to hear about).
 */
function resolveGrpcOptions(
  o: ParsedRaw,
  protocol: "http" | "grpc",
): { compression: BenchConfig["grpcCompression"]; ssl: GrpcSslFiles | undefined } {
  if (o.streaming && protocol !== "grpc") {
    throw new UsageError("--streaming: streaming is only allowed with -i grpc");
  }
  if (o.streaming && o.sync) {
    throw new UsageError("--streaming cannot be used with --sync (streams are asynchronous)");
  }
  const compression = o.grpcCompressionAlgorithm ?? "none";
  if (compression !== "none" && compression !== "gzip" && compression !== "deflate") {
    throw new UsageError(
      `--grpc-compression-algorithm: expected one of none|gzip|deflate, got "${compression}"`,
    );
  }
  if (o.grpcCompressionAlgorithm !== undefined && protocol !== "grpc") {
    throw new UsageError("--grpc-compression-algorithm: compression is only allowed with -i grpc");
  }
  let useSsl = false;
  if (typeof o.sslGrpcUseSsl === "boolean") useSsl = o.sslGrpcUseSsl;
  else if (o.sslGrpcUseSsl !== undefined) {
    const text = o.sslGrpcUseSsl.toLowerCase();
    if (text !== "true" && text !== "false") {
      throw new UsageError(`--ssl-grpc-use-ssl: expected true, false or no value, got "${o.sslGrpcUseSsl}"`);
    }
    useSsl = text === "true";
  }
  const files: [string, string | undefined][] = [
    ["--ssl-grpc-root-certifications-file", o.sslGrpcRootCertificationsFile],
    ["--ssl-grpc-private-key-file", o.sslGrpcPrivateKeyFile],
    ["--ssl-grpc-certificate-chain-file", o.sslGrpcCertificateChainFile],
  ];
  for (const [flag, value] of files) {
    if (value === undefined) continue;
    if (value.trim() === "") throw new UsageError(`${flag}: expected a file path, got ""`);
    if (protocol !== "grpc") throw new UsageError(`${flag}: only allowed with -i grpc`);
    if (!useSsl)
      throw new UsageError(`${flag}: needs --ssl-grpc-use-ssl (without it the channel is plaintext)`);
  }
  if (o.sslGrpcUseSsl !== undefined && protocol !== "grpc") {
    throw new UsageError("--ssl-grpc-use-ssl: only allowed with -i grpc (for HTTPS give -u an https:// URL)");
  }
  if ((o.sslGrpcPrivateKeyFile === undefined) !== (o.sslGrpcCertificateChainFile === undefined)) {
    throw new UsageError(
      "--ssl-grpc-private-key-file and --ssl-grpc-certificate-chain-file: expected both (a client " +
        "certificate for mutual TLS) or neither",
    );
  }
  if (!useSsl) return { compression, ssl: undefined };
  return {
    compression,
    ssl: Object.freeze({
      rootCertificationsFile: o.sslGrpcRootCertificationsFile,
      privateKeyFile: o.sslGrpcPrivateKeyFile,
      certificateChainFile: o.sslGrpcCertificateChainFile,
    }),
  };
}
