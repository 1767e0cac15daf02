/**
 * The KServe v2 protocol's metadata answers as JSON carries them, the same words on both sides: the server
 * writes them (its front ends) and the client reads them (checked against these shapes on arrival).
 */
import type { Datatype } from "./datatypes.js";

/** `GET /v2`: who the server is and which protocol extensions it supports. */
export interface ServerMetadata {
  readonly name: string;
  readonly version: string;
  /** Extension names, e.g. `binary_tensor_data`, `classification`, `model_repository`. */
  readonly extensions: readonly string[];
}

/** One input or output of a model, as its metadata describes it. */
export interface TensorMetadata {
  readonly name: string;
  readonly datatype: Datatype;
  /** -1 marks a variable dimension; includes the batch dimension (-1) where max_batch_size > 0. */
  readonly shape: readonly number[];
}

/** `GET /v2/models/{model}[/versions/{v}]`. */
export interface ModelMetadata {
  readonly name: string;
  /** Available versions (may be absent on servers without versions). */
  readonly versions: readonly string[];
  readonly platform: string;
  readonly inputs: readonly TensorMetadata[];
  readonly outputs: readonly TensorMetadata[];
}

/** One entry of the repository index (Triton's RepositoryIndex). */
export interface RepositoryIndexEntry {
  readonly name: string;
  readonly version?: string;
  /** READY, UNAVAILABLE, LOADING, UNLOADING; absent for a model that was never loaded. */
  readonly state?: string;
  /** Why the model is in its state, if any. */
  readonly reason?: string;
}
