/**
 * The hot path: POST /v2/models/{m}[/versions/{v}]/infer. Reads the body under the size limit, decodes it
 * into the core's request (tensors view the body), links the request's signal to the client connection,
 * runs it, and writes the encoded response, compressed when the client accepts it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Cancellation } from "../core/cancel-signal.js";
import { DecoupledModelError, ServerError } from "../core/server-error.js";
import type { InferenceResponse } from "../core/types.js";
import { readBody } from "./body-reader.js";
import type { BufferHold } from "./buffer-budget.js";
import { compressBody, negotiateEncoding } from "./compression.js";
import type { FrontEndCore } from "./front-end-core.js";
import { badRequest } from "./http-error.js";
import { type DecodeInferOptions, decodeInferRequest } from "./infer-request-decoder.js";
import { encodeInferResponse } from "./infer-response-encoder.js";
import { type SendTimeoutListener, writeBody } from "./response-writer.js";
import type { Route } from "./router.js";
import type { JsonDecodePool } from "./threads/json-decode-pool.js";

const HEADER_LENGTH = "inference-header-content-length";
/** Triton's words for /infer to a decoupled model: its responses need generate_stream (or gRPC's stream). */
export const DECOUPLED_REFUSED = "HTTP end point doesn't support models with decoupled transaction policy";
/** What std::stoi reads: leading whitespace, a sign, decimal digits (anything after them is ignored). */
const STOI = /^[ \t\n\v\f\r]*([+-]?[0-9]+)/;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** The JSON header's length, read as Triton's GetInferenceHeaderLength reads it (std::stoi), with its words. */
function headerLengthOf(req: IncomingMessage, bodyLength: number): number {
  const raw = req.headers[HEADER_LENGTH];
  if (raw === undefined) return bodyLength;
  const text = Array.isArray(raw) ? raw[0]! : raw;
  const match = STOI.exec(text);
  if (match === null) throw badRequest(`Unable to parse Inference-Header-Content-Length, got: ${text}`);
  const value = Number(match[1]);
  if (value < INT32_MIN || value > INT32_MAX) {
    throw badRequest(
      `Unable to parse Inference-Header-Content-Length, value is out of range [ ${INT32_MIN}, ${INT32_MAX} ], got: ${text}`,
    );
  }
  if (value < 0 || value > bodyLength) {
    throw badRequest(`inference header size should be in range (0, ${bodyLength}), got: ${text}`);
  }
  return value;
}

/** What the handlers share, created once per server. */
export interface HandlerContext {
  readonly core: FrontEndCore;
  readonly maxInputSize: number;
  /** Most elements one BYTES input may have (--max-bytes-tensor-elements). */
  readonly maxBytesTensorElements: number;
  /** How long a response may make no progress before its connection is cut (0: never). */
  readonly sendTimeoutMs: number;
  /** Told of each connection cut by the send timeout. */
  readonly onSendTimeout: SendTimeoutListener;
  /** The request's share of --http-max-buffered-bytes (buffer-budget.ts), released when `res` closes. */
  readonly holdOf: (res: ServerResponse) => BufferHold;
  /** Decodes bodies with at least `jsonDecodeMinBytes` of JSON off this thread (json-decode-pool.ts). */
  readonly jsonDecoder: JsonDecodePool;
  readonly jsonDecodeMinBytes: number;
  /** Answers `error` as Triton would (the same status for a core error on every endpoint). */
  readonly fail: (req: IncomingMessage, res: ServerResponse, error: unknown) => void;
}

const CANCELLATION = Symbol("tbench.cancellation");
type WatchedResponse = ServerResponse & { [CANCELLATION]?: Cancellation };

/** Cancels the core request behind `res` (the client went away before its answer). */
export function abortClientRequest(res: ServerResponse): void {
  (res as WatchedResponse)[CANCELLATION]?.abort();
}

/** Serves one infer request, answering errors through `context.fail`; never rejects. */
export async function handleInfer(
  context: HandlerContext,
  route: Route,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  try {
    await serveInfer(context, route, req, res);
  } catch (error) {
    context.fail(req, res, error);
  }
}

async function serveInfer(
  context: HandlerContext,
  route: Route,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { core, maxInputSize, maxBytesTensorElements } = context;
  const acceptEncoding = req.headers["accept-encoding"];
  // Without the header the whole body is the JSON, which Triton limits to --http-max-input-size.
  const hold = context.holdOf(res);
  const body = await readBody(req, maxInputSize, req.headers[HEADER_LENGTH] === undefined, hold);
  const headerLength = headerLengthOf(req, body.byteLength);
  const cancellation = new Cancellation();
  (res as WatchedResponse)[CANCELLATION] = cancellation;
  const decodeOptions: DecodeInferOptions = {
    model: route.model,
    version: route.version,
    headerLength,
    maxInputSize,
    maxBytesTensorElements,
    signal: cancellation,
  };
  // A large JSON would hold every other client on this thread while it parses: a decode thread takes it.
  const decoded =
    headerLength >= context.jsonDecodeMinBytes
      ? await context.jsonDecoder.decode(body, decodeOptions)
      : decodeInferRequest(body, decodeOptions);
  let response: InferenceResponse;
  try {
    response = await core.infer(decoded.request);
  } catch (error) {
    if (error instanceof DecoupledModelError) throw new ServerError("UNSUPPORTED", DECOUPLED_REFUSED);
    throw error;
  }
  const encoded = encodeInferResponse(response, decoded);
  if (res.destroyed) return;
  const headers: Record<string, string | number> = {
    "Content-Type": encoded.binary.length > 0 ? "application/octet-stream" : "application/json",
  };
  if (encoded.binary.length > 0) headers["Inference-Header-Content-Length"] = encoded.json.byteLength;
  const encoding = acceptEncoding === undefined ? "identity" : negotiateEncoding(acceptEncoding);
  if (encoding !== "identity") {
    const compressed = await compressBody([encoded.json, ...encoded.binary], encoding);
    headers["Content-Encoding"] = encoding;
    headers["Content-Length"] = compressed.byteLength;
    // The answer replaces the body in the hold (nothing refers to the body now) until it is written.
    hold.set(compressed.byteLength);
    res.writeHead(200, headers);
    writeBody(res, [compressed], context.sendTimeoutMs, context.onSendTimeout);
    return;
  }
  headers["Content-Length"] = encoded.byteLength;
  hold.set(encoded.byteLength);
  res.writeHead(200, headers);
  const chunks = encoded.binary.length === 0 ? [encoded.json] : [encoded.json, ...encoded.binary];
  writeBody(res, chunks, context.sendTimeoutMs, context.onSendTimeout);
}
