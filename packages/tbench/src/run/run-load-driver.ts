// The load a run generates: the sender every context sends through (sized to the highest level the sweep
// can reach) and the driver that runs it, in this thread or spread over `--workers` threads. This is
// perf_analyzer's load manager, made once per run and kept across levels.
import type { RequestData } from "../load/input-data.js";
import { createLocalLoadDriver, type LoadDriver, type RateSettings } from "../load/load-driver.js";
import { createSender, SENDER_MODULE_URL, type SenderSpec } from "../load/sender-factory.js";
import type { SequenceSettings } from "../load/sequence-load.js";
import type { TransportSpec } from "../load/transport.js";
import { createWorkerLoadDriver } from "../load/worker-driver.js";
import { highestLevel, isOpenEnded, type SweepLevels } from "../measure/sweep.js";
import type { BenchConfig } from "./bench-config.js";

/** Contexts (streams, connections) to make room for when nothing bounds the load. */
const UNBOUNDED_CONTEXTS = 1024;

/** What the run's load is made from, besides its config. */
export interface RunLoadInputs {
  transport: TransportSpec;
  requests: RequestData[];
  levels: SweepLevels;
  /** `--request-intervals`: the gaps to send on instead of a rate. */
  customIntervalsMs: Float64Array | undefined;
  /** A sequence model's load: the input data's streams (undefined for other models). */
  sequences: { streamSteps: readonly number[] | undefined } | undefined;
}

/** Creates the run's load driver: one sender in this thread, or one per worker (`--workers N`). */
export async function createRunLoadDriver(config: BenchConfig, inputs: RunLoadInputs): Promise<LoadDriver> {
  const perWorker = (n: number) => Math.max(1, Math.ceil(n / config.workers));
  const rateInFlight = config.async ? Number.POSITIVE_INFINITY : config.maxThreads;
  const contexts = isOpenEnded(inputs.levels) ? UNBOUNDED_CONTEXTS : highestLevel(inputs.levels);
  const spec: SenderSpec = {
    target: "infer",
    transport: inputs.transport,
    streaming: config.streaming,
    // perf_analyzer: one stream per context; in rate mode, one per --max-threads thread.
    streams: config.mode === "concurrency" ? perWorker(contexts) : perWorker(config.maxThreads),
    connections:
      config.mode === "concurrency"
        ? perWorker(contexts)
        : perWorker(Number.isFinite(rateInFlight) ? rateInFlight : UNBOUNDED_CONTEXTS),
    model: config.model,
    modelVersion: config.modelVersion,
    requests: inputs.requests,
    binaryInputs: config.inputTensorFormat === "binary",
    binaryOutputs: config.outputTensorFormat === "binary",
  };
  const rate: RateSettings = {
    distribution: config.requestDistribution,
    seed: config.seed,
    customIntervalsMs: inputs.customIntervalsMs,
    maxInFlight: Number.isFinite(rateInFlight) ? perWorker(rateInFlight) : rateInFlight,
    rateShare: 1,
    phase: 0,
  };
  // perf_analyzer's profile export lists every request: only then are they kept.
  const keepRequests = config.profileExportFile !== undefined;
  const sequences: SequenceSettings | undefined =
    inputs.sequences === undefined
      ? undefined
      : { options: config.sequence, streamSteps: inputs.sequences.streamSteps, seed: config.seed };
  if (config.workers > 1) {
    return createWorkerLoadDriver({
      workers: config.workers,
      senderModule: SENDER_MODULE_URL,
      senderSpec: spec,
      rate,
      mode: config.mode,
      keepRequests,
      sequences,
    });
  }
  return createLocalLoadDriver({
    sender: await createSender(spec),
    rate,
    mode: config.mode,
    keepRequests,
    sequences,
  });
}
