// Test helper: a model config tensor (input or output) with the defaults a plain config.pbtxt entry gets.
import type { Datatype } from "@tbench/proto";
import type { TensorSpec } from "../repository/model-spec.js";

/** A required, non-ragged tensor without labels; `extra` adds or changes fields (reshape, optional). */
export const tensorSpec = (
  name: string,
  datatype: Datatype,
  dims: number[],
  extra: Partial<TensorSpec> = {},
): TensorSpec => ({
  name,
  datatype,
  dims,
  optional: false,
  allowRaggedBatch: false,
  labelFilename: "",
  ...extra,
});
