/**
 * The non-infer endpoints: health, server and model metadata, model readiness and configuration,
 * statistics and the repository extension. A core error answers with Triton's status for its code, as on
 * every endpoint; health and model-ready answer 200 or a bare 400, as Triton's handlers do.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ServerError } from "../core/server-error.js";
import { readBody } from "./body-reader.js";
import type { BufferHold } from "./buffer-budget.js";
import { badRequest, HttpError } from "./http-error.js";
import type { HandlerContext } from "./infer-handler.js";
import { sendEmpty, sendError, sendJson } from "./respond.js";
import type { Route } from "./router.js";
import { findMember, isObject, NON_OBJECT_MEMBERS, NON_STRING, TRITON_JSON_STATUS } from "./triton-json.js";

const SHM_DISABLED = "Client shared memory is not supported by tbench-server";

/**
 * A repository request's JSON body, read as Triton's EVRequestToJson reads it: an empty body is no body,
 * anything else must parse (TritonJson's INTERNAL failure, 500, when it does not). The fields are then
 * looked up by the handler, so a body that is not an object simply has none of them, as in Triton.
 */
async function readJsonBody(req: IncomingMessage, maxBytes: number, hold: BufferHold): Promise<unknown> {
  const body = await readBody(req, maxBytes, true, hold);
  if (body.byteLength === 0) return undefined;
  const text = body.toString("utf8");
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = text.trim() === "" ? `The document is empty. at ${text.length}` : (error as Error).message;
    throw new HttpError(TRITON_JSON_STATUS, `failed to parse the request JSON buffer: ${reason}`);
  }
}

/** `ready` of a repository index request (HandleRepositoryIndex): a boolean when present. */
function readyOnly(body: unknown): boolean {
  const ready = findMember(body, "ready");
  if (ready === undefined) return false;
  if (typeof ready !== "boolean") throw badRequest("Invalid value for 'ready': expected a boolean");
  return ready;
}

/**
 * The parameters of a load request as Triton's HandleRepositoryControl reads them: every member a string
 * (TritonJson's failure otherwise, 500), `config` as the config JSON, `file:<path>` as base64 content, and
 * any other key refused with Triton's INTERNAL "unexpected error on creating Triton parameter".
 */
function loadParameters(body: unknown): { config?: string; files?: Record<string, Uint8Array> } {
  const result: { config?: string; files?: Record<string, Uint8Array> } = {};
  const parameters = findMember(body, "parameters");
  if (parameters === undefined) return result;
  if (!isObject(parameters)) throw new HttpError(TRITON_JSON_STATUS, NON_OBJECT_MEMBERS);
  for (const [key, value] of Object.entries(parameters)) {
    if (typeof value !== "string") throw new HttpError(TRITON_JSON_STATUS, NON_STRING);
    if (key === "config") {
      result.config = value;
    } else if (key.startsWith("file:")) {
      result.files ??= {};
      result.files[key.slice("file:".length)] = Buffer.from(value, "base64");
    } else {
      throw new HttpError(TRITON_JSON_STATUS, "unexpected error on creating Triton parameter");
    }
  }
  return result;
}

/**
 * `parameters.unload_dependents` of an unload request. Triton reads it as a boolean, and when it is not
 * one, the error it builds is overwritten by the unload's own result: the model is unloaded without its
 * dependents. So here.
 */
function unloadDependents(body: unknown): boolean {
  return findMember(findMember(body, "parameters"), "unload_dependents") === true;
}

/** Serves every endpoint but infer, answering errors through `context.fail`; never rejects. */
export async function handleApiRequest(
  context: HandlerContext,
  route: Route,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  try {
    await serveApiRequest(context, route, req, res);
  } catch (error) {
    context.fail(req, res, error);
  }
}

async function serveApiRequest(
  context: HandlerContext,
  route: Route,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { core, maxInputSize } = context;
  switch (route.kind) {
    case "health-live":
      sendEmpty(res, (await core.isLive()) ? 200 : 400);
      return;
    case "health-ready":
      sendEmpty(res, (await core.isReady()) ? 200 : 400);
      return;
    case "server-metadata":
      sendJson(res, 200, JSON.stringify(await core.serverMetadata()));
      return;
    case "model-metadata":
      sendJson(res, 200, JSON.stringify(await core.modelMetadata(route.model, route.version)));
      return;
    case "model-ready":
      if (await core.isModelReady(route.model, route.version)) sendEmpty(res, 200);
      else sendError(res, 400, "Model version not ready");
      return;
    case "model-config":
      sendJson(res, 200, JSON.stringify(await core.modelConfig(route.model, route.version)));
      return;
    case "model-stats":
      sendJson(
        res,
        200,
        JSON.stringify({ model_stats: await core.modelStatistics(route.model, route.version) }),
      );
      return;
    case "all-stats":
      sendJson(res, 200, JSON.stringify({ model_stats: await core.modelStatistics() }));
      return;
    case "repository-index": {
      const body = await readJsonBody(req, maxInputSize, context.holdOf(res));
      const index = await core.repositoryIndex({ readyOnly: readyOnly(body) });
      sendJson(res, 200, JSON.stringify(index));
      return;
    }
    case "repository-load": {
      const body = await readJsonBody(req, maxInputSize, context.holdOf(res));
      await core.loadModel(route.model, loadParameters(body));
      sendEmpty(res, 200);
      return;
    }
    case "repository-unload": {
      const body = await readJsonBody(req, maxInputSize, context.holdOf(res));
      await core.unloadModel(route.model, { unloadDependents: unloadDependents(body) });
      sendEmpty(res, 200);
      return;
    }
    // Shared memory, trace and logging are answered as the gRPC front end answers them (features off):
    // served only so that `--http-restricted-api` covers every group Triton's does.
    case "system-shared-memory":
    case "cuda-shared-memory": {
      const kind = route.kind === "system-shared-memory" ? "system" : "cuda";
      if (route.action !== "status") throw new ServerError("UNSUPPORTED", SHM_DISABLED);
      if (route.model !== "")
        throw new ServerError("NOT_FOUND", `Unable to find ${kind} shared memory region: '${route.model}'`);
      sendJson(res, 200, "[]");
      return;
    }
    case "trace-setting":
      throw new ServerError("UNAVAILABLE", "the server does not support tracing");
    case "logging":
      throw new ServerError("UNAVAILABLE", "the server does not support dynamic logging");
    case "model-infer":
      throw new Error("infer is served by the infer handler");
  }
}
