/**
 * Maps a request path to a KServe v2 endpoint by splitting it on "/" once: no regular expressions and no
 * closures per request. Model names are percent-decoded; versions must be all digits (as Triton's route).
 * `/v1/...` paths are the OpenAI-compatible endpoint's (http/openai/).
 */

/** The endpoints of the HTTP API. */
export type RouteKind =
  | "server-metadata"
  | "health-live"
  | "health-ready"
  | "model-metadata"
  | "model-ready"
  | "model-config"
  | "model-infer"
  | "model-generate"
  | "model-generate-stream"
  | "model-stats"
  | "all-stats"
  | "repository-index"
  | "repository-load"
  | "repository-unload"
  | "system-shared-memory"
  | "cuda-shared-memory"
  | "trace-setting"
  | "logging"
  | "openai-models"
  | "openai-model"
  | "openai-completions"
  | "openai-chat-completions";

/** A matched endpoint with the model and version named in its path. */
export interface Route {
  readonly kind: RouteKind;
  readonly model: string;
  /** Undefined when the path names no version. */
  readonly version: string | undefined;
  /** Shared-memory routes only: what is asked (the region, if any, is `model`). */
  readonly action?: SharedMemoryAction;
}

/** The actions of the shared-memory routes. */
export type SharedMemoryAction = "status" | "register" | "unregister";

const SHM_ACTIONS: ReadonlySet<string> = new Set(["status", "register", "unregister"]);

const MODEL_ACTIONS: Readonly<Record<string, RouteKind>> = {
  ready: "model-ready",
  config: "model-config",
  infer: "model-infer",
  generate: "model-generate",
  generate_stream: "model-generate-stream",
  stats: "model-stats",
};

function isDigits(text: string): boolean {
  if (text.length === 0) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

function decode(segment: string): string | undefined {
  if (segment.indexOf("%") < 0) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function modelRoute(parts: readonly string[]): Route | undefined {
  // parts: ["", "v2", "models", m, ...]
  const model = decode(parts[3]!);
  if (model === undefined || model === "") return undefined;
  let index = 4;
  let version: string | undefined;
  if (parts[4] === "versions") {
    const v = parts[5];
    if (v === undefined || !isDigits(v)) return undefined;
    version = v;
    index = 6;
  }
  if (parts.length === index) return { kind: "model-metadata", model, version };
  // Triton serves a model's trace settings only without a version.
  if (parts.length === index + 2 && parts[index] === "trace" && parts[index + 1] === "setting")
    return version === undefined ? { kind: "trace-setting", model, version } : undefined;
  if (parts.length !== index + 1) return undefined;
  const kind = MODEL_ACTIONS[parts[index]!];
  return kind === undefined ? undefined : { kind, model, version };
}

/** The route for a request URL (path plus optional query), or undefined for an unknown path (404). */
export function matchRoute(url: string): Route | undefined {
  const query = url.indexOf("?");
  const path = query < 0 ? url : url.slice(0, query);
  const parts = path.split("/");
  if (parts[0] === "" && parts[1] === "v1") return openAiRoute(parts);
  if (parts[0] !== "" || parts[1] !== "v2") return undefined;
  if (parts.length === 2) return { kind: "server-metadata", model: "", version: undefined };
  const section = parts[2];
  if (section === "models") {
    if (parts.length === 4 && parts[3] === "stats")
      return { kind: "all-stats", model: "", version: undefined };
    if (parts.length >= 4) return modelRoute(parts);
    return undefined;
  }
  if (section === "health" && parts.length === 4) {
    if (parts[3] === "live") return { kind: "health-live", model: "", version: undefined };
    if (parts[3] === "ready") return { kind: "health-ready", model: "", version: undefined };
    return undefined;
  }
  if (section === "systemsharedmemory" || section === "cudasharedmemory") return sharedMemoryRoute(parts);
  if (section === "trace" && parts.length === 4 && parts[3] === "setting")
    return { kind: "trace-setting", model: "", version: undefined };
  if (section === "logging" && parts.length === 3) return { kind: "logging", model: "", version: undefined };
  if (section === "repository") {
    if (parts.length === 4 && parts[3] === "index")
      return { kind: "repository-index", model: "", version: undefined };
    if (parts.length === 6 && parts[3] === "models") {
      const model = decode(parts[4]!);
      if (model === undefined || model === "") return undefined;
      if (parts[5] === "load") return { kind: "repository-load", model, version: undefined };
      if (parts[5] === "unload") return { kind: "repository-unload", model, version: undefined };
    }
  }
  return undefined;
}

/** `/v1/models[/{model}]`, `/v1/completions`, `/v1/chat/completions`: the OpenAI-compatible endpoint. */
function openAiRoute(parts: readonly string[]): Route | undefined {
  const none = { model: "", version: undefined };
  if (parts.length === 3 && parts[2] === "models") return { kind: "openai-models", ...none };
  if (parts.length === 3 && parts[2] === "completions") return { kind: "openai-completions", ...none };
  if (parts.length === 4 && parts[2] === "chat" && parts[3] === "completions")
    return { kind: "openai-chat-completions", ...none };
  if (parts.length === 4 && parts[2] === "models") {
    const model = decode(parts[3]!);
    if (model === undefined || model === "") return undefined;
    return { kind: "openai-model", model, version: undefined };
  }
  return undefined;
}

/** Whether an endpoint is the OpenAI-compatible one's (its errors take OpenAI's shape). */
export function isOpenAiRoute(kind: RouteKind): boolean {
  return kind.startsWith("openai-");
}

/** Whether a URL is under `/v1`, matched or not: its 404 takes OpenAI's shape. */
export function isOpenAiPath(url: string): boolean {
  return url === "/v1" || url.startsWith("/v1/") || url.startsWith("/v1?");
}

/** `/v2/{system,cuda}sharedmemory[/region/{r}]/{status,register,unregister}`, as Triton routes them. */
function sharedMemoryRoute(parts: readonly string[]): Route | undefined {
  const kind = parts[2] === "systemsharedmemory" ? "system-shared-memory" : "cuda-shared-memory";
  let region = "";
  if (parts.length === 6 && parts[3] === "region") {
    const decoded = decode(parts[4]!);
    if (decoded === undefined || decoded === "") return undefined;
    region = decoded;
  } else if (parts.length !== 4) {
    return undefined;
  }
  const action = parts[parts.length - 1]!;
  if (!SHM_ACTIONS.has(action)) return undefined;
  return { kind, model: region, version: undefined, action: action as SharedMemoryAction };
}

/** Whether an endpoint accepts `method` (405 otherwise). */
export function methodAllowed(route: Route, method: string | undefined): boolean {
  switch (route.kind) {
    case "model-infer":
    case "model-generate":
    case "model-generate-stream":
    case "openai-completions":
    case "openai-chat-completions":
    case "repository-index":
    case "repository-load":
    case "repository-unload":
      return method === "POST";
    case "trace-setting":
    case "logging":
      return method === "GET" || method === "POST";
    case "system-shared-memory":
    case "cuda-shared-memory":
      return method === (route.action === "status" ? "GET" : "POST");
    default:
      return method === "GET";
  }
}
