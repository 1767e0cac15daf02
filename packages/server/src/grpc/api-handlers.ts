/**
 * The unary RPCs other than ModelInfer: health, metadata, readiness, configuration, statistics, the
 * repository extension, grpc.health.v1 Check, and the shared-memory, trace and log RPCs answered as Triton
 * answers them when the feature is off (server src/grpc/grpc_server.cc). Each takes the decoded request
 * and returns the response's properties or throws a ServerError; the front end turns both into the call's
 * answer. Semantics are the HTTP front end's, through the same InferenceCore.
 */
import { type grpc, inference } from "@tbench/proto";
import { ServerError } from "../core/server-error.js";
import type { InferenceCore } from "../core/types.js";
import { invalidArg, versionFromString } from "./grpc-status.js";

type RepositoryParameter = inference.ModelRepositoryParameter.$Properties & { parameter_choice?: string };
type Handler = (core: InferenceCore, request: never) => unknown | Promise<unknown>;

const SHM_DISABLED = "Client shared memory is not supported by tbench-server";

function unsupported(message: string): never {
  throw new ServerError("UNSUPPORTED", message);
}

function noRepositoryName(name: string | null | undefined): void {
  if (name !== undefined && name !== null && name !== "") {
    unsupported("'repository_name' specification is not supported");
  }
}

function loadOptions(parameters: Readonly<Record<string, RepositoryParameter>>): {
  config?: string;
  files?: Record<string, Uint8Array>;
} {
  const options: { config?: string; files?: Record<string, Uint8Array> } = {};
  for (const [key, param] of Object.entries(parameters)) {
    if (key === "config") {
      if (param.parameter_choice !== "string_param")
        throw invalidArg(`invalid value type for load parameter '${key}', expected string_param.`);
      options.config = param.string_param ?? "";
    } else if (key.startsWith("file:")) {
      if (param.parameter_choice !== "bytes_param")
        throw invalidArg(`invalid value type for load parameter '${key}', expected bytes_param.`);
      options.files ??= {};
      options.files[key.slice("file:".length)] = param.bytes_param ?? new Uint8Array();
    } else {
      throw invalidArg(`unrecognized load parameter '${key}'.`);
    }
  }
  return options;
}

/** The unary handlers of inference.GRPCInferenceService, by method name (ModelInfer is infer-handlers.ts). */
export const API_HANDLERS = {
  ServerLive: (core: InferenceCore) => ({ live: core.isLive() }),
  ServerReady: (core: InferenceCore) => ({ ready: core.isReady() }),
  // Triton's ModelIsReady reports false (no error) for an unknown model or version.
  ModelReady: (core: InferenceCore, request: inference.ModelReadyRequest) => ({
    ready: core.isModelReady(request.name, versionFromString(request.version)),
  }),
  ServerMetadata: (core: InferenceCore) => {
    const meta = core.serverMetadata();
    return { name: meta.name, version: meta.version, extensions: [...meta.extensions] };
  },
  ModelMetadata: (core: InferenceCore, request: inference.ModelMetadataRequest) => {
    const meta = core.modelMetadata(request.name, versionFromString(request.version));
    const tensor = (t: { name: string; datatype: string; shape: readonly number[] }) => ({
      name: t.name,
      datatype: t.datatype,
      shape: [...t.shape],
    });
    return {
      name: meta.name,
      versions: [...meta.versions],
      platform: meta.platform,
      inputs: meta.inputs.map(tensor),
      outputs: meta.outputs.map(tensor),
    };
  },
  ModelConfig: (core: InferenceCore, request: inference.ModelConfigRequest) => ({
    config: inference.ModelConfig.fromObject(
      core.modelConfig(request.name, versionFromString(request.version)),
    ),
  }),
  ModelStatistics: (core: InferenceCore, request: inference.ModelStatisticsRequest) => {
    const name = request.name === "" ? undefined : request.name;
    const stats = core.modelStatistics(name, versionFromString(request.version));
    return inference.ModelStatisticsResponse.fromObject({ model_stats: stats });
  },
  RepositoryIndex: async (core: InferenceCore, request: inference.RepositoryIndexRequest) => {
    noRepositoryName(request.repository_name);
    const index = await core.repositoryIndex({ readyOnly: request.ready });
    return {
      models: index.map((entry) => ({
        name: entry.name,
        version: entry.version ?? "",
        state: entry.state ?? "",
        reason: entry.reason ?? "",
      })),
    };
  },
  RepositoryModelLoad: async (core: InferenceCore, request: inference.RepositoryModelLoadRequest) => {
    noRepositoryName(request.repository_name);
    await core.loadModel(
      request.model_name,
      loadOptions(request.parameters as Record<string, RepositoryParameter>),
    );
    return {};
  },
  RepositoryModelUnload: async (core: InferenceCore, request: inference.RepositoryModelUnloadRequest) => {
    noRepositoryName(request.repository_name);
    let unloadDependents = false;
    const param = (request.parameters as Record<string, RepositoryParameter>)["unload_dependents"];
    if (param !== undefined) {
      if (param.parameter_choice !== "bool_param")
        throw invalidArg("invalid value type for 'unload_dependents' parameter, expected bool_param.");
      unloadDependents = param.bool_param === true;
    }
    await core.unloadModel(request.model_name, { unloadDependents });
    return {};
  },
  // No region can be registered, so the status lists none and names none (shared_memory_manager.cc).
  SystemSharedMemoryStatus: (_core: InferenceCore, request: inference.SystemSharedMemoryStatusRequest) => {
    if (request.name !== "")
      throw new ServerError("NOT_FOUND", `Unable to find system shared memory region: '${request.name}'`);
    return { regions: {} };
  },
  SystemSharedMemoryRegister: () => unsupported(SHM_DISABLED),
  SystemSharedMemoryUnregister: () => unsupported(SHM_DISABLED),
  CudaSharedMemoryStatus: (_core: InferenceCore, request: inference.CudaSharedMemoryStatusRequest) => {
    if (request.name !== "")
      throw new ServerError("NOT_FOUND", `Unable to find cuda shared memory region: '${request.name}'`);
    return { regions: {} };
  },
  CudaSharedMemoryRegister: () => unsupported(SHM_DISABLED),
  CudaSharedMemoryUnregister: () => unsupported(SHM_DISABLED),
  TraceSetting: () => {
    throw new ServerError("UNAVAILABLE", "the server does not support trace");
  },
  LogSettings: () => {
    throw new ServerError("UNAVAILABLE", "the server does not support dynamic logging");
  },
} satisfies Record<string, Handler>;

/** grpc.health.v1.Health/Check: SERVING when the server is ready (Triton asks TRITONSERVER_ServerIsReady). */
export function healthCheck(core: InferenceCore): grpc.health.v1.HealthCheckResponse.$Properties {
  return { status: core.isReady() ? 1 : 2 };
}
