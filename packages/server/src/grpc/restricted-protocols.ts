/**
 * `--grpc-restricted-protocol` on the gRPC front end: the restricted category of each RPC (as Triton's
 * grpc_server.cc registers them; grpc.health.v1 Check is `health`, both infer RPCs `inference`) and the
 * check Triton's ExecutePrecondition makes: the call's metadata must hold `triton-grpc-protocol-<key>`
 * with the value, else the call ends UNAVAILABLE `This protocol is restricted, expecting header
 * 'triton-grpc-protocol-<key>'` (Triton's code and words, not PERMISSION_DENIED).
 */
import type { Metadata } from "@grpc/grpc-js";
import { GRPC_STATUS, type grpcInferenceServiceMethods } from "@tbench/proto";
import {
  GRPC_RESTRICTED_HEADER_PREFIX,
  type RestrictedApis,
  type RestrictedCategory,
} from "../core/restricted-api.js";
import type { GrpcStatus } from "./grpc-status.js";

/**
 * An RPC tbench-server serves: a method of inference.GRPCInferenceService (from the generated service
 * definition, so a method the proto gains is a name here at once) or grpc.health.v1 Check.
 */
export type RpcName = keyof typeof grpcInferenceServiceMethods | "Check";

/**
 * The restricted category of each RPC served. Keyed by every RpcName: a method missing here is a compile
 * error, never an RPC that slips past --grpc-restricted-protocol.
 */
export const RPC_CATEGORY: Readonly<Record<RpcName, RestrictedCategory>> = {
  ServerLive: "health",
  ServerReady: "health",
  ModelReady: "health",
  Check: "health",
  ServerMetadata: "metadata",
  ModelMetadata: "metadata",
  ModelConfig: "model-config",
  ModelStatistics: "statistics",
  ModelInfer: "inference",
  ModelStreamInfer: "inference",
  RepositoryIndex: "model-repository",
  RepositoryModelLoad: "model-repository",
  RepositoryModelUnload: "model-repository",
  SystemSharedMemoryStatus: "shared-memory",
  SystemSharedMemoryRegister: "shared-memory",
  SystemSharedMemoryUnregister: "shared-memory",
  CudaSharedMemoryStatus: "shared-memory",
  CudaSharedMemoryRegister: "shared-memory",
  CudaSharedMemoryUnregister: "shared-memory",
  TraceSetting: "trace",
  LogSettings: "logging",
};

/** Answers the status refusing a call to `method`, or undefined when the call may go on. */
export type ProtocolGuard = (method: RpcName, metadata: Metadata) => GrpcStatus | undefined;

/** The guard for `protocols`; with none restricted it lets everything through at no cost. */
export function createProtocolGuard(protocols: RestrictedApis): ProtocolGuard {
  if (Object.keys(protocols).length === 0) return () => undefined;
  return (method, metadata) => {
    const restriction = protocols[RPC_CATEGORY[method]];
    if (restriction === undefined) return undefined;
    const header = GRPC_RESTRICTED_HEADER_PREFIX + restriction.key;
    // The first value of that key counts (Triton's multimap find); grpc-js lowercases the key.
    const given = metadata.get(header)[0];
    if (typeof given === "string" && given === restriction.value) return undefined;
    return {
      code: GRPC_STATUS.UNAVAILABLE,
      details: `This protocol is restricted, expecting header '${header}'`,
    };
  };
}
