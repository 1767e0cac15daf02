/**
 * The HTTP implementation of InferenceClient, over http-transport.ts (undici, or the client's own HTTP/1.1
 * engine). Non-infer calls send JSON and check the JSON answer; infer sends Triton's binary tensor format
 * (infer-encoding.ts) and decodes views of the answer (infer-decoding.ts). Error answers become
 * InferenceError subclasses through error-mapping.ts.
 */
import type { ModelConfig } from "@tbench/proto";
import { errorFromHttpStatus } from "../error-mapping.js";
import { ClientClosedError, InvalidArgumentError, ModelNotFoundError, UnsupportedError } from "../errors.js";
import type { InferResult } from "../infer-result.js";
import type {
  CallOptions,
  InferenceClient,
  LoadModelOptions,
  PreparedInfer,
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
import { parseRetryAfterMs } from "../retry-policy.js";
import type { InferRequest } from "../tensor-types.js";
import { compressBody, decompressBody } from "./compression.js";
import type { ExchangeRequest } from "./exchange.js";
import {
  type HttpClientOptions,
  type ResolvedHttpClientOptions,
  resolveHttpClientOptions,
} from "./http-client-options.js";
import { extensionOf, modelPath, paths } from "./http-paths.js";
import { HttpTransport } from "./http-transport.js";
import { createInferDecoder } from "./infer-decoder.js";
import { encodeInferRequest, encodeInferRequestPieces } from "./infer-encoding.js";
import type { RawResponse } from "./raw-response.js";
import { errorMessageOf, parseAnswer } from "./response-schemas.js";

const JSON_TYPE = "application/json";
/** infer() bodies at least this large reuse the memory of an earlier one (small ones come from Node's pool). */
const SPARE_BODY_MIN_BYTES = 64 * 1024;
/** ... and at most this large, so a client does not keep a huge buffer alive after one huge call. */
const SPARE_BODY_MAX_BYTES = 64 * 1024 * 1024;
const BINARY_TYPE = "application/octet-stream";

/**
 * The headers every infer request with this body layout carries: the client's headers, the body's type
 * and JSON length, and the compression headers. Built once per PreparedInfer, once per JSON length for infer().
 */
function inferHeaders(
  o: ResolvedHttpClientOptions,
  jsonLength: number | undefined,
): Readonly<Record<string, string>> {
  const headers: Record<string, string> = { ...o.headers };
  if (jsonLength === undefined) headers["content-type"] = JSON_TYPE;
  else {
    headers["content-type"] = BINARY_TYPE;
    headers["inference-header-content-length"] = String(jsonLength);
  }
  if (o.requestCompression !== undefined) headers["content-encoding"] = o.requestCompression;
  if (o.responseCompression) headers["accept-encoding"] = "gzip, deflate";
  return Object.freeze(headers);
}

/** An encoded infer request, sent as often as asked. */
class PreparedHttpInfer implements PreparedInfer {
  readonly model: string;
  readonly byteLength: number;
  readonly #client: HttpInferenceClient;
  readonly #path: string;
  readonly #body: Buffer;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #requestId: string | undefined;
  #compressed: Promise<Buffer> | undefined;

  constructor(client: HttpInferenceClient, model: string, path: string, request: InferRequest) {
    const encoded = encodeInferRequest(request);
    this.#client = client;
    this.model = model;
    this.#path = path;
    this.#body = encoded.body;
    this.#headers = inferHeaders(client.options, encoded.jsonLength);
    this.#requestId = request.id;
    this.byteLength = encoded.body.length;
  }

  send(options?: CallOptions): Promise<InferResult> {
    const algorithm = this.#client.options.requestCompression;
    if (algorithm !== undefined) this.#compressed ??= compressBody(this.#body, algorithm);
    return this.#client.sendInfer(
      this.#path,
      this.#compressed ?? this.#body,
      this.#headers,
      this.#requestId,
      options,
    );
  }
}

class HttpInferenceClient implements InferenceClient {
  readonly options: ResolvedHttpClientOptions;
  readonly #transport: HttpTransport;
  readonly #base: string;
  /** Headers of calls without a body: the client's own. */
  readonly #plainHeaders: Readonly<Record<string, string>>;
  /** Headers of calls with a JSON body. */
  readonly #jsonHeaders: Readonly<Record<string, string>>;
  /** Whether calls may share the prebuilt header objects (see #headersFor). */
  readonly #shareHeaders: boolean;
  /** engine "wire": infer() bodies go as pieces, not copied into one buffer. */
  readonly #wireEngine: boolean;
  /** Paths of the health probes, built once. */
  readonly #livePath: string;
  readonly #readyPath: string;
  /** The infer path of each model seen (no version), so the hot path does not rebuild it. */
  readonly #inferPaths = new Map<string, string>();
  /** infer()'s request headers per JSON header length (undefined: a JSON-only body). */
  readonly #inferHeadersByLength = new Map<number | undefined, Readonly<Record<string, string>>>();
  /** A large infer() body's memory, reused by the next large infer() (see infer()). */
  #spareBody: Buffer | null = null;
  /** Decodes infer answers, remembering the last JSON header (infer-decoder.ts). */
  readonly #decodeInfer = createInferDecoder();

  constructor(options: ResolvedHttpClientOptions) {
    this.options = options;
    this.#base = options.basePath;
    this.#transport = new HttpTransport(options);
    this.#shareHeaders = options.proxy === undefined && options.dispatcher === undefined;
    this.#wireEngine = options.engine === "wire";
    this.#plainHeaders = options.headers;
    this.#jsonHeaders = Object.freeze({ ...options.headers, "content-type": JSON_TYPE });
    this.#livePath = paths.live(options.basePath);
    this.#readyPath = paths.ready(options.basePath);
  }

  // ---- infer ---------------------------------------------------------------------------------------

  #inferPath(model: string, version: string | undefined): string {
    if (typeof model !== "string" || model === "")
      throw new InvalidArgumentError("infer: model must be a non-empty string");
    if (version !== undefined && version !== "") return paths.infer(this.#base, model, version);
    let path = this.#inferPaths.get(model);
    if (path === undefined) {
      path = paths.infer(this.#base, model);
      if (this.#inferPaths.size < 1024) this.#inferPaths.set(model, path);
    }
    return path;
  }

  infer(model: string, request: InferRequest, options?: CallOptions): Promise<InferResult> {
    const algorithm = this.options.requestCompression;
    if (this.#wireEngine && algorithm === undefined) return this.#inferInPieces(model, request, options);
    // A large body is encoded into the spare buffer of an earlier call when there is one (borrowed here,
    // so calls in flight together never share it): fresh memory for 1 MiB cost about 4x the copy itself.
    const spare = algorithm === undefined ? this.#spareBody : null;
    this.#spareBody = null;
    let path: string;
    let encoded: ReturnType<typeof encodeInferRequest>;
    try {
      path = this.#inferPath(model, request.modelVersion);
      encoded = encodeInferRequest(request, spare ?? undefined);
    } catch (error) {
      this.#keepSpare(spare);
      return Promise.reject(error);
    }
    const headers = this.#inferHeaders(encoded.jsonLength);
    if (algorithm !== undefined) {
      const body = compressBody(encoded.body, algorithm);
      return this.sendInfer(path, body, headers, request.id, options);
    }
    const body = encoded.body;
    if (body.buffer !== spare?.buffer) this.#keepSpare(spare); // not used: too small
    const sent = this.sendInfer(path, body, headers, request.id, options);
    if (body.length < SPARE_BODY_MIN_BYTES) return sent;
    // Kept once the call has settled: undici has then written the body or given the request up (an
    // aborted request's socket is destroyed, which cancels any write still queued from this memory).
    const keep = () => this.#keepSpare(body.buffer === spare?.buffer ? spare : body);
    return sent.then(
      (result) => {
        keep();
        return result;
      },
      (error: unknown) => {
        keep();
        throw error;
      },
    );
  }

  /**
   * infer() on the wire engine: the body goes as pieces, the JSON header then each binary input straight
   * from the caller's tensor memory (the engine writes them one after the other, joining only small ones),
   * so a large tensor is not copied into a body first. Sent as given when the call is made.
   */
  #inferInPieces(
    model: string,
    request: InferRequest,
    options: CallOptions | undefined,
  ): Promise<InferResult> {
    let path: string;
    let encoded: ReturnType<typeof encodeInferRequestPieces>;
    try {
      path = this.#inferPath(model, request.modelVersion);
      encoded = encodeInferRequestPieces(request);
    } catch (error) {
      return Promise.reject(error);
    }
    const headers = this.#inferHeaders(encoded.jsonLength);
    return this.sendInfer(path, encoded.pieces, headers, request.id, options);
  }

  /** inferHeaders for this client and JSON length, built once per length (they are frozen, so shared). */
  #inferHeaders(jsonLength: number | undefined): Readonly<Record<string, string>> {
    let headers = this.#inferHeadersByLength.get(jsonLength);
    if (headers === undefined) {
      headers = inferHeaders(this.options, jsonLength);
      if (this.#inferHeadersByLength.size < 256) this.#inferHeadersByLength.set(jsonLength, headers);
    }
    return headers;
  }

  /** Keeps `buffer` as the spare body (the larger of it and the current spare, at most SPARE_BODY_MAX_BYTES). */
  #keepSpare(buffer: Buffer | null): void {
    if (buffer === null || buffer.length < SPARE_BODY_MIN_BYTES || buffer.length > SPARE_BODY_MAX_BYTES)
      return;
    if (this.#spareBody === null || this.#spareBody.length < buffer.length) this.#spareBody = buffer;
  }

  prepareInfer(model: string, request: InferRequest): PreparedInfer {
    return new PreparedHttpInfer(this, model, this.#inferPath(model, request.modelVersion), request);
  }

  /**
   * Sends an encoded infer body (used by infer and PreparedInfer). The hot path (no retries, no auth hook
   * or compression to wait for) is one exchange whose answer is decoded inside it: one promise per call.
   */
  sendInfer(
    path: string,
    body: Buffer | readonly Buffer[] | Promise<Buffer>,
    baseHeaders: Readonly<Record<string, string>>,
    requestId: string | undefined,
    options: CallOptions | undefined,
  ): Promise<InferResult> {
    const o = this.options;
    let headers: Readonly<Record<string, string>> | Promise<Record<string, string>>;
    try {
      headers = this.#headersFor(baseHeaders, options);
    } catch (error) {
      return Promise.reject(error);
    }
    const maxRetries = options?.maxRetries ?? (o.retryInfer ? o.maxRetries : 0);
    if (maxRetries === 0 && !(body instanceof Promise) && !(headers instanceof Promise)) {
      const request: ExchangeRequest = { origin: o.origin, method: "POST", path, headers, body };
      const timeoutMs = options?.timeoutMs ?? o.timeoutMs;
      return this.#transport.onceSettled(request, options?.signal, timeoutMs, this.#inferAnswer, requestId);
    }
    return this.#sendInferAwaiting(path, body, headers, requestId, options, maxRetries);
  }

  /** sendInfer when something must be awaited first (auth hook, compression) or retries apply. */
  async #sendInferAwaiting(
    path: string,
    body: Buffer | readonly Buffer[] | Promise<Buffer>,
    headers: Readonly<Record<string, string>> | Promise<Record<string, string>>,
    requestId: string | undefined,
    options: CallOptions | undefined,
    maxRetries: number,
  ): Promise<InferResult> {
    const request: ExchangeRequest = {
      origin: this.options.origin,
      method: "POST",
      path,
      headers: await headers,
      body: await body,
    };
    const response = await this.#send(request, options, maxRetries, true);
    return this.#inferAnswer(response, requestId);
  }

  /** An infer answer (any status) as the call's result or error; shared by every call, not a closure. */
  readonly #inferAnswer = (
    response: RawResponse,
    requestId: string | undefined,
  ): InferResult | Promise<InferResult> => {
    const encoding = response.header("content-encoding");
    if (encoding === undefined) return this.#inferResult(response, response.body, requestId);
    return decompressBody(response.body, encoding).then((decoded) =>
      this.#inferResult(response, decoded, requestId),
    );
  };

  #inferResult(response: RawResponse, body: Buffer, requestId: string | undefined): InferResult {
    if (response.status !== 200) throw this.#errorOf(response, body, requestId);
    return this.#decodeInfer(body, response.header("inference-header-content-length"));
  }

  // ---- plumbing ------------------------------------------------------------------------------------

  /**
   * The headers of one call. Without per-call headers or an auth hook that is `base` itself, shared by
   * every call: undici's Pool only reads them (the shared objects are frozen, so a change in that would
   * fail loudly, not leak between calls). A ProxyAgent adds `host` to the object it is given, and an
   * injected dispatcher may do anything, so with those every call gets its own copy, as does a call with
   * its own headers (on top) or an auth hook (which sets headers).
   */
  #headersFor(
    base: Readonly<Record<string, string>>,
    options: CallOptions | undefined,
  ): Readonly<Record<string, string>> | Promise<Record<string, string>> {
    const extra = options?.headers;
    const hook = this.options.authHook;
    if (extra === undefined && hook === undefined && this.#shareHeaders) return base;
    const headers: Record<string, string> = { ...base };
    if (extra !== undefined) {
      for (const [k, v] of Object.entries(extra)) headers[k.toLowerCase()] = v;
    }
    if (hook === undefined) return headers;
    const done = hook(headers);
    return done instanceof Promise ? done.then(() => headers) : headers;
  }

  /** One attempt when no retries apply (no retry loop, no extra promise), else the retrying send. */
  #send(
    request: ExchangeRequest,
    options: CallOptions | undefined,
    maxRetries: number,
    idempotent: boolean,
  ): Promise<RawResponse> {
    const timeoutMs = options?.timeoutMs ?? this.options.timeoutMs;
    if (maxRetries === 0) return this.#transport.once(request, options?.signal, timeoutMs);
    return this.#transport.send(request, options?.signal, timeoutMs, { idempotent, maxRetries });
  }

  #decoded(response: RawResponse): Promise<Buffer> | Buffer {
    const encoding = response.header("content-encoding");
    return encoding === undefined ? response.body : decompressBody(response.body, encoding);
  }

  #errorOf(response: RawResponse, body: Buffer, requestId: string | undefined) {
    const details: { requestId?: string; retryAfterMs?: number } = {};
    const id = requestId ?? response.header("x-request-id");
    if (id !== undefined) details.requestId = id;
    const retryAfterMs = parseRetryAfterMs(response.header("retry-after"));
    if (retryAfterMs !== undefined) details.retryAfterMs = retryAfterMs;
    return errorFromHttpStatus(response.status, errorMessageOf(body, response.status), details);
  }

  /** A non-infer call: sends JSON (or nothing), returns the 2xx answer's body; error answers throw. */
  async #call(
    method: "GET" | "POST",
    path: string,
    json: unknown,
    options: CallOptions | undefined,
    idempotent: boolean,
  ): Promise<Buffer> {
    const response = await this.#exchange(method, path, json, options, idempotent);
    const body = await this.#decoded(response);
    if (response.status >= 200 && response.status < 300) return body;
    const error = this.#errorOf(response, body, undefined);
    const extension = response.status === 404 ? extensionOf(this.#base, path) : undefined;
    if (extension !== undefined && !(error instanceof ModelNotFoundError && /model/i.test(error.message))) {
      // A plain 404 on an extension's endpoint: the server does not implement that extension.
      throw new UnsupportedError(
        `${method} ${path}: the server does not implement the '${extension}' extension (HTTP 404: ${error.serverMessage})`,
        { status: 404, serverMessage: error.serverMessage ?? "", cause: error },
      );
    }
    throw error;
  }

  /** Sends a non-infer call (JSON body or none) and resolves with the answer, whatever its status. */
  #exchange(
    method: "GET" | "POST",
    path: string,
    json: unknown,
    options: CallOptions | undefined,
    idempotent: boolean,
  ): Promise<RawResponse> {
    if (this.#transport.closed) return Promise.reject(new ClientClosedError());
    const body = json === undefined ? null : JSON.stringify(json);
    const headers = this.#headersFor(json === undefined ? this.#plainHeaders : this.#jsonHeaders, options);
    const maxRetries = options?.maxRetries ?? this.options.maxRetries;
    if (headers instanceof Promise) {
      return headers.then((h) =>
        this.#send(
          { origin: this.options.origin, method, path, headers: h, body },
          options,
          maxRetries,
          idempotent,
        ),
      );
    }
    const request: ExchangeRequest = { origin: this.options.origin, method, path, headers, body };
    return this.#send(request, options, maxRetries, idempotent);
  }

  /** Health probes: 200 is true; "not ready" answers (400, 404, 503) are false; others throw. */
  async #probe(path: string, options: CallOptions | undefined): Promise<boolean> {
    const response = await this.#exchange("GET", path, undefined, options, false);
    if (response.status === 200) return true;
    if (response.status === 400 || response.status === 404 || response.status === 503) return false;
    throw this.#errorOf(response, await this.#decoded(response), undefined);
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
        parameters[name] = Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString(
          "base64",
        );
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

  // ---- lifetime ------------------------------------------------------------------------------------

  close(): Promise<void> {
    return this.#transport.close();
  }

  destroy(error?: Error): Promise<void> {
    return this.#transport.destroy(error);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Creates an HTTP client for a KServe v2 / Triton server. Options are validated here, once (a bad option
 * throws InvalidArgumentError); the client owns a keep-alive connection pool until `close()`.
 *
 * @example
 * ```ts
 * await using client = createHttpClient({ url: "http://localhost:8000" });
 * const result = await client.infer("simple", { inputs: [...] });
 * ```
 */
export function createHttpClient(options: HttpClientOptions): InferenceClient {
  return new HttpInferenceClient(resolveHttpClientOptions(options));
}
