/**
 * Types of an inference request. An input's `data` type follows from its `datatype`, through the datatype
 * table's TypedArrayByDatatype, so a Float32Array given for an INT64 input does not compile.
 */
import type { Datatype, TypedArrayByDatatype } from "@tbench/proto";

/** A request, output or response parameter value, as the v2 protocol carries them. */
export type ParameterValue = string | number | boolean;

/** A set of parameters (request-level, input-level or output-level). */
export type Parameters = Record<string, ParameterValue>;

/**
 * The correlation id of a stateful sequence (Triton's sequence batcher): an unsigned 64-bit integer, given
 * as a safe integer >= 1 or as a bigint in 1..2^64-1, or a string of 1 to 128 characters. 0 and "" mean
 * "no sequence" to Triton, so they are refused.
 */
export type SequenceId = number | bigint | string;

/**
 * What an input's `data` may be, for each datatype: the datatype's TypedArray, or a plain array where one
 * reads naturally. FP16 and BF16 take raw bit patterns only (see `float32ArrayToFloat16Bits`).
 */
export interface InputDataByDatatype {
  BOOL: boolean[] | TypedArrayByDatatype["BOOL"];
  UINT8: TypedArrayByDatatype["UINT8"] | number[];
  UINT16: TypedArrayByDatatype["UINT16"] | number[];
  UINT32: TypedArrayByDatatype["UINT32"] | number[];
  UINT64: TypedArrayByDatatype["UINT64"] | bigint[];
  INT8: TypedArrayByDatatype["INT8"] | number[];
  INT16: TypedArrayByDatatype["INT16"] | number[];
  INT32: TypedArrayByDatatype["INT32"] | number[];
  INT64: TypedArrayByDatatype["INT64"] | bigint[];
  FP16: TypedArrayByDatatype["FP16"];
  FP32: TypedArrayByDatatype["FP32"] | number[];
  FP64: TypedArrayByDatatype["FP64"] | number[];
  BF16: TypedArrayByDatatype["BF16"];
  BYTES: string[] | Uint8Array[];
}

/** An input tensor of one datatype `D`. */
export interface InferInputOf<D extends Datatype> {
  /** Input name, as the model declares it. */
  name: string;
  /** KServe v2 datatype; decides what `data` may be. */
  datatype: D;
  /** Shape, batch dimension included where the model batches. Its product must equal the element count. */
  shape: readonly number[];
  /** Elements in row-major order. */
  data: InputDataByDatatype[D];
  /** Input-level parameters sent with the tensor. */
  parameters?: Parameters;
}

/** An input tensor: a union discriminated by `datatype`. */
export type InferInput = { [D in Datatype]: InferInputOf<D> }[Datatype];

/** An output the caller asks for. Without `outputs` in the request, the server returns every output. */
export interface RequestedOutput {
  /** Output name, as the model declares it. */
  name: string;
  /** Return this output as binary data (default: the request's `binaryOutputs`). */
  binary?: boolean;
  /** Ask for the top-k classes of this output instead of the tensor (Triton's classification extension). */
  classification?: number;
  /** Further output-level parameters. */
  parameters?: Parameters;
}

/** An inference request. */
export interface InferRequest {
  /** Input tensors. */
  inputs: readonly InferInput[];
  /** Outputs to return; default: all of the model's outputs. */
  outputs?: readonly RequestedOutput[];
  /** Request id, echoed by the server and kept on errors as `requestId`. */
  id?: string;
  /** Model version; default: the version the server's policy picks. */
  modelVersion?: string;
  /** Request-level parameters. */
  parameters?: Parameters;
  /** Scheduling priority (1 is highest); 0 or absent: the model's default. Sent as the `priority` parameter. */
  priority?: number;
  /** Server-side queue timeout in microseconds. Sent as the `timeout` parameter. */
  timeoutUs?: number;
  /**
   * The stateful sequence this request belongs to. Sent as the `sequence_id` parameter: a JSON unsigned
   * integer (exact digits, also above 2^53) or string over HTTP; `int64_param` (a uint64 above 2^63-1 as the
   * int64 with the same 64 bits, which Triton reads back as uint64) or `string_param` over gRPC.
   * `createSequence` sets it, with the flags below, on every request of a sequence.
   */
  sequenceId?: SequenceId;
  /**
   * Marks the first request of a sequence. Sent as the `sequence_start` parameter whenever given (false
   * too); absent means false to Triton. `true` needs a sequence id (`sequenceId` or `parameters.sequence_id`).
   */
  sequenceStart?: boolean;
  /**
   * Marks the last request of a sequence: the server releases the sequence after it. Sent as the
   * `sequence_end` parameter whenever given (false too); `true` needs a sequence id, as `sequenceStart`.
   */
  sequenceEnd?: boolean;
  /** Send inputs as binary data (default true). FP16 and BF16 inputs always travel as binary. */
  binaryInputs?: boolean;
  /** Ask for outputs as binary data (default true); a RequestedOutput's `binary` overrides it. */
  binaryOutputs?: boolean;
}
