/**
 * `--http-restricted-api` on the HTTP front end: which restricted category each endpoint belongs to (as
 * Triton's handlers name it in http_server.cc: model readiness is `health`, every statistics endpoint
 * `statistics`, ...) and the check Triton's RespondIfRestricted makes before the handler does anything
 * else, the method check included: 403 `This API is restricted, expecting header '<key>'` when the header
 * is missing or carries another value.
 */
import type { IncomingMessage } from "node:http";
import type { RestrictedApis, RestrictedCategory } from "../core/restricted-api.js";
import { HttpError } from "./http-error.js";
import type { RouteKind } from "./router.js";

/** The restricted category of each endpoint. */
export const ROUTE_CATEGORY: Readonly<Record<RouteKind, RestrictedCategory>> = {
  "server-metadata": "metadata",
  "health-live": "health",
  "health-ready": "health",
  "model-metadata": "metadata",
  "model-ready": "health",
  "model-config": "model-config",
  "model-infer": "inference",
  "model-generate": "inference",
  "model-generate-stream": "inference",
  "model-stats": "statistics",
  "all-stats": "statistics",
  "repository-index": "model-repository",
  "repository-load": "model-repository",
  "repository-unload": "model-repository",
  "system-shared-memory": "shared-memory",
  "cuda-shared-memory": "shared-memory",
  "trace-setting": "trace",
  logging: "logging",
  // The OpenAI-compatible endpoint: listing models is metadata (Triton's own OpenAI frontend files
  // GET /v1/models under model-repository), completions are inference.
  "openai-models": "metadata",
  "openai-model": "metadata",
  "openai-completions": "inference",
  "openai-chat-completions": "inference",
};

/**
 * The 403 to answer when `kind` is restricted and the request does not carry the header with its value;
 * undefined when the request may go on. The header name is matched without regard to case (HTTP's rule,
 * and libevhtp's lookup); the first header of that name counts, as in Triton.
 */
export function restrictionRefusal(
  apis: RestrictedApis,
  kind: RouteKind,
  req: IncomingMessage,
): HttpError | undefined {
  const restriction = apis[ROUTE_CATEGORY[kind]];
  if (restriction === undefined) return undefined;
  const given = req.headersDistinct[restriction.key.toLowerCase()]?.[0];
  if (given === restriction.value) return undefined;
  return new HttpError(403, `This API is restricted, expecting header '${restriction.key}'`);
}
