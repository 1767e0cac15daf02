/**
 * Every call of the v2 REST API except infer, over any HTTP transport: the paths (http-paths.ts), the JSON
 * sent, the answers checked (response-schemas.ts) and their errors (http-answer.ts). A transport's client
 * extends this class with how it exchanges one request (`exchange`), how it gets an answer's plain body
 * (`decoded`), and infer itself, so Node's client (http-client.ts) and the fetch client
 * (fetch/fetch-client.ts) answer every call the same way.
 */
import type { ModelConfig } from "@tbench/proto";
import { base64Of } from "../bytes.js";
import { InvalidArgumentError, ModelNotFoundError, UnsupportedError } from "../errors.js";
import type {
  CallOptions,
  LoadModelOptions,
  RepositoryIndexOptions,
  UnloadModelOptions,
} from "../inference-client.js";
import type {
  LogSettings,
  LogSettingsUpdate,
  ModelMetadata,
  ModelStatistics,
  RepositoryIndexEntry,
  ServerMetadata,
  SharedMemoryRegion,
  SharedMemoryRegionStatus,
  TraceSettings,
  TraceSettingsUpdate,
} from "../result-types.js";
import { errorOfAnswer, type HttpAnswer } from "./http-answer.js";
import { extensionOf, modelPath, paths } from "./http-paths.js";
import { parseAnswer } from "./response-schemas.js";

/** The REST calls other than infer, over the transport a subclass provides. */
export abstract class HttpRestCalls<A extends HttpAnswer> {
  /** The server URL's path prefix ("" for none). */
  readonly #base: string;
  /** Paths of the health probes, built once. */
  readonly #livePath: string;
  readonly #readyPath: string;

  constructor(basePath: string) {
    this.#base = basePath;
    this.#livePath = paths.live(basePath);
    this.#readyPath = paths.ready(basePath);
  }

  /** Sends a non-infer call (JSON body or none) and resolves with the answer, whatever its status. */
  protected abstract exchange(
    method: "GET" | "POST",
    path: string,
    json: unknown,
    options: CallOptions | undefined,
    idempotent: boolean,
  ): Promise<A>;

  /** The answer's body as plain bytes (decompressed where the transport leaves that to the client). */
  protected abstract decoded(answer: A): Uint8Array | Promise<Uint8Array>;

  /** A non-infer call: sends JSON (or nothing), returns the 2xx answer's body; error answers throw. */
  async #call(
    method: "GET" | "POST",
    path: string,
    json: unknown,
    options: CallOptions | undefined,
    idempotent: boolean,
  ): Promise<Uint8Array> {
    const answer = await this.exchange(method, path, json, options, idempotent);
    const body = await this.decoded(answer);
    if (answer.status >= 200 && answer.status < 300) return body;
    const error = errorOfAnswer(answer, body, undefined);
    const extension = answer.status === 404 ? extensionOf(this.#base, path) : undefined;
    if (extension !== undefined && !(error instanceof ModelNotFoundError && /model/i.test(error.message))) {
      // A plain 404 on an extension's endpoint: the server does not implement that extension.
      throw new UnsupportedError(
        `${method} ${path}: the server does not implement the '${extension}' extension (HTTP 404: ${error.serverMessage})`,
        { status: 404, serverMessage: error.serverMessage ?? "", cause: error },
      );
    }
    throw error;
  }

  /** Health probes: 200 is true; "not ready" answers (400, 404, 503) are false; others throw. */
  async #probe(path: string, options: CallOptions | undefined): Promise<boolean> {
    const answer = await this.exchange("GET", path, undefined, options, false);
    if (answer.status === 200) return true;
    if (answer.status === 400 || answer.status === 404 || answer.status === 503) return false;
    throw errorOfAnswer(answer, await this.decoded(answer), undefined);
  }

  // ---- health and metadata -------------------------------------------------------------------------

  isServerLive(options?: CallOptions): Promise<boolean> {
    return this.#probe(this.#livePath, options);
  }

  isServerReady(options?: CallOptions): Promise<boolean> {
    return this.#probe(this.#readyPath, options);
  }

  isModelReady(model: string, version?: string, options?: CallOptions): Promise<boolean> {
    return this.#probe(paths.modelReady(this.#base, model, version), options);
  }

  async serverMetadata(options?: CallOptions): Promise<ServerMetadata> {
    return parseAnswer(
      "serverMetadata",
      await this.#call("GET", paths.server(this.#base), undefined, options, true),
    );
  }

  async modelMetadata(model: string, version?: string, options?: CallOptions): Promise<ModelMetadata> {
    const body = await this.#call("GET", modelPath(this.#base, model, version), undefined, options, true);
    return parseAnswer("modelMetadata", body);
  }

  async modelConfig(model: string, version?: string, options?: CallOptions): Promise<ModelConfig> {
    const body = await this.#call(
      "GET",
      paths.modelConfig(this.#base, model, version),
      undefined,
      options,
      true,
    );
    return parseAnswer("modelConfig", body) as ModelConfig;
  }

  // ---- repository ----------------------------------------------------------------------------------

  async repositoryIndex(
    request?: RepositoryIndexOptions,
    options?: CallOptions,
  ): Promise<readonly RepositoryIndexEntry[]> {
    const json = request?.readyOnly === undefined ? {} : { ready: request.readyOnly };
    return parseAnswer(
      "repositoryIndex",
      await this.#call("POST", paths.index(this.#base), json, options, true),
    );
  }

  async loadModel(model: string, request?: LoadModelOptions, options?: CallOptions): Promise<void> {
    const parameters: Record<string, string> = {};
    if (request?.config !== undefined) {
      parameters["config"] =
        typeof request.config === "string" ? request.config : JSON.stringify(request.config);
    }
    if (request?.files !== undefined) {
      if (request.config === undefined) {
        throw new InvalidArgumentError(
          "loadModel: `files` requires `config` (the override model's configuration)",
        );
      }
      for (const [name, content] of Object.entries(request.files)) {
        if (!name.startsWith("file:")) {
          throw new InvalidArgumentError(
            `loadModel: file path ${JSON.stringify(name)} must start with "file:", e.g. "file:1/model.onnx"`,
          );
        }
        parameters[name] = base64Of(content);
      }
    }
    const json = Object.keys(parameters).length === 0 ? {} : { parameters };
    await this.#call("POST", paths.load(this.#base, model), json, options, false);
  }

  async unloadModel(model: string, request?: UnloadModelOptions, options?: CallOptions): Promise<void> {
    const json = { parameters: { unload_dependents: request?.unloadDependents ?? false } };
    await this.#call("POST", paths.unload(this.#base, model), json, options, false);
  }

  async modelStatistics(
    model?: string,
    version?: string,
    options?: CallOptions,
  ): Promise<readonly ModelStatistics[]> {
    if (model === undefined && version !== undefined) {
      throw new InvalidArgumentError(
        `modelStatistics: version ${JSON.stringify(version)} given without a model`,
      );
    }
    const body = await this.#call("GET", paths.stats(this.#base, model, version), undefined, options, true);
    return parseAnswer("modelStatistics", body).model_stats;
  }

  // ---- trace and log settings ----------------------------------------------------------------------

  async traceSettings(model?: string, options?: CallOptions): Promise<TraceSettings> {
    return parseAnswer(
      "traceSettings",
      await this.#call("GET", paths.trace(this.#base, model), undefined, options, true),
    );
  }

  async updateTraceSettings(
    settings: TraceSettingsUpdate,
    model?: string,
    options?: CallOptions,
  ): Promise<TraceSettings> {
    const json: Record<string, string | readonly string[] | null> = {};
    for (const [k, v] of Object.entries(settings)) json[k] = typeof v === "number" ? String(v) : v;
    return parseAnswer(
      "traceSettings",
      await this.#call("POST", paths.trace(this.#base, model), json, options, false),
    );
  }

  async logSettings(options?: CallOptions): Promise<LogSettings> {
    return parseAnswer(
      "logSettings",
      await this.#call("GET", paths.logging(this.#base), undefined, options, true),
    );
  }

  async updateLogSettings(settings: LogSettingsUpdate, options?: CallOptions): Promise<LogSettings> {
    return parseAnswer(
      "logSettings",
      await this.#call("POST", paths.logging(this.#base), settings, options, false),
    );
  }

  // ---- system shared memory ------------------------------------------------------------------------

  async systemSharedMemoryStatus(
    region?: string,
    options?: CallOptions,
  ): Promise<readonly SharedMemoryRegionStatus[]> {
    const body = await this.#call("GET", paths.shmStatus(this.#base, region), undefined, options, true);
    return parseAnswer("sharedMemoryStatus", body);
  }

  async systemSharedMemoryRegister(
    name: string,
    region: SharedMemoryRegion,
    options?: CallOptions,
  ): Promise<void> {
    const json = { key: region.key, offset: region.offset ?? 0, byte_size: region.byteSize };
    await this.#call("POST", paths.shmRegister(this.#base, name), json, options, false);
  }

  async systemSharedMemoryUnregister(name?: string, options?: CallOptions): Promise<void> {
    await this.#call("POST", paths.shmUnregister(this.#base, name), undefined, options, false);
  }
}
