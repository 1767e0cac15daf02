/**
 * The server's core, composed: the model lifecycle (loaded models and their versions), the repository
 * poller in poll mode, ensembles, and the InferenceCore methods the front ends call. This is the
 * composition root: it imports scheduler, instances and stats, which import only the ground floor (core/).
 */
import { realpath } from "node:fs/promises";
import { resolve } from "node:path";
import { type Clock, createSystemClock } from "../core/clock.js";
import { createConsoleLogger, type Logger } from "../core/logger.js";
import { ServerError } from "../core/server-error.js";
import { createTrace } from "../core/trace.js";
import type {
  InferenceCore,
  InferenceRequest,
  InferenceResponse,
  ModelMetricsSnapshot,
  ModelStatistics,
  RepositoryIndexEntry,
} from "../core/types.js";
import { ensembleMemberNames } from "../ensemble/ensemble-dependencies.js";
import type { GpuExecutionProvider } from "../instances/worker-protocol.js";
import { isPlainModelName, listModelNames, resolveModelDirectory } from "../repository/confinement.js";
import type { SecondaryStats } from "../scheduler/model-scheduler.js";
import { validateRequest } from "../scheduler/request-validation.js";
import type { LatencyObserver } from "../stats/model-stats.js";
import { type EnsembleDependencies, loadEnsembleVersion } from "./ensemble-executor.js";
import { createModelLifecycle } from "./model-lifecycle.js";
import { parseConfigOverride } from "./model-loader.js";
import { modelMetadataOf } from "./model-metadata.js";
import { createRepositoryPoller, type RepositoryPoller } from "./repository-poller.js";
import {
  loadFailures,
  type ModelEntry,
  readyVersionsOf,
  type ServedVersion,
  type VersionEntry,
  versionsOf,
} from "./version-state.js";

/**
 * How models are loaded (Triton's --model-control-mode): none loads every model at startup, poll also
 * follows the repository's changes, explicit loads what --load-model names and then what the API asks.
 */
export type ModelControlMode = "none" | "poll" | "explicit";

/** Options of createInferenceCore. */
export interface InferenceCoreOptions {
  /** The model repository directory. */
  readonly modelRepository: string;
  /** Default "none": every model in the repository loads at startup. */
  readonly modelControlMode?: ModelControlMode;
  /** Poll mode: seconds between scans of the repository (Triton's --repository-poll-secs, default 15). */
  readonly repositoryPollSecs?: number;
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
  /** Test hook: the named models' first instance thread exits while creating its session. Never in production. */
  readonly crashWorkerOnLoadModels?: readonly string[];
  /**
   * Most elements one BYTES input of a request may have (--max-bytes-tensor-elements; default 1,048,576):
   * the worker makes one string per element, so larger inputs are refused from their shape.
   */
  readonly maxBytesTensorElements?: number;
  /**
   * The execution provider KIND_GPU instances ask for (--gpu-execution-provider; default auto: CUDA when
   * its binaries are installed, else WebGPU; CPU, with the reason logged, when none starts).
   */
  readonly gpuExecutionProvider?: GpuExecutionProvider;
  /**
   * Most requests queued per model version (--max-pending-requests; default 4096, 0: no limit): back-pressure
   * when the config sets no max_queue_size. Past it a request is refused with 503 and counted as REJECTED.
   */
  readonly maxPendingRequests?: number;
  /** Sees every successful request's durations: startServer passes the latency summaries when they are on. */
  readonly latencyObserver?: LatencyObserver;
}

/** Default --max-pending-requests: far above any queue that still answers in time, far below memory trouble. */
export const DEFAULT_MAX_PENDING_REQUESTS = 4096;

/** The core plus its lifetime. */
export interface InferenceCoreHandle extends InferenceCore {
  /** Stops accepting requests, answers what is queued or running, ends every worker. Idempotent. */
  close(): Promise<void>;
  /** Stops accepting requests, fails what is still queued (UNAVAILABLE), ends every worker. Idempotent. */
  destroy(): Promise<void>;
}

const SERVER_NAME = "tbench-server";
const SERVER_VERSION = "0.1.0";
/** Triton's core lists these in this order (server.cc), less what tbench-server does not serve. */
const EXTENSIONS = [
  "classification",
  "model_repository",
  "model_repository(unload_dependents)",
  "schedule_policy",
  "model_configuration",
  "binary_tensor_data",
  "parameters",
  "statistics",
];
const DEFAULT_REPOSITORY_POLL_SECS = 15;

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

/**
 * Triton's check of a name given to the load API (ModelRepositoryManager, ValidateModelName): INVALID_ARG
 * for an empty or blank name or one holding ".." or "/". It looks at the name alone, so its answer says
 * nothing about what exists on disk.
 */
function checkLoadName(name: string): void {
  if (name === "") throw new ServerError("INVALID_ARG", "model name must not be empty");
  if (name.trim() === "") {
    throw new ServerError("INVALID_ARG", "model name must not contain only whitespace characters");
  }
  if (name.includes("..") || name.includes("/")) {
    throw new ServerError(
      "INVALID_ARG",
      `invalid model name '${name}', model name must not contain path traversal characters`,
    );
  }
}

/** A READY version and what serves it. */
interface ReadyVersion {
  readonly entry: VersionEntry;
  readonly served: ServedVersion;
}

/** True when the model loaded and every one of its versions is READY. */
function fullyReady(entry: ModelEntry | undefined): boolean {
  return entry !== undefined && entry.kind === "loaded" && loadFailures(entry).length === 0;
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
  // Ensembles run their steps through runRequest, defined below with the lookups it needs.
  const ensembles: EnsembleDependencies = {
    clock,
    get: (name) => lifecycle.get(name),
    inRepository: async (name) => (await resolveModelDirectory(repository, name)) !== undefined,
    loadMember: (name) => lifecycle.load(name),
    inferMember: (request, stats) => runRequest(request, stats),
    loadingEnsembles: new Map(),
  };
  const lifecycle = createModelLifecycle({
    repository,
    logger,
    loader: {
      logger,
      clock,
      autoComplete: options.disableAutoCompleteConfig !== true,
      trace: createTrace("batcher"),
      crashParameter: options.crashWorkerParameter,
      crashOnLoadModels: options.crashWorkerOnLoadModels,
      maxPendingRequests: options.maxPendingRequests ?? DEFAULT_MAX_PENDING_REQUESTS,
      gpuExecutionProvider: options.gpuExecutionProvider,
      latencyObserver: options.latencyObserver,
      loadEnsemble: (config, version, stats) => loadEnsembleVersion(ensembles, config, version, stats),
    },
  });
  const startupModels = new Set<string>();
  let poller: RepositoryPoller | undefined;
  let closed = false;
  let closing: Promise<void> | undefined;

  const listRepository = (): Promise<string[]> =>
    listModelNames(repository).catch((error: unknown) => {
      throw new ServerError(
        "INVALID_ARG",
        `failed to read model repository '${repository}': ${String(error)}`,
      );
    });

  /** The READY version a request names (or the latest one), with Triton's lookup errors. */
  const resolveVersion = (model: string, version?: string): ReadyVersion => {
    const entry = lifecycle.get(model);
    if (!entry) throw unknownModel("NOT_FOUND", `'${model}' is not found`);
    const versions = entry.kind === "loaded" ? entry.versions : new Map<string, VersionEntry>();
    if (version !== undefined && version !== "" && version !== "-1") {
      const found = versions.get(version);
      if (!found) throw unknownModel("NOT_FOUND", `'${model}' version ${version} is not found`);
      if (found.state.name !== "READY") {
        throw unknownModel("UNAVAILABLE", `'${model}' version ${version} is not at ready state`);
      }
      return { entry: found, served: found.state.served };
    }
    // The highest READY version; a loop, not a sort, as every unversioned infer comes through here.
    let current: ReadyVersion | undefined;
    for (const v of versions.values()) {
      if (v.state.name === "READY" && (!current || Number(v.version) > Number(current.entry.version))) {
        current = { entry: v, served: v.state.served };
      }
    }
    if (!current) throw unknownModel("NOT_FOUND", `'${model}' has no available versions`);
    return current;
  };

  /** Resolves, validates and runs one request (from a front end, or an ensemble step with `secondary`). */
  const runRequest = (request: InferenceRequest, secondary?: SecondaryStats): Promise<InferenceResponse> => {
    const startNs = clock.nowNs();
    const { entry, served } = resolveVersion(request.model, request.version);
    let validated: ReturnType<typeof validateRequest>;
    try {
      validated = validateRequest(served.spec, request, options.maxBytesTensorElements);
    } catch (error) {
      entry.stats.requestFailed(clock.nowNs() - startNs, "OTHER", clock.epochMs());
      throw error;
    }
    return served.executor.submit(validated, startNs, secondary);
  };

  const readyVersions = (model?: string): VersionEntry[] => {
    if (model !== undefined) {
      const entry = lifecycle.get(model);
      return entry ? readyVersionsOf(entry) : [];
    }
    return lifecycle
      .entries()
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .flatMap(readyVersionsOf);
  };

  // Startup loading.
  const all = await listRepository();
  let toLoad: string[] = all;
  if (mode === "explicit") {
    const wanted = options.loadModels ?? [];
    toLoad = wanted.includes("*") ? all : [...new Set(wanted)];
  }
  for (const name of toLoad) startupModels.add(name);
  if (mode === "poll") {
    // The poller's first scan is the startup load: it fingerprints each directory before loading it.
    poller = createRepositoryPoller({
      repository,
      lifecycle,
      logger,
      intervalMs: (options.repositoryPollSecs ?? DEFAULT_REPOSITORY_POLL_SECS) * 1000,
    });
    await poller.poll();
  } else {
    await Promise.all(
      toLoad.map((name) =>
        lifecycle.load(name).catch((error: unknown) => {
          logger.error(`failed to load '${name}': ${(error as Error).message}`);
        }),
      ),
    );
  }
  if (options.exitOnError) {
    const failed = toLoad.filter((name) => !fullyReady(lifecycle.get(name)));
    if (failed.length > 0) {
      await poller?.close();
      await lifecycle.close();
      throw new ServerError(
        "INTERNAL",
        `failed to load all models: ${failed.map((n) => `'${n}'`).join(", ")}`,
      );
    }
  }

  const core: InferenceCoreHandle = {
    serverMetadata: () => ({ name: SERVER_NAME, version: SERVER_VERSION, extensions: EXTENSIONS }),
    isLive: () => !closed,
    isReady() {
      if (closed) return false;
      if (!strictReadiness) return true;
      for (const name of startupModels) if (!fullyReady(lifecycle.get(name))) return false;
      return true;
    },
    isModelReady(model, version) {
      try {
        resolveVersion(model, version);
        return true;
      } catch {
        return false;
      }
    },
    modelMetadata(model, version) {
      const { served } = resolveVersion(model, version);
      return modelMetadataOf(
        served.spec,
        readyVersions(model).map((v) => v.version),
      );
    },
    modelConfig(model, version) {
      return resolveVersion(model, version).served.config;
    },
    async infer(request: InferenceRequest): Promise<InferenceResponse> {
      if (closed)
        throw new ServerError("UNAVAILABLE", "Server is stopping, no new inference requests are accepted");
      return runRequest(request);
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
      // Triton's index lists the repository's model directories, with the state of those it holds.
      const rows: RepositoryIndexEntry[] = [];
      for (const name of await listRepository()) {
        const entry = lifecycle.get(name);
        if (!entry) {
          if (!indexOptions?.readyOnly) rows.push({ name });
          continue;
        }
        if (entry.kind === "failed") {
          if (!indexOptions?.readyOnly) rows.push({ name, state: "UNAVAILABLE", reason: entry.reason });
          continue;
        }
        for (const v of versionsOf(entry)) {
          if (indexOptions?.readyOnly && v.state.name !== "READY") continue;
          const reason = v.state.name === "UNAVAILABLE" ? v.state.reason : "";
          rows.push({ name, version: v.version, state: v.state.name, reason });
        }
      }
      return rows;
    },
    async loadModel(model, loadOptions) {
      if (mode !== "explicit") throw new ServerError("UNAVAILABLE", MODEL_CONTROL_DISABLED);
      if (closed) throw new ServerError("UNAVAILABLE", "Server is stopping");
      checkLoadName(model);
      const files = loadOptions?.files ?? {};
      const hasFiles = Object.keys(files).length > 0;
      if (hasFiles && loadOptions?.config === undefined) {
        throw new ServerError(
          "INVALID_ARG",
          "Load parameter 'config' must be specified for model file override",
        );
      }
      // Any other name that is not a directory directly inside the repository (a backslash, NUL, a hidden
      // name, a symlink out) fails Triton's poll as an absent name does, whatever exists on disk.
      if (!hasFiles && !isPlainModelName(model)) {
        throw new ServerError("INTERNAL", `failed to load '${model}', failed to poll from model repository`);
      }
      const config =
        loadOptions?.config !== undefined ? parseConfigOverride(model, loadOptions.config) : undefined;
      const entry = await lifecycle.load(model, {
        ...(config ? { config } : {}),
        ...(hasFiles ? { files } : {}),
      });
      const failures = loadFailures(entry);
      if (failures.length > 0) {
        throw new ServerError("INVALID_ARG", `load failed for model '${model}': ${failures.join("\n")}`);
      }
    },
    async unloadModel(model, unloadOptions) {
      if (mode !== "explicit") throw new ServerError("UNAVAILABLE", MODEL_CONTROL_DISABLED);
      // With unload_dependents, an ensemble's members are unloaded with it.
      const entry = lifecycle.get(model);
      const latest = entry ? readyVersionsOf(entry).at(-1) : undefined;
      const members =
        unloadOptions?.unloadDependents && latest?.state.name === "READY"
          ? ensembleMemberNames(latest.state.served.config)
          : [];
      // Triton answers success for a name that is not loaded: there is nothing to unload.
      await lifecycle.unload(model);
      await Promise.all(members.map((member) => lifecycle.unload(member)));
    },
    metricsSnapshot(): readonly ModelMetricsSnapshot[] {
      return lifecycle
        .entries()
        .flatMap(versionsOf)
        .filter((v) => v.state.name === "READY" || v.state.name === "UNLOADING")
        .map((v) => v.stats.metrics());
    },
    close() {
      closing ??= (async () => {
        closed = true;
        await poller?.close();
        await lifecycle.close();
      })();
      return closing;
    },
    async destroy() {
      closed = true;
      await poller?.close();
      await lifecycle.destroy();
    },
  };
  return core;
}
