/**
 * The entry point of browsers, web workers, edge runtimes (workerd), Deno and Bun (package.json's conditional
 * exports pick it; `@tbench/client/browser` names it anywhere). `createHttpClient` here sends with the
 * standard fetch; everything else is what the Node entry exports, less gRPC (Node only: browsers cannot
 * speak HTTP/2 gRPC) and TLS options (the runtime's). Nothing reachable from here imports `node:*`, undici
 * or @grpc/grpc-js (browser-entry.test.ts bundles it to check).
 */
export {
  bfloat16BitsToFloat32,
  bfloat16BitsToFloat32Array,
  float16BitsToFloat32,
  float16BitsToFloat32Array,
  float32ArrayToBfloat16Bits,
  float32ArrayToFloat16Bits,
  float32ToBfloat16Bits,
  float32ToFloat16Bits,
} from "@tbench/proto";
export type { AuthHook, AuthOptions } from "./auth-options.js";
export type { ServerErrorDetails } from "./error-mapping.js";
export { errorFromGrpcStatus, errorFromHttpStatus } from "./error-mapping.js";
export type { ErrorCode, InferenceErrorOptions } from "./errors.js";
export {
  AbortedError,
  ClientClosedError,
  ConnectionError,
  DeadlineExceededError,
  ERROR_CODES,
  InferenceError,
  InternalServerError,
  InvalidArgumentError,
  MalformedResponseError,
  ModelNotFoundError,
  PermissionDeniedError,
  UnauthenticatedError,
  UnavailableError,
  UnknownError,
  UnsupportedError,
} from "./errors.js";
export { createFetchClient as createHttpClient } from "./fetch/fetch-client.js";
export type {
  FetchClientOptions as HttpClientOptions,
  FetchFunction,
} from "./fetch/fetch-client-options.js";
export type { CompressionOptions } from "./http/http-common-options.js";
export type { InferResult, OutputTensor, OutputTypedArray, OutputValues } from "./infer-result.js";
export type { Sequence, SequenceOptions, SequenceRequest, SequenceState } from "./infer-sequence.js";
export { createSequence } from "./infer-sequence.js";
export type {
  CallOptions,
  InferenceClient,
  LoadModelOptions,
  PreparedInfer,
  RepositoryIndexOptions,
  UnloadModelOptions,
} from "./inference-client.js";
export type {
  BatchStatistics,
  DurationStatistic,
  InferStatistics,
  LogSettings,
  LogSettingsUpdate,
  LogSettingValue,
  ModelMetadata,
  ModelStatistics,
  RepositoryIndexEntry,
  ServerMetadata,
  SharedMemoryRegion,
  SharedMemoryRegionStatus,
  TensorMetadata,
  TraceSettings,
  TraceSettingsUpdate,
  TraceSettingValue,
} from "./result-types.js";
export type { BackoffOptions } from "./retry-policy.js";
export type {
  InferInput,
  InferInputOf,
  InferRequest,
  InputDataByDatatype,
  Parameters,
  ParameterValue,
  RequestedOutput,
  SequenceId,
} from "./tensor-types.js";
