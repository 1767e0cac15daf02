/**
 * Encodes an infer request into one HTTP body, per Triton's binary tensor data extension
 * (docs/protocol/extension_binary_data.md): the JSON inference request, then each binary input's raw bytes
 * (little-endian, row-major, no padding) in the order the inputs appear in the JSON. Each binary input
 * carries `binary_data_size`; `Inference-Header-Content-Length` gives the JSON length. BOOL is one byte
 * per element; BYTES elements are a 4-byte little-endian length then the bytes. Inputs sent as JSON carry
 * a flat row-major `data` array instead. The body is assembled with one allocation and one copy per
 * tensor: TypedArray inputs are not copied before that. Plain Uint8Arrays throughout (bytes.ts), so the
 * fetch transport in a browser encodes with the same code.
 */
import { type Datatype, datatypeInfo, unhandledDatatype } from "@tbench/proto";
import { allocBytes, utf8Length, writeUtf8 } from "../bytes.js";
import { InvalidArgumentError } from "../errors.js";
import { type SequenceParameters, sequenceParametersOf } from "../sequence-parameters.js";
import { binaryOf, dataLength, elementCount, invalid } from "../tensor-encoding.js";
import type { InferInput, InferRequest, Parameters } from "../tensor-types.js";

/** An encoded request body. */
export interface EncodedInferRequest {
  readonly body: Uint8Array;
  /** JSON header length, when the body carries binary data (else the whole body is JSON). */
  readonly jsonLength: number | undefined;
}

const utf8Strict = new TextDecoder("utf-8", { fatal: true });

/** The `data` array of a JSON input, as JSON text (64-bit integers written exactly). */
function jsonDataOf(input: InferInput, datatype: Datatype): string {
  const data = input.data as unknown as ArrayLike<unknown> & { join(sep: string): string };
  switch (datatype) {
    case "BOOL": {
      const parts = new Array<string>(data.length);
      for (let i = 0; i < data.length; i++) parts[i] = data[i] ? "true" : "false";
      return `[${parts.join(",")}]`;
    }
    case "BYTES": {
      const strings = new Array<string>(data.length);
      for (let i = 0; i < data.length; i++) {
        const el = data[i];
        if (typeof el === "string") strings[i] = el;
        else if (el instanceof Uint8Array) {
          try {
            strings[i] = utf8Strict.decode(el);
          } catch (error) {
            throw new InvalidArgumentError(
              `input '${input.name}': BYTES element ${i} is not UTF-8, so it cannot travel as JSON; send it as binary`,
              { cause: error },
            );
          }
        } else
          throw invalid(`input '${input.name}': BYTES element ${i} is neither a string nor a Uint8Array`);
      }
      return JSON.stringify(strings);
    }
    case "FP32":
    case "FP64":
      for (let i = 0; i < data.length; i++) {
        if (!Number.isFinite(data[i])) {
          throw invalid(
            `input '${input.name}': element ${i} is ${data[i]}, which JSON cannot carry; send it as binary`,
          );
        }
      }
      return `[${data.join(",")}]`;
    case "INT8":
    case "INT16":
    case "INT32":
    case "INT64":
    case "UINT8":
    case "UINT16":
    case "UINT32":
    case "UINT64":
    case "FP16": // raw bit patterns, as the caller gives them
    case "BF16": {
      // Integers: validate through the binary conversion (rejects wrong element types), then print.
      const bytes = binaryOf(input, datatype);
      const Ctor = datatypeInfo(datatype)!.typedArray!;
      const info = datatypeInfo(datatype)!;
      const typed = new Ctor(bytes.slice().buffer, 0, bytes.byteLength / info.byteSize!);
      return `[${typed.join(",")}]`;
    }
    default:
      return unhandledDatatype(datatype);
  }
}

function withParameters(base: Parameters | undefined, extra: Parameters): Parameters {
  return base === undefined ? extra : { ...base, ...extra };
}

/**
 * Encodes a request. Throws InvalidArgumentError for a bad input, before anything is sent. With `scratch`
 * at least as long as the body, the body is written into its start (and is a view of it) instead of into
 * new memory: a large body then costs a copy, not also fresh pages to fault in (see http-client.ts).
 */
export function encodeInferRequest(request: InferRequest, scratch?: Uint8Array): EncodedInferRequest {
  const { json, jsonLength, parts, binaryTotal } = encodeInferParts(request);
  const total = jsonLength + binaryTotal;
  const body =
    scratch !== undefined && scratch.length >= total ? scratch.subarray(0, total) : allocBytes(total);
  writeUtf8(body, json);
  let pos = jsonLength;
  for (const part of parts) {
    body.set(part, pos);
    pos += part.byteLength;
  }
  return { body, jsonLength: parts.length > 0 ? jsonLength : undefined };
}

/** A request as its JSON header and its binary inputs' bytes, not yet joined into one body. */
export interface InferParts {
  readonly json: string;
  /** The JSON header's length in UTF-8. */
  readonly jsonLength: number;
  /** Each binary input's bytes, in order (views where the input is a TypedArray of its datatype). */
  readonly parts: Uint8Array[];
  /** Bytes in all parts. */
  readonly binaryTotal: number;
}

/** Checks and encodes a request into its parts; InvalidArgumentError for a bad input. */
export function encodeInferParts(request: InferRequest): InferParts {
  const inputs = request.inputs;
  if (!Array.isArray(inputs)) throw invalid("infer: request.inputs must be an array of tensors");
  const binaryInputs = request.binaryInputs ?? true;
  const binaryOutputs = request.binaryOutputs ?? true;
  const parts: Uint8Array[] = [];
  let binaryTotal = 0;
  const inputJson = new Array<string>(inputs.length);
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i]!;
    const datatype = input.datatype;
    if (typeof input.name !== "string") throw invalid(`infer: input ${i} has no name`);
    if (datatypeInfo(datatype) === undefined) {
      throw invalid(`input '${input.name}': unknown datatype ${JSON.stringify(datatype)}`);
    }
    const count = elementCount(input);
    const length = dataLength(input);
    if (count !== length) {
      throw invalid(
        `input '${input.name}': shape [${input.shape}] holds ${count} elements but data has ${length}`,
      );
    }
    const head = { name: input.name, shape: input.shape, datatype };
    if (binaryInputs || datatype === "FP16" || datatype === "BF16") {
      const bytes = binaryOf(input, datatype);
      parts.push(bytes);
      binaryTotal += bytes.byteLength;
      if (input.parameters === undefined) {
        // The common case written directly: the same text JSON.stringify gives (the shape holds checked
        // integers, the datatype is a known ASCII name), without building and walking two objects.
        inputJson[i] =
          `{"name":${JSON.stringify(input.name)},"shape":[${input.shape.join(",")}],` +
          `"datatype":"${datatype}","parameters":{"binary_data_size":${bytes.byteLength}}}`;
      } else {
        const parameters = withParameters(input.parameters, { binary_data_size: bytes.byteLength });
        inputJson[i] = JSON.stringify({ ...head, parameters });
      }
    } else {
      const text = JSON.stringify(
        input.parameters === undefined ? head : { ...head, parameters: input.parameters },
      );
      inputJson[i] = `${text.slice(0, -1)},"data":${jsonDataOf(input, datatype)}}`;
    }
  }
  const json = `{${idJsonOf(request)}"inputs":[${inputJson.join(",")}]${tailJsonOf(request, binaryOutputs)}}`;
  return { json, jsonLength: utf8Length(json), parts, binaryTotal };
}

function idJsonOf(request: InferRequest): string {
  return request.id === undefined ? "" : `"id":${JSON.stringify(request.id)},`;
}

/**
 * The sequence parameters as JSON object members: `sequence_id` an unsigned integer written with its exact
 * digits (a uint64 above 2^53 too, which JSON.stringify cannot write from a number) or a string, then the
 * flags that were given.
 */
function sequenceJsonOf(sequence: SequenceParameters): string {
  const members: string[] = [];
  if (sequence.id !== undefined) {
    const id = typeof sequence.id === "bigint" ? sequence.id.toString() : JSON.stringify(sequence.id);
    members.push(`"sequence_id":${id}`);
  }
  if (sequence.start !== undefined) members.push(`"sequence_start":${sequence.start}`);
  if (sequence.end !== undefined) members.push(`"sequence_end":${sequence.end}`);
  return members.join(",");
}

/** The request's `outputs` and `parameters` members, each with its leading comma, or "". */
function tailJsonOf(request: InferRequest, binaryOutputs: boolean): string {
  const sequence = sequenceParametersOf(request);
  if (
    request.parameters === undefined &&
    request.priority === undefined &&
    request.timeoutUs === undefined &&
    sequence === undefined &&
    request.outputs === undefined
  ) {
    return binaryOutputs ? ',"parameters":{"binary_data_output":true}' : ""; // the common case
  }
  const parameters: Parameters = { ...(request.parameters ?? {}) };
  if (request.priority !== undefined) parameters["priority"] = request.priority;
  if (request.timeoutUs !== undefined) parameters["timeout"] = request.timeoutUs;
  let outputsJson = "";
  if (request.outputs !== undefined) {
    const outs = request.outputs.map((o) => {
      const extra: Parameters = { binary_data: o.binary ?? binaryOutputs };
      if (o.classification !== undefined) extra["classification"] = o.classification;
      return JSON.stringify({ name: o.name, parameters: withParameters(o.parameters, extra) });
    });
    outputsJson = `,"outputs":[${outs.join(",")}]`;
  } else if (binaryOutputs) {
    parameters["binary_data_output"] = true;
  }
  let paramsJson = Object.keys(parameters).length === 0 ? "" : JSON.stringify(parameters);
  if (sequence !== undefined) {
    const members = sequenceJsonOf(sequence); // never empty: the request gave at least one field
    paramsJson = paramsJson === "" ? `{${members}}` : `${paramsJson.slice(0, -1)},${members}}`;
  }
  return paramsJson === "" ? outputsJson : `${outputsJson},"parameters":${paramsJson}`;
}
