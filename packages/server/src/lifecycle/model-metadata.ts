/**
 * Model metadata (KServe v2 `GET /v2/models/{m}`): inputs and outputs with the batch dimension (-1) in
 * front when the model batches, as Triton reports them.
 */

import type { ModelMetadata, TensorMetadata } from "../core/types.js";
import type { ModelSpec, TensorSpec } from "../repository/model-spec.js";

function tensorMetadata(spec: ModelSpec, io: TensorSpec): TensorMetadata {
  return {
    name: io.name,
    datatype: io.datatype,
    shape: spec.maxBatchSize > 0 ? [-1, ...io.dims] : [...io.dims],
  };
}

/** Metadata of a loaded model; `versions`: its ready versions. */
export function modelMetadataOf(spec: ModelSpec, versions: readonly string[]): ModelMetadata {
  return {
    name: spec.name,
    versions,
    platform: spec.platform,
    inputs: spec.inputs.map((io) => tensorMetadata(spec, io)),
    outputs: spec.outputs.map((io) => tensorMetadata(spec, io)),
  };
}
