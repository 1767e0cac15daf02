/**
 * A client's infer-response decoder with a one-entry memory of the last JSON header. Answers from the same
 * model with binary outputs repeat their JSON header byte for byte (names, datatypes, shapes and sizes;
 * the values travel in the binary section), and parsing it was the largest piece of the client's own time
 * per call (JSON.parse and the text decode: about 2.5 of 3 us on a small answer). A header equal to the
 * remembered one is not parsed again: the result is built from what the first parse found, with fresh
 * views of the new body's binary section and fresh copies of the shapes and parameter objects, so each
 * result is what decodeInferResponse would have returned. Anything else (a JSON-only answer, JSON `data`,
 * a body of another length, a header past MAX_REMEMBERED_BYTES) takes the full decode.
 */
import type { Datatype } from "@tbench/proto";
import { startsEqual } from "../bytes.js";
import {
  createInferResult,
  createOutputTensor,
  type InferResult,
  type OutputTensor,
} from "../infer-result.js";
import type { ParameterValue } from "../tensor-types.js";
import { decodeInferResponse } from "./infer-decoding.js";

/** Headers longer than this are not remembered (comparing them would cost more than it saves). */
const MAX_REMEMBERED_BYTES = 4096;

type Parameters = Readonly<Record<string, ParameterValue>> | undefined;

interface OutputPlan {
  readonly name: string;
  readonly datatype: Datatype;
  readonly shape: readonly number[];
  readonly parameters: Parameters;
  readonly byteLength: number;
}

/** What a repeat of a remembered header needs to build its result. */
interface HeaderPlan {
  /** The header's bytes (a copy: the body it came from belongs to a result). */
  readonly json: Uint8Array;
  readonly bodyLength: number;
  readonly modelName: string;
  readonly modelVersion: string;
  readonly id: string | undefined;
  readonly parameters: Parameters;
  readonly outputs: readonly OutputPlan[];
}

/** Decodes an HTTP infer response body; see decodeInferResponse for the format and the errors. */
export type InferDecoder = (body: Uint8Array, jsonLengthHeader: string | undefined) => InferResult;

const copyOf = (p: Parameters): Parameters => (p === undefined ? undefined : { ...p });

function planOf(body: Uint8Array, jsonLength: number, result: InferResult): HeaderPlan | undefined {
  const outputs: OutputPlan[] = [];
  for (const o of result.outputs) {
    if (o.raw === undefined) return undefined; // JSON data (or none): not the repeating kind
    outputs.push({
      name: o.name,
      datatype: o.datatype,
      shape: o.shape.slice(),
      parameters: copyOf(o.parameters),
      byteLength: o.raw.byteLength,
    });
  }
  return {
    json: new Uint8Array(body.subarray(0, jsonLength)), // a copy (Buffer.slice would be a view)
    bodyLength: body.length,
    modelName: result.modelName,
    modelVersion: result.modelVersion,
    id: result.id,
    parameters: copyOf(result.parameters),
    outputs,
  };
}

function resultOf(plan: HeaderPlan, body: Uint8Array): InferResult {
  const outputs = new Array<OutputTensor>(plan.outputs.length);
  let offset = plan.json.length;
  for (let i = 0; i < outputs.length; i++) {
    const o = plan.outputs[i]!;
    outputs[i] = createOutputTensor({
      name: o.name,
      datatype: o.datatype,
      shape: o.shape.slice(),
      parameters: copyOf(o.parameters),
      raw: body.subarray(offset, offset + o.byteLength),
      json: undefined,
    });
    offset += o.byteLength;
  }
  return createInferResult(plan.modelName, plan.modelVersion, plan.id, copyOf(plan.parameters), outputs);
}

/** Creates a decoder (one per client: its memory is the last header that client saw). */
export function createInferDecoder(): InferDecoder {
  let plan: HeaderPlan | undefined;
  return (body, jsonLengthHeader) => {
    if (jsonLengthHeader === undefined) return decodeInferResponse(body, jsonLengthHeader);
    const remembered = plan;
    if (
      remembered !== undefined &&
      body.length === remembered.bodyLength &&
      Number(jsonLengthHeader) === remembered.json.length &&
      startsEqual(body, remembered.json, remembered.json.length)
    ) {
      return resultOf(remembered, body);
    }
    const result = decodeInferResponse(body, jsonLengthHeader);
    const jsonLength = Number(jsonLengthHeader);
    if (jsonLength <= MAX_REMEMBERED_BYTES) plan = planOf(body, jsonLength, result) ?? plan;
    return result;
  };
}
