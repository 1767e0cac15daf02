// A run's first phase, everything before the first request of load: connect, read the model's metadata
// and config (is it a sequence model?), build the requests (and check them against their validation
// data), find the server's statistics, read --request-intervals, and create the load driver. Usage and
// model errors surface here, before any output; what it opened, the prepared run closes.
import type { LoadDriver } from "../load/load-driver.js";
import { createTransportClient, type TransportSpec } from "../load/transport.js";
import type { SweepLevels } from "../measure/sweep.js";
import type { BenchConfig } from "./bench-config.js";
import { readGrpcTls } from "./grpc-tls-files.js";
import { buildModelRequests, readModel } from "./request-data.js";
import { type RequestIntervals, readRequestIntervals } from "./request-intervals-file.js";
import type { RunIo } from "./run-io.js";
import { createRunLoadDriver } from "./run-load-driver.js";
import { isSequenceModel, sequenceRunConfig } from "./sequence-model.js";
import { openServerStats, type ServerStatsSource } from "./server-stats-source.js";

/** A run ready to generate load: what it measures and with what. */
export interface PreparedRun {
  /** The run's config as the model makes it (a sequence model turns asynchronous calls on). */
  readonly config: BenchConfig;
  /** Whether the model is a sequence model (perf_analyzer's: `sequence_batching`, or an ensemble of one). */
  readonly sequenceModel: boolean;
  /** The levels the sweep visits. */
  readonly levels: SweepLevels;
  /** `--request-intervals`, read; the run sends on these gaps. */
  readonly requestIntervals: RequestIntervals | undefined;
  readonly serverStats: ServerStatsSource;
  /** Created, not started: no load until a level is applied. */
  readonly driver: LoadDriver;
  /** Closes the load driver, then the client; idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The levels a run visits: the library's list, else the one rate --request-intervals sets, else the range. */
function sweepLevelsOf(config: BenchConfig, intervals: RequestIntervals | undefined): SweepLevels {
  if (config.levels !== undefined) return { mode: config.mode, values: config.levels };
  if (intervals !== undefined) return { mode: config.mode, values: [intervals.ratePerSec] };
  return { mode: config.mode, ...config.range };
}

/** Prepares the run; throws for setup problems (unreachable server, unknown model, bad input). */
export async function prepareRun(config: BenchConfig, io: RunIo): Promise<PreparedRun> {
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
  try {
    const warn = (text: string) => io.stderr.write(`${text}\n`);
    const model = await readModel(client, config, io.signal);
    const sequenceModel = await isSequenceModel(client, model.config);
    const requestIntervals =
      config.requestIntervalsFile === undefined
        ? undefined
        : await readRequestIntervals(config.requestIntervalsFile);
    const levels = sweepLevelsOf(config, requestIntervals);
    const runConfig = sequenceRunConfig(config, sequenceModel, levels);
    const { requests, streamSteps } = await buildModelRequests(client, runConfig, model, sequenceModel, {
      signal: io.signal,
      warn,
    });
    const serverStats = await openServerStats(client, config.model, config.modelVersion, warn);
    const driver = await createRunLoadDriver(runConfig, {
      transport,
      requests,
      levels,
      customIntervalsMs: requestIntervals?.intervalsMs,
      sequences: sequenceModel ? { streamSteps } : undefined,
    });
    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= driver.close().finally(() => client.close());
      return closing;
    };
    return {
      config: runConfig,
      sequenceModel,
      levels,
      requestIntervals,
      serverStats,
      driver,
      close,
      [Symbol.asyncDispose]: close,
    };
  } catch (error) {
    await client.close();
    throw error;
  }
}
