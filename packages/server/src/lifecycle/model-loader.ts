/**
 * Loads one model from its directory: reads and parses config.pbtxt (or takes the override), fills
 * Triton's defaults, validates, picks versions by version policy, and per version starts the instances (the
 * first one reports the ONNX model's inputs and outputs for auto-complete and the config check), then the
 * scheduler. A failure leaves the model or version UNAVAILABLE with Triton's reason; it never affects other
 * models. Ensembles get their scheduler from the core (ensemble-loader.ts: they run on other models).
 */
import { existsSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  datatypeInfo,
  type ModelConfig,
  parseModelConfig,
  printModelConfig,
  TextFormatError,
  TextFormatValueError,
} from "@tbench/proto";
import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import { ServerError } from "../core/server-error.js";
import { statusText } from "../core/status-text.js";
import type { TraceFn } from "../core/trace.js";
import type { TensorData } from "../core/types.js";
import { createGenerationScheduler } from "../generation/generation-scheduler.js";
import { prepareGenerator } from "../generation/generator-loader.js";
import { createInstancePool, instanceInits } from "../instances/instance-pool.js";
import { startModelInstance } from "../instances/model-instance.js";
import type { GpuExecutionProvider } from "../instances/worker-protocol.js";
import { autoCompleteConfig, needsAutoComplete, type OnnxModelInfo } from "../repository/auto-complete.js";
import {
  ENSEMBLE_PLATFORM,
  fillModelIdentity,
  GENERATOR_BACKEND,
  normalizeInstanceGroups,
  normalizeModelConfig,
} from "../repository/config-normalize.js";
import {
  unsupportedFeature,
  validateIoConfig,
  validateModelIdentity,
  validateSchedulingConfig,
} from "../repository/config-validate.js";
import { ConfinementError, confinedPath } from "../repository/confinement.js";
import { checkConfigAgainstModel } from "../repository/model-io-check.js";
import { instanceGroupSpecs, type ModelSpec, modelSpecFromConfig } from "../repository/model-spec.js";
import { selectVersions, versionDirectories } from "../repository/version-policy.js";
import { createModelScheduler } from "../scheduler/model-scheduler.js";
import type { InstanceScheduler } from "../scheduler/scheduler.js";
import { createSequenceBatchScheduler } from "../scheduler/sequence-batch-scheduler.js";
import { createModelStats, type LatencyObserver, type ModelStatsCollector } from "../stats/model-stats.js";
import { runWarmup } from "./model-warmup.js";
import type { ModelEntry, ServedVersion, VersionEntry } from "./version-state.js";

/** What loading needs from the core. */
export interface LoaderContext {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly autoComplete: boolean;
  readonly trace?: TraceFn | undefined;
  readonly crashParameter?: string | undefined;
  /** Test hook: models whose first instance's thread exits while creating its session. */
  readonly crashOnLoadModels?: readonly string[] | undefined;
  /** Per-version cap on queued requests (--max-pending-requests; 0: none). */
  readonly maxPendingRequests?: number | undefined;
  /** The provider KIND_GPU instances ask for (--gpu-execution-provider); default auto. */
  readonly gpuExecutionProvider?: GpuExecutionProvider | undefined;
  /** Sees every successful request's durations (the latency summaries), when they are on. */
  readonly latencyObserver?: LatencyObserver | undefined;
  /** Loads an ensemble version (its steps run on other models); rejects with the reason it cannot serve. */
  readonly loadEnsemble: (
    config: ModelConfig,
    version: string,
    stats: ModelStatsCollector,
  ) => Promise<ServedVersion>;
}

function fail(
  message: string,
  status: "INVALID_ARG" | "INTERNAL" | "UNAVAILABLE" | "UNSUPPORTED" = "INVALID_ARG",
): never {
  throw new ServerError(status, message);
}

/** `relative` inside the model directory `dir`, or INVALID_ARG saying it must be (and nothing about outside). */
async function modelFilePath(dir: string, under: string, relative: string, what: string): Promise<string> {
  try {
    return await confinedPath(dir, under, relative, what);
  } catch (error) {
    if (error instanceof ConfinementError) fail(error.message);
    throw error;
  }
}

/**
 * Refuses a config that names a file outside the model's directory, before anything loads: the model file
 * of each version, cc_model_filenames, label files and warmup data files (read from `warmup/`, as Triton
 * reads them). This is what keeps a config override from reading arbitrary files.
 */
async function checkConfigFiles(
  dir: string,
  config: ModelConfig,
  versions: readonly number[],
): Promise<void> {
  const name = config.name ?? "";
  const modelFile = config.default_model_filename || "model.onnx";
  for (const v of versions) {
    await modelFilePath(
      dir,
      String(v),
      modelFile,
      `default_model_filename '${modelFile}' of model '${name}'`,
    );
  }
  for (const [cc, file] of Object.entries(config.cc_model_filenames ?? {})) {
    for (const v of versions) {
      await modelFilePath(dir, String(v), file, `cc_model_filenames['${cc}'] '${file}' of model '${name}'`);
    }
  }
  for (const output of config.output ?? []) {
    if (!output.label_filename) continue;
    const what = `label_filename '${output.label_filename}' of output '${output.name}' of model '${name}'`;
    await modelFilePath(dir, "", output.label_filename, what);
  }
  for (const state of config.sequence_batching?.state ?? []) {
    const file = state.initial_state?.[0]?.data_file;
    if (!file) continue;
    const what = `initial_state data_file '${file}' of state '${state.input_name ?? ""}' of model '${name}'`;
    await modelFilePath(dir, "initial_state", file, what);
  }
  for (const warmup of config.model_warmup ?? []) {
    for (const [input, data] of Object.entries(warmup.inputs ?? {})) {
      if (!data.input_data_file) continue;
      const what = `input_data_file '${data.input_data_file}' of input '${input}' of warmup '${warmup.name ?? ""}' of model '${name}'`;
      await modelFilePath(dir, "warmup", data.input_data_file, what);
    }
  }
}

async function readLabels(dir: string, spec: ModelSpec): Promise<Map<string, string[]>> {
  const labels = new Map<string, string[]>();
  for (const output of spec.outputs) {
    if (output.labelFilename === "") continue;
    const what = `label_filename '${output.labelFilename}' of output '${output.name}' of model '${spec.name}'`;
    const path = await modelFilePath(dir, "", output.labelFilename, what);
    const text = await readFile(path, "utf8").catch(() =>
      fail(
        `unable to read label file '${output.labelFilename}' of output '${output.name}' for model '${spec.name}'`,
      ),
    );
    labels.set(
      output.name,
      text.split(/\r?\n/).filter((line, i, all) => line !== "" || i < all.length - 1),
    );
  }
  return labels;
}

/** Most bytes one initial_state file may give a state (a config's word, but still bounded before reading). */
const MAX_INITIAL_STATE_BYTES = 64 * 1024 * 1024;

/**
 * The initial states read from files (`<model>/initial_state/<data_file>`, as Triton reads them), by state
 * input name: BYTES take the whole file in the wire form, other types its first bytes (a shorter file fails
 * with Triton's words; a longer one is cut, as in Triton).
 */
async function readInitialStates(dir: string, spec: ModelSpec): Promise<Map<string, TensorData>> {
  const states = new Map<string, TensorData>();
  for (const state of spec.sequenceBatching?.states ?? []) {
    if (state.initial.kind !== "file") continue;
    const file = state.initial.file;
    const what = `initial_state data_file '${file}' of state '${state.inputName}' of model '${spec.name}'`;
    const path = await modelFilePath(dir, "initial_state", file, what);
    const size = await stat(path).then(
      (info) => info.size,
      () =>
        fail(
          `failed to read initial_state file '${file}' of state '${state.inputName}' of model '${spec.name}'`,
        ),
    );
    if (size > MAX_INITIAL_STATE_BYTES) {
      fail(
        `initial_state file '${file}' of model '${spec.name}' is ${size} bytes, more than the ${MAX_INITIAL_STATE_BYTES} allowed`,
      );
    }
    const bytes = new Uint8Array(await readFile(path));
    const count = state.initialDims.reduce((a, b) => a * b, 1);
    const info = datatypeInfo(state.datatype)!;
    if (state.datatype === "BYTES") {
      states.set(state.inputName, { count, wire: bytes });
      continue;
    }
    const expected = count * info.byteSize!;
    if (bytes.byteLength < expected) {
      fail(
        `initial_state setting expects ${expected} bytes, but the data provided from ${file}only has ${bytes.byteLength} bytes.`,
      );
    }
    const ctor = info.typedArray as unknown as new (buffer: ArrayBuffer) => TensorData;
    states.set(state.inputName, new ctor(bytes.slice(0, expected).buffer));
  }
  return states;
}

/**
 * Reads and parses config.pbtxt. A text error is the user's (INVALID_ARG) and keeps the codec's message,
 * which names file, line and column; anything else stays an internal error.
 */
async function readConfigFile(path: string): Promise<ModelConfig> {
  const text = await readFile(path, "utf8");
  try {
    return parseModelConfig(text, { fileName: path });
  } catch (error) {
    if (error instanceof TextFormatError) fail(`failed to read text proto from ${path}: ${error.message}`);
    throw error;
  }
}

/**
 * Reads a config override given as JSON (the repository load API). A round trip through the config.pbtxt
 * codec checks it against the ModelConfig schema and gives it the form parsed configs have (64-bit values
 * as decimal strings, nulls dropped), so the core reads both alike. Throws INVALID_ARG naming the field.
 */
export function parseConfigOverride(model: string, json: string): ModelConfig {
  const problem = (detail: string) =>
    new ServerError("INVALID_ARG", `failed to parse the config override of model '${model}': ${detail}`);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw problem(String(error));
  }
  try {
    return parseModelConfig(printModelConfig(value as ModelConfig));
  } catch (error) {
    if (error instanceof TextFormatValueError || error instanceof TextFormatError)
      throw problem(error.message);
    throw error;
  }
}

function intraOpThreads(config: ModelConfig): number {
  const value = Number(config.parameters?.["intra_op_thread_count"]?.string_value || "1");
  return Number.isInteger(value) && value >= 0 ? value : 1;
}

async function loadOnnxVersion(
  ctx: LoaderContext,
  dir: string,
  baseConfig: ModelConfig,
  entry: VersionEntry,
): Promise<ServedVersion> {
  const config = structuredClone(baseConfig);
  const name = config.name ?? "";
  const modelFile = config.default_model_filename ?? "";
  const what = `default_model_filename '${modelFile}' of model '${name}'`;
  const modelPath = await modelFilePath(dir, entry.version, modelFile, what);
  if (!existsSync(modelPath)) fail(`unable to find '${modelPath}' for model '${name}'`, "UNAVAILABLE");
  // Instance groups need nothing from the model, so the first instance can start now: auto-complete and
  // the config check need the inputs and outputs its session reports.
  normalizeInstanceGroups(config);
  const inits = instanceInits({
    modelPath,
    groups: instanceGroupSpecs(config),
    intraOpThreads: intraOpThreads(config),
    ...(ctx.gpuExecutionProvider ? { gpuExecutionProvider: ctx.gpuExecutionProvider } : {}),
  });
  const firstInit = inits[0];
  if (!firstInit) fail(`must specify one or more 'instance group's for ${name}`);
  const crashOnLoad = ctx.crashOnLoadModels?.includes(name) === true;
  const first = await startModelInstance({ init: crashOnLoad ? { ...firstInit, crashOnLoad } : firstInit });
  let handedOver = false;
  try {
    const model: OnnxModelInfo = first.info;
    // A generator's config describes its requests, not its step model: nothing to complete from the model.
    const generator = config.backend === GENERATOR_BACKEND;
    if (ctx.autoComplete && !generator && needsAutoComplete(config)) {
      const problem = autoCompleteConfig(config, model, ctx.logger);
      if (problem) fail(problem);
    }
    normalizeModelConfig(config);
    const problem = validateSchedulingConfig(config) ?? validateIoConfig(config);
    if (problem) fail(problem);
    const spec = modelSpecFromConfig(config);
    const decoupled = config.model_transaction_policy?.decoupled === true;
    const generation = generator ? await prepareGenerator(dir, spec, decoupled, model) : undefined;
    const mismatch = generator ? undefined : checkConfigAgainstModel(spec, model);
    if (mismatch) fail(mismatch);
    const labels = await readLabels(dir, spec);
    // Read before the pool starts: a bad file must fail the load with nothing left running.
    const initialStates = await readInitialStates(dir, spec);
    // The pool's callbacks reach the scheduler, which is made from the pool.
    let scheduler: InstanceScheduler | undefined;
    handedOver = true;
    const pool = await createInstancePool(
      {
        modelName: name,
        version: entry.version,
        inits,
        logger: ctx.logger,
        // Without dynamic batching a batch is one request, final when sent: let the next one wait in the
        // instance's thread, so the session never idles for a round trip to the main thread.
        depth: spec.dynamicBatching === undefined && !generator ? 2 : 1,
        onIdle: () => scheduler?.instanceIdle(),
        // A sequence model's states live in its instances' threads: the batcher learns which are gone.
        onInstanceLost: (loss) => scheduler?.instanceLost?.(loss),
        onUnavailable: (reason) => {
          // Every instance died: the version goes UNAVAILABLE and nothing queued for it may wait forever.
          const error = new ServerError("INTERNAL", reason);
          const state = entry.state;
          const leftover = state.name === "READY" || state.name === "UNLOADING" ? state.served : undefined;
          entry.state = { name: "UNAVAILABLE", reason: statusText(error), ...(leftover ? { leftover } : {}) };
          ctx.logger.error(`model '${name}' version ${entry.version} is UNAVAILABLE: ${statusText(error)}`);
          scheduler?.abandon(error);
        },
      },
      first,
    );
    const sequence = spec.sequenceBatching;
    scheduler = generation
      ? createGenerationScheduler({
          spec,
          version: entry.version,
          ...generation,
          pool,
          clock: ctx.clock,
          stats: entry.stats,
          maxPendingRequests: ctx.maxPendingRequests,
        })
      : sequence
        ? createSequenceBatchScheduler({
            spec: { ...spec, sequenceBatching: sequence },
            version: entry.version,
            pool,
            instanceCount: inits.length,
            clock: ctx.clock,
            stats: entry.stats,
            logger: ctx.logger,
            initialStates,
            labels,
            maxPendingRequests: ctx.maxPendingRequests,
            crashParameter: ctx.crashParameter,
          })
        : createModelScheduler({
            spec,
            version: entry.version,
            pool,
            clock: ctx.clock,
            stats: entry.stats,
            labels,
            trace: ctx.trace,
            crashParameter: ctx.crashParameter,
            maxPendingRequests: ctx.maxPendingRequests,
          });
    if (config.model_warmup?.length) {
      // READY only once every warmup sample ran; a failure closes what was started and fails the version.
      await runWarmup(config, spec, scheduler, dir, ctx.clock).catch(async (error: unknown) => {
        await scheduler?.close();
        throw error;
      });
    }
    return { config, spec, scheduler, decoupled };
  } finally {
    if (!handedOver) await first.instance.close();
  }
}

/** Where a model is loaded from, and the config that replaces its config.pbtxt (the load API's override). */
export interface ModelSource {
  /** The model's directory (a real path inside the repository, or the directory of `file:` overrides). */
  readonly directory: string;
  readonly config?: ModelConfig;
}

/** Reads the model's directory, config and versions, then loads every selected version concurrently. */
export async function loadModel(ctx: LoaderContext, name: string, source: ModelSource): Promise<ModelEntry> {
  const { logger } = ctx;
  const dir = source.directory;
  let config: ModelConfig;
  let versions: number[];
  try {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() =>
      fail(`failed to load '${name}', failed to poll from model repository`),
    );
    const configPath = join(dir, "config.pbtxt");
    if (source.config) config = structuredClone(source.config);
    else if (existsSync(configPath)) {
      config = await readConfigFile(configPath);
    } else config = {};
    const available = versionDirectories(
      name,
      entries.filter((e) => e.isDirectory()).map((e) => e.name),
      logger,
    );
    const filename = config.default_model_filename || "model.onnx";
    fillModelIdentity(
      config,
      name,
      available.some((v) => existsSync(join(dir, String(v), filename))),
    );
    const problem = validateModelIdentity(config, name);
    if (problem) fail(problem);
    const unsupported = unsupportedFeature(config);
    if (unsupported) fail(unsupported, "UNSUPPORTED");
    versions = selectVersions(name, config.version_policy, available, logger);
    if (versions.length === 0) {
      logger.warn(
        `model '${name}' has no version directory with a model file: looked for '${join(dir, "<version>", filename)}'`,
      );
      fail(`at least one version must be available under the version policy of model '${name}'`);
    }
    await checkConfigFiles(dir, config, versions);
  } catch (error) {
    const reason = statusText(error);
    logger.error(`failed to load '${name}': ${reason}`);
    return { kind: "failed", name, reason };
  }
  const ensemble = config.platform === ENSEMBLE_PLATFORM;
  const entries = new Map<string, VersionEntry>();
  await Promise.all(
    versions.map(async (v) => {
      const version = String(v);
      const entry: VersionEntry = {
        version,
        state: { name: "LOADING" },
        stats: createModelStats(name, version, ctx.latencyObserver),
      };
      entries.set(version, entry);
      const started = ctx.clock.nowNs();
      try {
        const served = ensemble
          ? await ctx.loadEnsemble(config, version, entry.stats)
          : await loadOnnxVersion(ctx, dir, config, entry);
        entry.stats.setLoadDuration((ctx.clock.nowNs() - started) / 1e9);
        entry.state = { name: "READY", served };
        logger.info(`successfully loaded '${name}' version ${version}`);
      } catch (error) {
        entry.state = { name: "UNAVAILABLE", reason: statusText(error) };
        logger.error(`failed to load '${name}' version ${version}: ${statusText(error)}`);
      }
    }),
  );
  return { kind: "loaded", name, versions: entries };
}
