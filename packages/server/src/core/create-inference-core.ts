/**
 * The server's core: the model repository, the loaded model versions with their instances and schedulers,
 * and the InferenceCore methods the front ends call.
 */
import { realpath } from "node:fs/promises";
import { resolve } from "node:path";
import type { ModelConfig } from "@tbench/proto";
import { listModelNames, resolveModelDirectory } from "../repository/confinement.js";
import { validateRequest } from "../scheduler/request-validation.js";
import { type Clock, createSystemClock } from "./clock.js";
import { createKeyedSerializer } from "./keyed-serializer.js";
import { createConsoleLogger, type Logger } from "./logger.js";
import {
  type LoaderContext,
  loadModelFromRepository,
  type ModelEntry,
  parseConfigOverride,
  unloadModelEntry,
  type VersionEntry,
} from "./model-loader.js";
import { modelMetadataOf } from "./model-metadata.js";
import { ServerError } from "./server-error.js";
import { createTrace } from "./trace.js";
import type {
  InferenceCore,
  InferenceRequest,
  InferenceResponse,
  ModelMetricsSnapshot,
  ModelStatistics,
  RepositoryIndexEntry,
} from "./types.js";

/**
 * How models are loaded (Triton's --model-control-mode). Poll is served like none for now. Only explicit
 * mode accepts loadModel and unloadModel, as in Triton.
 */
export type ModelControlMode = "none" | "poll" | "explicit";

/** Options of createInferenceCore. */
export interface InferenceCoreOptions {
  /** The model repository directory. */
  readonly modelRepository: string;
  /** Default "none": every model in the repository loads at startup. */
  readonly modelControlMode?: ModelControlMode;
  /** Explicit mode: the models loaded at startup (Triton's --load-model); "*" loads all. */
  readonly loadModels?: readonly string[];
  /** Default true: the server is ready only when every model loaded at startup is ready. */
  readonly strictReadiness?: boolean;
  /** Default false: auto-complete inputs, outputs and max_batch_size from the ONNX model. */
  readonly disableAutoCompleteConfig?: boolean;
  /** Default false: reject (startup fails) when a model fails to load at startup. */
  readonly exitOnError?: boolean;
  /** Default: a console logger on stderr. */
  readonly logger?: Logger;
  /** Default: the system clock. Tests pass a fake clock to drive the batcher. */
  readonly clock?: Clock;
  /**
   * Test hook: a request whose `parameters[crashWorkerParameter] === true` makes the worker that runs it exit
   * (as a native crash would). Never set in production.
   */
  readonly crashWorkerParameter?: string;
  /**
   * Most elements one BYTES input of a request may have (--max-bytes-tensor-elements; default 1,048,576):
   * the worker makes one string per element, so larger inputs are refused from their shape.
   */
  readonly maxBytesTensorElements?: number;
}

/** The core plus its lifetime. */
export interface InferenceCoreHandle extends InferenceCore {
  /** Stops accepting requests, answers what is queued or running, ends every worker. Idempotent. */
  close(): Promise<void>;
}

const SERVER_NAME = "tbench-server";
const SERVER_VERSION = "0.1.0";
const EXTENSIONS = [
  "classification",
  "model_repository",
  "schedule_policy",
  "statistics",
  "binary_tensor_data",
];

/** Triton's refusal of repository load/unload outside explicit mode (its message says "polling" for none too). */
const MODEL_CONTROL_DISABLED = "explicit model load / unload is not allowed if polling is enabled";

/**
 * A failed model lookup, with Triton's code and message (ModelLifeCycle::GetModel; model namespacing off,
 * Triton's default): a name it does not know, or a known model without the asked or any ready version, is
 * NOT_FOUND; an asked version that exists but is not ready is UNAVAILABLE.
 */
function unknownModel(status: "NOT_FOUND" | "UNAVAILABLE", message: string): ServerError {
  return new ServerError(status, `Request for unknown model: ${message}`);
}

/** True when at least one version of the model is READY. */
function servesAny(entry: ModelEntry | undefined): boolean {
  if (!entry) return false;
  for (const v of entry.versions.values()) if (v.state === "READY") return true;
  return false;
}

/** Why a load left versions unavailable, in Triton's words; empty when it fully succeeded. */
function loadFailures(entry: ModelEntry): string[] {
  if (entry.failure !== undefined) return [entry.failure];
  return [...entry.versions.values()]
    .filter((v) => v.state !== "READY")
    .map((v) => `version ${v.version} is at UNAVAILABLE state: ${v.reason};`);
}

/** True when the model loaded and every one of its versions is READY. */
function fullyReady(entry: ModelEntry | undefined): boolean {
  if (!entry || entry.failure !== undefined) return false;
  for (const v of entry.versions.values()) if (v.state !== "READY") return false;
  return true;
}

/** The versions of a model, ascending by number. */
function versionsAscending(entry: ModelEntry): VersionEntry[] {
  return [...entry.versions.values()].sort((a, b) => Number(a.version) - Number(b.version));
}

/** Creates the core and loads the startup models. */
export async function createInferenceCore(options: InferenceCoreOptions): Promise<InferenceCoreHandle> {
  // Real path, so that symlinks cannot make a model directory look inside the repository when it is not.
  const repository = await realpath(resolve(options.modelRepository)).catch(() =>
    resolve(options.modelRepository),
  );
  const logger = options.logger ?? createConsoleLogger();
  const clock = options.clock ?? createSystemClock();
  const mode = options.modelControlMode ?? "none";
  const strictReadiness = options.strictReadiness ?? true;
  const ctx: LoaderContext = {
    repository,
    logger,
    clock,
    autoComplete: options.disableAutoCompleteConfig !== true,
    trace: createTrace("batcher"),
    crashParameter: options.crashWorkerParameter,
  };
  const models = new Map<string, ModelEntry>();
  /** Loads and unloads of one name run one at a time (Triton's lifecycle serializes them too). */
  const lifecycle = createKeyedSerializer();
  const startupModels = new Set<string>();
  let closed = false;
  let closing: Promise<void> | undefined;

  const listRepository = (): Promise<string[]> =>
    listModelNames(repository).catch((error: unknown) => {
      throw new ServerError(
        "INVALID_ARG",
        `failed to read model repository '${repository}': ${String(error)}`,
      );
    });

  /**
   * Loads `name` (again) and returns the attempt. The version being replaced keeps serving until its
   * successor is ready; when the new load fails while the old one serves, the old one stays, untouched,
   * and what the attempt started is closed (Triton: a failed reload leaves the loaded model serving).
   */
  const load = (name: string, override?: ModelConfig): Promise<ModelEntry> =>
    lifecycle.run(name, async () => {
      const previous = models.get(name);
      const next = await loadModelFromRepository(ctx, name, override);
      if (closed) {
        await unloadModelEntry(next, logger);
        throw new ServerError("UNAVAILABLE", "Server is stopping");
      }
      if (previous && servesAny(previous) && loadFailures(next).length > 0) {
        await unloadModelEntry(next, logger);
        logger.warn(`failed to reload '${name}': the loaded versions keep serving`);
        return next;
      }
      models.set(name, next);
      if (previous) await unloadModelEntry(previous, logger);
      return next;
    });

  const resolveVersion = (model: string, version?: string): VersionEntry => {
    const entry = models.get(model);
    if (!entry) throw unknownModel("NOT_FOUND", `'${model}' is not found`);
    if (version !== undefined && version !== "" && version !== "-1") {
      const found = entry.versions.get(version);
      if (!found) throw unknownModel("NOT_FOUND", `'${model}' version ${version} is not found`);
      if (found.state !== "READY") {
        throw unknownModel("UNAVAILABLE", `'${model}' version ${version} is not at ready state`);
      }
      return found;
    }
    // The highest READY version; a loop, not a sort, as every unversioned infer comes through here.
    let current: VersionEntry | undefined;
    for (const v of entry.versions.values()) {
      if (v.state === "READY" && (!current || Number(v.version) > Number(current.version))) current = v;
    }
    if (!current) throw unknownModel("NOT_FOUND", `'${model}' has no available versions`);
    return current;
  };

  // Startup loading.
  const all = await listRepository();
  let toLoad: string[] = all;
  if (mode === "explicit") {
    const wanted = options.loadModels ?? [];
    toLoad = wanted.includes("*") ? all : [...new Set(wanted)];
  }
  for (const name of toLoad) startupModels.add(name);
  await Promise.all(toLoad.map((name) => load(name)));
  if (options.exitOnError) {
    const failed = toLoad.filter((name) => !fullyReady(models.get(name)));
    if (failed.length > 0) {
      await Promise.all([...models.values()].map((m) => unloadModelEntry(m, logger)));
      throw new ServerError(
        "INTERNAL",
        `failed to load all models: ${failed.map((n) => `'${n}'`).join(", ")}`,
      );
    }
  }

  const readyVersions = (model?: string): VersionEntry[] => {
    const entries =
      model === undefined ? [...models.values()] : [models.get(model)].filter((m) => m !== undefined);
    return entries.flatMap((m) => versionsAscending(m).filter((v) => v.state === "READY"));
  };

  const core: InferenceCoreHandle = {
    serverMetadata: () => ({ name: SERVER_NAME, version: SERVER_VERSION, extensions: EXTENSIONS }),
    isLive: () => !closed,
    isReady() {
      if (closed) return false;
      if (!strictReadiness) return true;
      for (const name of startupModels) if (!fullyReady(models.get(name))) return false;
      return true;
    },
    isModelReady(model, version) {
      try {
        return resolveVersion(model, version).state === "READY";
      } catch {
        return false;
      }
    },
    modelMetadata(model, version) {
      const entry = resolveVersion(model, version);
      return modelMetadataOf(
        entry.spec!,
        readyVersions(model).map((v) => v.version),
      );
    },
    modelConfig(model, version) {
      return resolveVersion(model, version).config!;
    },
    async infer(request: InferenceRequest): Promise<InferenceResponse> {
      if (closed)
        throw new ServerError("UNAVAILABLE", "Server is stopping, no new inference requests are accepted");
      const startNs = clock.nowNs();
      const entry = resolveVersion(request.model, request.version);
      let validated: ReturnType<typeof validateRequest>;
      try {
        validated = validateRequest(entry.spec!, request, options.maxBytesTensorElements);
      } catch (error) {
        entry.stats.requestFailed(clock.nowNs() - startNs, "OTHER", clock.epochMs());
        throw error;
      }
      return entry.scheduler!.submit(validated, startNs);
    },
    modelStatistics(model, version): readonly ModelStatistics[] {
      if (model === undefined || model === "") return readyVersions().map((v) => v.stats.statistics());
      // Triton's TRITONSERVER_ServerModelStatistics: INVALID_ARG for a model with no ready version, and for
      // a version that is not among the ready ones.
      const ready = readyVersions(model);
      if (ready.length === 0) {
        throw new ServerError("INVALID_ARG", `requested model '${model}' is not available`);
      }
      if (version === undefined || version === "" || version === "-1")
        return ready.map((v) => v.stats.statistics());
      const found = ready.find((v) => v.version === version);
      if (!found) {
        throw new ServerError("INVALID_ARG", `requested model version is not available for model '${model}'`);
      }
      return [found.stats.statistics()];
    },
    async repositoryIndex(indexOptions) {
      const names = new Set([...(await listRepository()), ...models.keys()]);
      const rows: RepositoryIndexEntry[] = [];
      for (const name of [...names].sort()) {
        const entry = models.get(name);
        if (!entry) {
          if (!indexOptions?.readyOnly) rows.push({ name });
          continue;
        }
        if (entry.failure !== undefined) {
          if (!indexOptions?.readyOnly) rows.push({ name, state: "UNAVAILABLE", reason: entry.failure });
          continue;
        }
        for (const v of versionsAscending(entry)) {
          if (indexOptions?.readyOnly && v.state !== "READY") continue;
          rows.push({ name, version: v.version, state: v.state, reason: v.reason });
        }
      }
      return rows;
    },
    async loadModel(model, loadOptions) {
      if (mode !== "explicit") throw new ServerError("UNAVAILABLE", MODEL_CONTROL_DISABLED);
      if (closed) throw new ServerError("UNAVAILABLE", "Server is stopping");
      if (loadOptions?.files && Object.keys(loadOptions.files).length > 0) {
        throw new ServerError(
          "UNSUPPORTED",
          `load of model '${model}' with request-supplied files is not supported yet`,
        );
      }
      // A name that is not a directory directly inside the repository (a path, "..", a symlink out) fails
      // Triton's poll as an unknown name does: INTERNAL (500), whatever exists on disk, and no entry is made.
      if ((await resolveModelDirectory(repository, model)) === undefined) {
        throw new ServerError("INTERNAL", `failed to load '${model}', failed to poll from model repository`);
      }
      const override =
        loadOptions?.config !== undefined ? parseConfigOverride(model, loadOptions.config) : undefined;
      const failures = loadFailures(await load(model, override));
      if (failures.length > 0) {
        throw new ServerError("INVALID_ARG", `load failed for model '${model}': ${failures.join("\n")}`);
      }
    },
    async unloadModel(model) {
      if (mode !== "explicit") throw new ServerError("UNAVAILABLE", MODEL_CONTROL_DISABLED);
      await lifecycle.run(model, async () => {
        const entry = models.get(model);
        if (!entry || !servesAny(entry)) {
          throw new ServerError("INVALID_ARG", `Model to be unloaded has not been served: '${model}'`);
        }
        await unloadModelEntry(entry, logger);
      });
    },
    metricsSnapshot(): readonly ModelMetricsSnapshot[] {
      return [...models.values()].flatMap((m) =>
        [...m.versions.values()]
          .filter((v) => v.state === "READY" || v.state === "UNLOADING")
          .map((v) => v.stats.metrics()),
      );
    },
    close() {
      closing ??= (async () => {
        closed = true;
        // Loads in progress finish first (and close what they started, as the server is stopping).
        await lifecycle.idle();
        await Promise.all([...models.values()].map((m) => unloadModelEntry(m, logger)));
      })();
      return closing;
    },
  };
  return core;
}
