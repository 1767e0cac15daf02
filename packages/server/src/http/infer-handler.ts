/**
 * The hot path: POST /v2/models/{m}[/versions/{v}]/infer. Reads the body under the size limit, decodes it
 * into the core's request (tensors view the body), links the request's signal to the client connection,
 * runs it, and writes the encoded response, compressed when the client accepts it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { InferenceCore } from "../core/types.js";
import { readBody } from "./body-reader.js";
import { compressBody, negotiateEncoding } from "./compression.js";
import { badRequest } from "./http-error.js";
import { decodeInferRequest } from "./infer-request-decoder.js";
import { encodeInferResponse } from "./infer-response-encoder.js";
import type { Route } from "./router.js";

const HEADER_LENGTH = "inference-header-content-length";

function headerLengthOf(req: IncomingMessage, bodyLength: number): number {
  const raw = req.headers[HEADER_LENGTH];
  if (raw === undefined) return bodyLength;
  const text = Array.isArray(raw) ? raw[0]! : raw;
  const value = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (Number.isNaN(value)) throw badRequest(`Unable to parse Inference-Header-Content-Length, got: ${text}`);
  if (value > bodyLength) {
    throw badRequest(`inference header size should be in range (0, ${bodyLength}), got: ${text}`);
  }
  return value;
}

/** Aborts the core request when the client connection closes before the answer is written. */
class ClientWatch {
  readonly controller = new AbortController();
  private readonly res: ServerResponse;

  constructor(res: ServerResponse) {
    this.res = res;
    res.once("close", this.onClose);
  }

  private readonly onClose = (): void => {
    if (!this.res.writableFinished) this.controller.abort(new Error("client disconnected"));
  };
}

/** Serves one infer request; throws HttpError / ServerError for the caller to answer. */
export async function handleInfer(
  core: InferenceCore,
  route: Route,
  req: IncomingMessage,
  res: ServerResponse,
  maxInputSize: number,
): Promise<void> {
  const acceptEncoding = req.headers["accept-encoding"];
  const body = await readBody(req, maxInputSize);
  const headerLength = headerLengthOf(req, body.byteLength);
  const watch = new ClientWatch(res);
  const decoded = decodeInferRequest(body, {
    model: route.model,
    version: route.version,
    headerLength,
    maxInputSize,
    signal: watch.controller.signal,
  });
  const response = await core.infer(decoded.request);
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
    res.writeHead(200, headers);
    res.end(compressed);
    return;
  }
  headers["Content-Length"] = encoded.byteLength;
  res.writeHead(200, headers);
  if (encoded.binary.length === 0) {
    res.end(encoded.json);
    return;
  }
  res.cork();
  res.write(encoded.json);
  const last = encoded.binary.length - 1;
  for (let i = 0; i < last; i++) res.write(encoded.binary[i]);
  res.end(encoded.binary[last]);
}
