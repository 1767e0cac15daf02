export { grpc, inference } from "#gen/static";
export type {
  ConfigDataType,
  Datatype,
  DatatypeInfo,
  FixedSizeDatatype,
  OrtTensorType,
  TensorTypedArray,
  TypedArrayByDatatype,
  TypedArrayConstructor,
} from "./datatypes.js";
export {
  allDatatypes,
  DATATYPES,
  datatypeFromConfigType,
  datatypeFromOnnxType,
  datatypeFromOrtType,
  datatypeInfo,
  isDatatype,
  unhandledDatatype,
} from "./datatypes.js";
export {
  bfloat16BitsToFloat32,
  bfloat16BitsToFloat32Array,
  float16BitsToFloat32,
  float16BitsToFloat32Array,
  float32ArrayToBfloat16Bits,
  float32ArrayToFloat16Bits,
  float32ToBfloat16Bits,
  float32ToFloat16Bits,
} from "./float16.js";
export { grpcInferenceServiceMethods, healthServiceMethods } from "./gen/services.js";
export { NARROW_INTEGER_RANGES, WIDE_INTEGER_RANGES } from "./integer-ranges.js";
export { findDataSpans, findMemberSpan, forEachDataElement, type TextSpan } from "./json-data-spans.js";
export type {
  BatchInput,
  BatchInput_Kind,
  BatchOutput,
  BatchOutput_Kind,
  ModelConfig,
  ModelDynamicBatching,
  ModelEnsembling,
  ModelEnsembling_Step,
  ModelInput,
  ModelInput_Format,
  ModelInstanceGroup,
  ModelInstanceGroup_Kind,
  ModelMetrics,
  ModelOperations,
  ModelOptimizationPolicy,
  ModelOptimizationPolicy_ExecutionAccelerators_Accelerator,
  ModelOutput,
  ModelParameter,
  ModelQueuePolicy,
  ModelQueuePolicy_TimeoutAction,
  ModelRateLimiter,
  ModelRepositoryAgents,
  ModelResponseCache,
  ModelSequenceBatching,
  ModelSequenceBatching_Control,
  ModelSequenceBatching_ControlInput,
  ModelSequenceBatching_State,
  ModelSequenceBatching_StrategyDirect,
  ModelSequenceBatching_StrategyOldest,
  ModelTensorReshape,
  ModelTransactionPolicy,
  ModelVersionPolicy,
  ModelWarmup,
  ModelWarmup_Input,
} from "./model-config.js";
export { withDefaults } from "./pbtxt/defaults.js";
export type { TextFormatErrorOptions } from "./pbtxt/errors.js";
export { TextFormatError, TextFormatValueError } from "./pbtxt/errors.js";
export type { ParseModelConfigOptions } from "./pbtxt/model-config-codec.js";
export { applyModelConfigDefaults, parseModelConfig, printModelConfig } from "./pbtxt/model-config-codec.js";
export type { ParseTextFormatOptions } from "./pbtxt/parser.js";
export { parseTextFormat } from "./pbtxt/parser.js";
export { printTextFormat } from "./pbtxt/printer.js";
export type { TextMessage, TextScalar, TextValue } from "./pbtxt/text-message.js";
export type { PrometheusSample, PrometheusSamples } from "./prometheus-text.js";
export { parsePrometheusText } from "./prometheus-text.js";
export { modelConfigType, protoRoot } from "./proto-root.js";
export type { ClientErrorKind, GrpcStatusName, TritonErrorCode, TritonStatusRow } from "./status-codes.js";
export {
  CLIENT_ERROR_CLASS,
  clientKindFromGrpcStatus,
  clientKindFromHttpStatus,
  GRPC_STATUS,
  GRPC_STATUS_CLIENT_KIND,
  GRPC_STATUS_NAMES,
  grpcStatusFromTriton,
  HTTP_STATUS_CLIENT_KIND,
  httpStatusFromTriton,
  TRITON_ERROR_CODES,
  TRITON_STATUS,
} from "./status-codes.js";
export type { ModelMetadata, RepositoryIndexEntry, ServerMetadata, TensorMetadata } from "./v2-metadata.js";
