/**
 * Decodes an HTTP infer response: the JSON inference response (its length from
 * `Inference-Header-Content-Length`, or the whole body without that header), then the binary outputs'
 * bytes in the order their outputs appear, each `binary_data_size` long. Binary outputs are handed over
 * as views of the body (no copy). The JSON is checked by hand, not with zod: this is the hot path.
 * INT64 and UINT64 `data` is read from its digits (json-data-spans.ts): JSON.parse would round every value
 * past 2^53.
 */
import { type Datatype, findDataSpans, forEachDataElement, isDatatype, type TextSpan } from "@tbench/proto";
import { readUtf8 } from "../bytes.js";
import { MalformedResponseError } from "../errors.js";
import {
  createInferResult,
  createOutputTensor,
  type InferResult,
  type OutputTensor,
} from "../infer-result.js";
import type { ParameterValue } from "../tensor-types.js";

type Json = Record<string, unknown>;

function malformed(message: string, cause?: unknown): MalformedResponseError {
  return new MalformedResponseError(
    `infer response: ${message}`,
    cause === undefined ? undefined : { cause },
  );
}

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function parametersOf(v: unknown, where: string): Readonly<Record<string, ParameterValue>> | undefined {
  if (v === undefined) return undefined;
  if (!isObject(v)) throw malformed(`${where} parameters are not an object`);
  return v as Record<string, ParameterValue>;
}

function datatypeOf(v: unknown, name: string): Datatype {
  if (v === "STRING") return "BYTES"; // the classification doc's spelling of BYTES
  if (!isDatatype(v)) throw malformed(`output '${name}' has unknown datatype ${JSON.stringify(v)}`);
  return v;
}

/** A JSON number written as an integer, which BigInt reads exactly. */
const INTEGER_LITERAL = /^-?(?:0|[1-9][0-9]*)$/;

/**
 * The elements of a 64-bit output's `data` from the text (row-major): bigints for integer literals, the
 * parsed value for anything else (which the output then refuses as not an INT64/UINT64 value).
 */
function exactElements(text: string, span: TextSpan, parsed: readonly unknown[]): unknown[] {
  const flat = parsed.flat(Number.POSITIVE_INFINITY) as unknown[];
  const out: unknown[] = [];
  forEachDataElement(text, span, (start, end) => {
    const literal = text.slice(start, end);
    out.push(INTEGER_LITERAL.test(literal) ? BigInt(literal) : flat[out.length]);
  });
  return out;
}

function shapeOf(v: unknown, name: string): number[] {
  let ok = Array.isArray(v);
  for (let i = 0; ok && i < (v as unknown[]).length; i++) {
    const d = (v as unknown[])[i];
    ok = typeof d === "number" && Number.isInteger(d) && d >= 0;
  }
  if (!ok)
    throw malformed(`output '${name}' has shape ${JSON.stringify(v)}; expected an array of integers >= 0`);
  return v as number[];
}

/** Parses the JSON header and slices the binary outputs out of `body`. */
export function decodeInferResponse(
  body: Uint8Array,
  jsonLengthHeader: string | string[] | undefined,
): InferResult {
  let jsonLength = body.length;
  if (jsonLengthHeader !== undefined) {
    jsonLength = Number(jsonLengthHeader);
    if (!Number.isInteger(jsonLength) || jsonLength <= 0 || jsonLength > body.length) {
      throw malformed(
        `Inference-Header-Content-Length is ${JSON.stringify(jsonLengthHeader)}, body has ${body.length} bytes`,
      );
    }
  }
  let doc: unknown;
  const text = readUtf8(body, 0, jsonLength);
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw malformed("the JSON header does not parse", error);
  }
  if (!isObject(doc)) throw malformed("the JSON header is not an object");
  const modelName = doc["model_name"];
  const modelVersion = doc["model_version"] ?? "";
  const id = doc["id"];
  if (typeof modelName !== "string") throw malformed("model_name is missing or not a string");
  if (typeof modelVersion !== "string") throw malformed("model_version is not a string");
  if (id !== undefined && typeof id !== "string") throw malformed("id is not a string");
  const rawOutputs = doc["outputs"];
  if (!Array.isArray(rawOutputs)) throw malformed("outputs is missing or not an array");
  const outputs = new Array<OutputTensor>(rawOutputs.length);
  let offset = jsonLength;
  let spans: (TextSpan | undefined)[] | undefined;
  for (let i = 0; i < rawOutputs.length; i++) {
    const o = rawOutputs[i];
    if (!isObject(o) || typeof o["name"] !== "string") throw malformed(`output ${i} has no name`);
    const name = o["name"];
    const parameters = parametersOf(o["parameters"], `output '${name}'`);
    const size = parameters?.["binary_data_size"];
    let raw: Uint8Array | undefined;
    let json: unknown[] | undefined;
    if (size !== undefined) {
      if (typeof size !== "number" || !Number.isInteger(size) || size < 0 || offset + size > body.length) {
        throw malformed(
          `output '${name}' has binary_data_size ${JSON.stringify(size)} but ${body.length - offset} bytes remain`,
        );
      }
      raw = body.subarray(offset, offset + size);
      offset += size;
    } else if (o["data"] !== undefined) {
      if (!Array.isArray(o["data"])) throw malformed(`output '${name}' data is not an array`);
      json = o["data"];
    }
    const datatype = datatypeOf(o["datatype"], name);
    if (json !== undefined && (datatype === "INT64" || datatype === "UINT64")) {
      // Only a response with 64-bit JSON data pays for a walk over its text, once.
      spans ??= findDataSpans(text, "outputs");
      const span = spans[i];
      if (span !== undefined) json = exactElements(text, span, json);
    }
    outputs[i] = createOutputTensor({
      name,
      datatype,
      shape: shapeOf(o["shape"], name),
      parameters,
      raw,
      json,
    });
  }
  if (offset !== body.length) {
    throw malformed(`${body.length - offset} bytes after the last binary output`);
  }
  return createInferResult(
    modelName,
    modelVersion,
    id as string | undefined,
    parametersOf(doc["parameters"], "response"),
    outputs,
  );
}
