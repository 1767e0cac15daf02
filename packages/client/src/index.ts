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
export type { TlsOptions } from "./connection-options.js";
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
export type { FetchFunction } from "./fetch/fetch-client-options.js";
export { createGrpcClient } from "./grpc/grpc-client.js";
export type { GrpcClientOptions } from "./grpc/grpc-client-options.js";
export type {
  GrpcInferenceClient,
  InferStream,
  StreamOptions,
  StreamResult,
} from "./grpc/grpc-inference-client.js";
export { createHttpClient } from "./http/http-client.js";
export type { CompressionOptions, HttpClientOptions, HttpEngine } from "./http/http-client-options.js";
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
