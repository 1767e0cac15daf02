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
} from "./datatypes.js";
export type { ModelConfig } from "./model-config.js";
