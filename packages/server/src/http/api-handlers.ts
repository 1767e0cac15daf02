/**
 * The non-infer endpoints: health, server and model metadata, model readiness and configuration,
 * statistics and the repository extension. A core error answers with Triton's status for its code, as on
 * every endpoint; health and model-ready answer 200 or a bare 400, as Triton's handlers do.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { InferenceCore } from "../core/types.js";
import { readBody } from "./body-reader.js";
import { badRequest } from "./http-error.js";
import type { HandlerContext } from "./infer-handler.js";
import { sendEmpty, sendError, sendJson } from "./respond.js";
import type { Route } from "./router.js";

const indexBodySchema = z.object({ ready: z.boolean().optional() });
const loadBodySchema = z.object({
  parameters: z.record(z.string(), z.union([z.string(), z.boolean(), z.number()])).optional(),
});
const unloadBodySchema = z.object({
  parameters: z.object({ unload_dependents: z.boolean().optional() }).passthrough().optional(),
});

async function readJsonBody<T>(
  req: IncomingMessage,
  maxBytes: number,
  schema: z.ZodType<T>,
  what: string,
): Promise<T | undefined> {
  const body = await readBody(req, maxBytes);
  if (body.byteLength === 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch (error) {
    throw badRequest(`failed to parse the ${what} request JSON buffer: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.length > 0 ? issue.path.join(".") : "body";
    throw badRequest(`Invalid value for '${path}' in ${what} request: ${issue.message}`);
  }
  return parsed.data;
}

function decodeFiles(parameters: Record<string, string | boolean | number>): {
  config?: string;
  files?: Record<string, Uint8Array>;
} {
  const result: { config?: string; files?: Record<string, Uint8Array> } = {};
  for (const [key, value] of Object.entries(parameters)) {
    if (key === "config") {
      if (typeof value !== "string") throw badRequest("Invalid value for 'config': expected a JSON string");
      result.config = value;
    } else if (key.startsWith("file:")) {
      if (typeof value !== "string") throw badRequest(`Invalid value for '${key}': expected base64 content`);
      result.files ??= {};
      result.files[key.slice("file:".length)] = Buffer.from(value, "base64");
    }
  }
  return result;
}

/** Serves every endpoint but infer, answering errors through `context.fail`; never rejects. */
export async function handleApiRequest(
  context: HandlerContext,
  route: Route,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  try {
    await serveApiRequest(context.core, route, req, res, context.maxInputSize);
  } catch (error) {
    context.fail(req, res, error);
  }
}

async function serveApiRequest(
  core: InferenceCore,
  route: Route,
  req: IncomingMessage,
  res: ServerResponse,
  maxInputSize: number,
): Promise<void> {
  switch (route.kind) {
    case "health-live":
      sendEmpty(res, core.isLive() ? 200 : 400);
      return;
    case "health-ready":
      sendEmpty(res, core.isReady() ? 200 : 400);
      return;
    case "server-metadata":
      sendJson(res, 200, JSON.stringify(core.serverMetadata()));
      return;
    case "model-metadata":
      sendJson(res, 200, JSON.stringify(core.modelMetadata(route.model, route.version)));
      return;
    case "model-ready":
      if (core.isModelReady(route.model, route.version)) sendEmpty(res, 200);
      else sendError(res, 400, "Model version not ready");
      return;
    case "model-config":
      sendJson(res, 200, JSON.stringify(core.modelConfig(route.model, route.version)));
      return;
    case "model-stats":
      sendJson(res, 200, JSON.stringify({ model_stats: core.modelStatistics(route.model, route.version) }));
      return;
    case "all-stats":
      sendJson(res, 200, JSON.stringify({ model_stats: core.modelStatistics() }));
      return;
    case "repository-index": {
      const body = await readJsonBody(req, maxInputSize, indexBodySchema, "repository index");
      const index = await core.repositoryIndex({ readyOnly: body?.ready === true });
      sendJson(res, 200, JSON.stringify(index));
      return;
    }
    case "repository-load": {
      const body = await readJsonBody(req, maxInputSize, loadBodySchema, "model load");
      await core.loadModel(route.model, body?.parameters ? decodeFiles(body.parameters) : {});
      sendEmpty(res, 200);
      return;
    }
    case "repository-unload": {
      const body = await readJsonBody(req, maxInputSize, unloadBodySchema, "model unload");
      await core.unloadModel(route.model, { unloadDependents: body?.parameters?.unload_dependents === true });
      sendEmpty(res, 200);
      return;
    }
    case "model-infer":
      throw new Error("infer is served by the infer handler");
  }
}
