/**
 * The server's core, composed: the model lifecycle (loaded models and their versions), model control
 * (startup loads, the poller, the repository API), the request router (lookup, validation, scheduler),
 * ensembles, and the InferenceCore the front ends call. This is the composition root: what it answers
 * itself is only the server's own metadata, liveness and readiness, and the shutdown.
 */
import { realpath } from "node:fs/promises";
import { resolve } from "node:path";
import { type Clock, createSystemClock } from "../core/clock.js";
import { createConsoleLogger, type Logger } from "../core/logger.js";
import { ServerError } from "../core/server-error.js";
import { createTrace } from "../core/trace.js";
import type { InferenceCore, ModelMetricsSnapshot, ModelStatistics } from "../core/types.js";
import type { GpuExecutionProvider } from "../instances/worker-protocol.js";
import { resolveModelDirectory } from "../repository/confinement.js";
import type { LatencyObserver } from "../stats/model-stats.js";
import { type EnsembleDependencies, loadEnsembleVersion } from "./ensemble-loader.js";
import { type ModelControl, type ModelControlMode, startModelControl } from "./model-control.js";
import { createModelLifecycle } from "./model-lifecycle.js";
import { modelMetadataOf } from "./model-metadata.js";
import { createRequestRouter } from "./request-router.js";
import { versionsOf } from "./version-state.js";

export type { ModelControlMode } from "./model-control.js";

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

/** Creates the core and loads the startup models. */
export async function createInferenceCore(options: InferenceCoreOptions): Promise<InferenceCoreHandle> {
  // Real path, so that symlinks cannot make a model directory look inside the repository when it is not.
  const repository = await realpath(resolve(options.modelRepository)).catch(() =>
    resolve(options.modelRepository),
  );
  const logger = options.logger ?? createConsoleLogger();
  const clock = options.clock ?? createSystemClock();
  const strictReadiness = options.strictReadiness ?? true;
  // Ensembles run their steps through the router, which needs the lifecycle that loads them.
  const ensembles: EnsembleDependencies = {
    clock,
    get: (name) => lifecycle.get(name),
    inRepository: async (name) => (await resolveModelDirectory(repository, name)) !== undefined,
    loadMember: (name) => lifecycle.load(name),
    inferMember: (request, stats) => router.run(request, stats),
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
  const router = createRequestRouter({
    lifecycle,
    clock,
    maxBytesTensorElements: options.maxBytesTensorElements,
  });
  let closed = false;
  let closing: Promise<void> | undefined;
  let control: ModelControl;
  try {
    control = await startModelControl({
      repository,
      lifecycle,
      logger,
      mode: options.modelControlMode ?? "none",
      loadModels: options.loadModels,
      repositoryPollSecs: options.repositoryPollSecs ?? DEFAULT_REPOSITORY_POLL_SECS,
      exitOnError: options.exitOnError === true,
      isStopping: () => closed,
    });
  } catch (error) {
    await lifecycle.close();
    throw error;
  }

  return {
    serverMetadata: () => ({ name: SERVER_NAME, version: SERVER_VERSION, extensions: EXTENSIONS }),
    isLive: () => !closed,
    isReady: () => !closed && (!strictReadiness || control.startupModelsReady()),
    isModelReady(model, version) {
      try {
        router.resolve(model, version);
        return true;
      } catch {
        return false;
      }
    },
    modelMetadata(model, version) {
      const { served } = router.resolve(model, version);
      return modelMetadataOf(
        served.spec,
        router.readyVersions(model).map((v) => v.version),
      );
    },
    modelConfig: (model, version) => router.resolve(model, version).served.config,
    async infer(request) {
      if (closed)
        throw new ServerError("UNAVAILABLE", "Server is stopping, no new inference requests are accepted");
      return router.run(request);
    },
    inferStream(request, sink) {
      if (closed) {
        sink.error(
          new ServerError("UNAVAILABLE", "Server is stopping, no new inference requests are accepted"),
        );
        return;
      }
      router.runStream(request, sink);
    },
    isDecoupled: (model, version) => router.resolve(model, version).served.decoupled === true,
    modelStatistics(model, version): readonly ModelStatistics[] {
      if (model === undefined || model === "") return router.readyVersions().map((v) => v.stats.statistics());
      // Triton's TRITONSERVER_ServerModelStatistics: INVALID_ARG for a model with no ready version, and for
      // a version that is not among the ready ones.
      const ready = router.readyVersions(model);
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
    repositoryIndex: (indexOptions) => control.repositoryIndex(indexOptions),
    loadModel: (model, loadOptions) => control.loadModel(model, loadOptions),
    unloadModel: (model, unloadOptions) => control.unloadModel(model, unloadOptions),
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
        await control.close();
        await lifecycle.close();
      })();
      return closing;
    },
    async destroy() {
      closed = true;
      await control.close();
      await lifecycle.destroy();
    },
  };
}
