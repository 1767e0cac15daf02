/**
 * Loads one model from the repository: reads and parses config.pbtxt, fills Triton's defaults, validates,
 * picks versions by version policy, and per version starts the instances (the first one reports the ONNX
 * model's inputs and outputs for auto-complete and the config check), then the scheduler. A failure leaves
 * the model or version UNAVAILABLE with Triton's reason; it never affects other models.
 */
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type ModelConfig,
  parseModelConfig,
  printModelConfig,
  TextFormatError,
  TextFormatValueError,
} from "@tbench/proto";
import { createInstancePool, type InstancePool, instanceInits } from "../instances/instance-pool.js";
import { startModelInstance } from "../instances/model-instance.js";
import { autoCompleteConfig, needsAutoComplete, type OnnxModelInfo } from "../repository/auto-complete.js";
import {
  ENSEMBLE_PLATFORM,
  fillModelIdentity,
  normalizeInstanceGroups,
  normalizeModelConfig,
} from "../repository/config-normalize.js";
import {
  unsupportedFeature,
  validateIoConfig,
  validateModelIdentity,
  validateSchedulingConfig,
} from "../repository/config-validate.js";
import { ConfinementError, confinedPath, resolveModelDirectory } from "../repository/confinement.js";
import { checkConfigAgainstModel } from "../repository/model-io-check.js";
import { instanceGroupSpecs, type ModelSpec, modelSpecFromConfig } from "../repository/model-spec.js";
import { selectVersions, versionDirectories } from "../repository/version-policy.js";
import { createModelScheduler, type ModelScheduler } from "../scheduler/model-scheduler.js";
import { createModelStats, type ModelStatsCollector } from "../stats/model-stats.js";
import type { Clock } from "./clock.js";
import type { Logger } from "./logger.js";
import { ServerError } from "./server-error.js";
import { statusText } from "./status-text.js";
import type { TraceFn } from "./trace.js";

/** Triton's model version states. */
export type VersionStateName = "LOADING" | "READY" | "UNAVAILABLE" | "UNLOADING";

/** One version of a model and, once READY, what serves it. */
export interface VersionEntry {
  readonly version: string;
  state: VersionStateName;
  reason: string;
  config?: ModelConfig;
  spec?: ModelSpec;
  pool?: InstancePool;
  scheduler?: ModelScheduler;
  readonly stats: ModelStatsCollector;
}

/** A model known to the core (loaded or failed). */
export interface ModelEntry {
  readonly name: string;
  /** Set when the model failed before any version could load (bad config, no versions). */
  failure?: string;
  readonly versions: Map<string, VersionEntry>;
}

/** What loading needs from the core. */
export interface LoaderContext {
  /** The repository's real path (symlinks resolved): every model directory must lie directly under it. */
  readonly repository: string;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly autoComplete: boolean;
  readonly trace?: TraceFn | undefined;
  readonly crashParameter?: string | undefined;
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

async function loadVersion(
  ctx: LoaderContext,
  dir: string,
  baseConfig: ModelConfig,
  entry: VersionEntry,
): Promise<void> {
  const started = ctx.clock.nowNs();
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
  });
  const firstInit = inits[0];
  if (!firstInit) fail(`must specify one or more 'instance group's for ${name}`);
  const first = await startModelInstance({ init: firstInit });
  let handedOver = false;
  try {
    const model: OnnxModelInfo = first.info;
    if (ctx.autoComplete && needsAutoComplete(config)) {
      const problem = autoCompleteConfig(config, model, ctx.logger);
      if (problem) fail(problem);
    }
    normalizeModelConfig(config);
    const problem = validateSchedulingConfig(config) ?? validateIoConfig(config);
    if (problem) fail(problem);
    const spec = modelSpecFromConfig(config);
    const mismatch = checkConfigAgainstModel(spec, model);
    if (mismatch) fail(mismatch);
    const labels = await readLabels(dir, spec);
    let scheduler: ModelScheduler | undefined;
    const stats = entry.stats;
    handedOver = true;
    const pool = await createInstancePool(
      {
        modelName: name,
        version: entry.version,
        inits,
        logger: ctx.logger,
        onIdle: () => scheduler?.instanceIdle(),
        onUnavailable: (reason) => {
          // Every instance died: the version goes UNAVAILABLE and nothing queued for it may wait forever.
          const error = new ServerError("INTERNAL", reason);
          entry.state = "UNAVAILABLE";
          entry.reason = statusText(error);
          ctx.logger.error(`model '${name}' version ${entry.version} is UNAVAILABLE: ${entry.reason}`);
          scheduler?.abandon(error);
        },
      },
      first,
    );
    scheduler = createModelScheduler({
      spec,
      version: entry.version,
      pool,
      clock: ctx.clock,
      stats,
      labels,
      trace: ctx.trace,
      crashParameter: ctx.crashParameter,
    });
    Object.assign(entry, { config, spec, pool, scheduler });
    stats.setLoadDuration((ctx.clock.nowNs() - started) / 1e9);
  } finally {
    if (!handedOver) await first.instance.close();
  }
}

/** Reads `name`'s directory, config and versions, then loads every selected version concurrently. */
export async function loadModelFromRepository(
  ctx: LoaderContext,
  name: string,
  overrideConfig?: ModelConfig,
): Promise<ModelEntry> {
  const model: ModelEntry = { name, versions: new Map() };
  const { logger } = ctx;
  let config: ModelConfig;
  let versions: number[];
  let dir: string;
  try {
    // A name that is not a directory directly inside the repository is unknown, whatever exists elsewhere.
    const pollFailed = () => fail(`failed to load '${name}', failed to poll from model repository`);
    dir = (await resolveModelDirectory(ctx.repository, name)) ?? pollFailed();
    const entries = await readdir(dir, { withFileTypes: true }).catch(pollFailed);
    const configPath = join(dir, "config.pbtxt");
    if (overrideConfig) config = structuredClone(overrideConfig);
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
    model.failure = statusText(error);
    logger.error(`failed to load '${name}': ${model.failure}`);
    return model;
  }
  const ensemble = config.platform === ENSEMBLE_PLATFORM;
  await Promise.all(
    versions.map(async (v) => {
      const entry: VersionEntry = {
        version: String(v),
        state: "LOADING",
        reason: "",
        stats: createModelStats(name, String(v)),
      };
      model.versions.set(entry.version, entry);
      try {
        if (ensemble) {
          entry.config = structuredClone(config);
          fail(
            `ensemble model '${name}' is not served yet: tbench-server reads its config, and ensemble scheduling ` +
              "arrives in a later release",
            "UNAVAILABLE",
          );
        }
        await loadVersion(ctx, dir, config, entry);
        entry.state = "READY";
        logger.info(`successfully loaded '${name}' version ${entry.version}`);
      } catch (error) {
        entry.state = "UNAVAILABLE";
        entry.reason = statusText(error);
        logger.error(`failed to load '${name}' version ${entry.version}: ${entry.reason}`);
      }
    }),
  );
  return model;
}

/** Drains and closes every loaded version of `model`; versions stay listed as UNAVAILABLE "unloaded". */
export async function unloadModelEntry(model: ModelEntry, logger: Logger): Promise<void> {
  await Promise.all(
    [...model.versions.values()].map(async (entry) => {
      if (entry.state !== "READY") return;
      entry.state = "UNLOADING";
      await entry.scheduler?.drain();
      await entry.pool?.close();
      entry.state = "UNAVAILABLE";
      entry.reason = "unloaded";
      logger.info(`successfully unloaded '${model.name}' version ${entry.version}`);
    }),
  );
}
