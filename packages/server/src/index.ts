export {
  bytesDataFromArrays,
  bytesDataFromStrings,
  bytesDataToArrays,
  bytesDataToStrings,
  DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
} from "./core/bytes-data.js";
export type { CancelSignal } from "./core/cancel-signal.js";
export type { Clock, TimerHandle } from "./core/clock.js";
export { createSystemClock } from "./core/clock.js";
export * from "./core/logger.js";
export type { RestrictedApis, RestrictedCategory, Restriction } from "./core/restricted-api.js";
export { RESTRICTED_CATEGORIES } from "./core/restricted-api.js";
export * from "./core/server-error.js";
export type * from "./core/types.js";
export type { GrpcCompressionLevel, GrpcServerSettings } from "./grpc/grpc-server-settings.js";
export type { GrpcTlsOptions } from "./grpc/grpc-tls.js";
export type { HttpCorsOptions } from "./http/cors.js";
export type { HttpTlsOptions } from "./http/http-tls.js";
export type {
  InferenceCoreHandle,
  InferenceCoreOptions,
  ModelControlMode,
} from "./lifecycle/create-inference-core.js";
export { createInferenceCore } from "./lifecycle/create-inference-core.js";
export type { RunningServer, ServerOptions } from "./server.js";
export { startServer } from "./server.js";
