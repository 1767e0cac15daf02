/**
 * Triton's generate extension: POST /v2/models/{m}[/versions/{v}]/generate and .../generate_stream. The
 * body is one JSON object whose members are mapped by name, as Triton maps them (HandleGenerate,
 * ConvertGenerateRequest): a member named like one of the model's inputs becomes that input (a value or a
 * 1-D array, shaped into the input's dims: fixed dims divide the element count, the innermost variable dim
 * takes the rest, other variable dims are 1); any other member becomes a request parameter (a string,
 * integer, boolean or number); the members of `parameters` are mapped the same way. A string `id` is the
 * request's id and is echoed, as the extension's document says. The answer maps back the same way:
 * `id`, `model_name`, `model_version`, then each output by name (one element as a value, more as an array)
 * and each response parameter.
 *  - generate: exactly one response (Triton's error otherwise), `application/json`.
 *  - generate_stream: server-sent events, `data: <json>\n\n` per response, an error after the first one as
 *    `data: {"error": ...}`. An error before any response is a plain JSON error with its status.
 * A client that goes away cancels the request; a reader that lets more than MAX_UNSENT_BYTES pile up is
 * cut, as a slow client of any other endpoint is.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Datatype, TensorMetadata } from "@tbench/proto";
import { bytesDataFromStrings, bytesDataToStrings } from "../core/bytes-data.js";
import { Cancellation } from "../core/cancel-signal.js";
import { DecoupledModelError } from "../core/server-error.js";
import type {
  BytesData,
  InferenceCore,
  InferenceRequest,
  InferenceResponse,
  Parameters,
  Tensor,
} from "../core/types.js";
import { readBody } from "./body-reader.js";
import { badRequest, HttpError } from "./http-error.js";
import type { HandlerContext } from "./infer-handler.js";
import type { Route } from "./router.js";

/** Bytes of events a stream may have waiting for a slow reader before its connection is cut. */
const MAX_UNSENT_BYTES = 8 * 1024 * 1024;

/** Triton's words when generate gets other than one response. */
export const GENERATE_NEEDS_ONE_RESPONSE =
  "generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function typedArrayFor(datatype: Datatype, values: readonly Json[], name: string): Tensor["data"] {
  const fail = () => badRequest(`unable to parse '${name}' as ${datatype}: got ${JSON.stringify(values)}`);
  switch (datatype) {
    case "BYTES":
      if (!values.every((v) => typeof v === "string")) throw fail();
      return bytesDataFromStrings(values as string[]);
    case "BOOL":
      if (!values.every((v) => typeof v === "boolean")) throw fail();
      return Uint8Array.from(values as boolean[], (v) => (v ? 1 : 0));
    case "INT64":
    case "UINT64": {
      if (!values.every((v) => typeof v === "number" && Number.isInteger(v))) throw fail();
      const big = (values as number[]).map((v) => BigInt(v));
      return datatype === "INT64" ? BigInt64Array.from(big) : BigUint64Array.from(big);
    }
    default: {
      if (!values.every((v) => typeof v === "number")) throw fail();
      const numbers = values as number[];
      switch (datatype) {
        case "FP32":
          return Float32Array.from(numbers);
        case "FP64":
          return Float64Array.from(numbers);
        case "INT8":
          return Int8Array.from(numbers);
        case "INT16":
          return Int16Array.from(numbers);
        case "INT32":
          return Int32Array.from(numbers);
        case "UINT8":
          return Uint8Array.from(numbers);
        case "UINT16":
          return Uint16Array.from(numbers);
        case "UINT32":
          return Uint32Array.from(numbers);
        default:
          throw badRequest(`input '${name}' has unsupported datatype ${datatype}`);
      }
    }
  }
}

/** The shape of `count` elements for an input of `dims` (Triton's two passes), or its error. */
function shapeFor(dims: readonly number[], count: number, name: string): number[] {
  const shape = [...dims];
  let rest = count;
  const refuse = () => badRequest(`The schema can not convert input '${name}' to tensor with proper shape`);
  for (let i = shape.length - 1; i >= 0; i--) {
    const d = shape[i]!;
    if (d === -1) continue;
    if (d === 0 || rest % d !== 0) throw refuse();
    rest /= d;
  }
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] === -1) {
      shape[i] = rest;
      rest = 1;
    }
  }
  if (rest !== 1) throw refuse();
  return shape;
}

/** Builds the core request from a generate body. */
function toInferenceRequest(
  body: { [key: string]: Json },
  route: Route,
  inputs: readonly TensorMetadata[],
  signal: Cancellation,
): InferenceRequest {
  const byName = new Map(inputs.map((input) => [input.name, input]));
  const tensors: Tensor[] = [];
  const parameters: Record<string, string | number | boolean> = {};
  let id: string | undefined;
  const map = (members: { [key: string]: Json }, nested: boolean) => {
    for (const [name, value] of Object.entries(members)) {
      if (!nested && name === "parameters" && !byName.has(name)) {
        if (value === null || typeof value !== "object" || Array.isArray(value)) {
          throw badRequest("Expected JSON object for keyword: 'parameters'");
        }
        map(value, true);
        continue;
      }
      if (!nested && name === "parameters") {
        throw badRequest("Keyword 'parameters' for nested schema also given as input tensor name");
      }
      const input = byName.get(name);
      if (input === undefined) {
        if (!nested && name === "id" && typeof value === "string") {
          id = value;
          continue;
        }
        if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
          parameters[name] = value;
          continue;
        }
        throw badRequest(
          `parameter '${name}' has invalid type. It should be either 'int', 'bool', or 'string'.`,
        );
      }
      const values = Array.isArray(value) ? value : [value];
      if (values.some((v) => v !== null && typeof v === "object")) {
        throw badRequest(`The schema can not convert input '${name}' to tensor with proper shape`);
      }
      const datatype = input.datatype as Datatype;
      tensors.push({
        name,
        datatype,
        shape: shapeFor(input.shape, values.length, name),
        data: typedArrayFor(datatype, values, name),
      });
    }
  };
  map(body, false);
  return {
    model: route.model,
    ...(route.version !== undefined ? { version: route.version } : {}),
    ...(id !== undefined ? { id } : {}),
    inputs: tensors,
    ...(Object.keys(parameters).length > 0 ? { parameters: parameters as Parameters } : {}),
    signal,
  };
}

function tensorJson(tensor: Tensor): Json {
  const data = tensor.data;
  let values: Json[];
  if (!ArrayBuffer.isView(data)) values = bytesDataToStrings(data as BytesData);
  else if (tensor.datatype === "BOOL") values = Array.from(data as Uint8Array, (v) => v !== 0);
  else {
    values = Array.from(data as unknown as ArrayLike<number | bigint>, (v) =>
      typeof v === "bigint" ? Number(v) : v,
    );
  }
  return values.length === 1 ? values[0]! : values;
}

/** One response as generate writes it. */
export function generateResponseJson(response: InferenceResponse): string {
  const json: { [key: string]: Json } = {};
  if (response.id !== undefined && response.id !== "") json.id = response.id;
  json.model_name = response.model;
  json.model_version = response.version;
  for (const [name, value] of Object.entries(response.parameters ?? {})) json[name] = value;
  for (const tensor of response.outputs) json[tensor.name] = tensorJson(tensor);
  return JSON.stringify(json);
}

/** Serves one generate or generate_stream request, answering errors through `context.fail`; never rejects. */
export async function handleGenerate(
  context: HandlerContext,
  route: Route,
  req: IncomingMessage,
  res: ServerResponse,
  streaming: boolean,
): Promise<void> {
  try {
    const encoding = req.headers["content-encoding"];
    if (encoding !== undefined && encoding !== "identity") {
      throw badRequest("Unsupported content-encoding, only 'identity' is supported.");
    }
    const inferStream = context.core.inferStream?.bind(context.core);
    if (inferStream === undefined) {
      throw new HttpError(
        501,
        "generate is served by the main HTTP thread only: run with --http-thread-count 1",
      );
    }
    const metadata = await context.core.modelMetadata(route.model, route.version);
    const hold = context.holdOf(res);
    const text = (await readBody(req, context.maxInputSize, true, hold)).toString("utf8");
    let body: Json;
    try {
      body = text.trim() === "" ? {} : (JSON.parse(text) as Json);
    } catch (error) {
      throw badRequest(`failed to parse the request JSON buffer: ${(error as Error).message}`);
    }
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      throw badRequest("the generate request must be a JSON object");
    }
    const cancellation = new Cancellation();
    const request = toInferenceRequest(body, route, metadata.inputs, cancellation);
    hold.set(0);
    res.once("close", () => {
      if (!res.writableFinished) cancellation.abort();
    });
    if (streaming) streamResponses(context, inferStream, request, req, res);
    else await answerOnce(context, inferStream, request, req, res);
  } catch (error) {
    context.fail(req, res, error);
  }
}

/** generate: the one response, or Triton's error when there are none or several. */
function answerOnce(
  context: HandlerContext,
  inferStream: InferenceCore["inferStream"],
  request: InferenceRequest,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const responses: InferenceResponse[] = [];
    const done = () => {
      if (res.destroyed) return resolve();
      if (responses.length !== 1) {
        context.fail(req, res, new HttpError(500, GENERATE_NEEDS_ONE_RESPONSE));
        return resolve();
      }
      const body = generateResponseJson(responses[0]!);
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
      res.end(body);
      resolve();
    };
    inferStream(request, {
      response(response, final) {
        responses.push(response);
        if (final) done();
      },
      end: done,
      error(error) {
        context.fail(
          req,
          res,
          error instanceof DecoupledModelError ? new HttpError(500, error.message) : error,
        );
        resolve();
      },
    });
  });
}

/** generate_stream: a server-sent event per response. */
function streamResponses(
  context: HandlerContext,
  inferStream: InferenceCore["inferStream"],
  request: InferenceRequest,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache" });
  };
  const send = (event: string) => {
    if (res.destroyed) return;
    start();
    res.write(`data: ${event}\n\n`);
    if (res.writableLength > MAX_UNSENT_BYTES) {
      context.onSendTimeout(res, res.writableLength);
      res.destroy();
    }
  };
  inferStream(request, {
    response(response, final) {
      send(generateResponseJson(response));
      if (final && !res.destroyed) res.end();
    },
    end() {
      if (res.destroyed) return;
      start();
      res.end();
    },
    error(error) {
      if (!started) {
        context.fail(req, res, error);
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      send(JSON.stringify({ error: message }));
      if (!res.destroyed) res.end();
    },
  });
}
