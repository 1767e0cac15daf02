/**
 * The HTTP implementation of InferenceClient on Node, over http-transport.ts (undici, or the client's own
 * HTTP/1.1 engine); `engine: "fetch"` hands the options to the fetch transport (fetch/) instead. The calls
 * other than infer are http-rest-calls.ts's, shared with the fetch client; infer sends Triton's binary
 * tensor format (infer-encoding.ts) and decodes views of the answer (infer-decoding.ts). Error answers
 * become InferenceError subclasses through http-answer.ts.
 */
import { ClientClosedError, InvalidArgumentError } from "../errors.js";
import { createFetchClient } from "../fetch/fetch-client.js";
import type { InferResult } from "../infer-result.js";
import type { CallOptions, InferenceClient, PreparedInfer } from "../inference-client.js";
import type { InferRequest } from "../tensor-types.js";
import { compressBody, decompressBody } from "./compression.js";
import type { ExchangeRequest } from "./exchange.js";
import { errorOfAnswer } from "./http-answer.js";
import {
  fetchEngineOptions,
  type HttpClientOptions,
  type ResolvedHttpClientOptions,
  resolveHttpClientOptions,
} from "./http-client-options.js";
import { callHeaders, inferHeaders, jsonHeaders } from "./http-headers.js";
import { paths } from "./http-paths.js";
import { HttpRestCalls } from "./http-rest-calls.js";
import { HttpTransport } from "./http-transport.js";
import { createInferDecoder } from "./infer-decoder.js";
import { encodeInferRequest } from "./infer-encoding.js";
import { encodeInferRequestPieces } from "./infer-pieces.js";
import type { RawResponse } from "./raw-response.js";

/** infer() bodies at least this large reuse the memory of an earlier one (small ones come from Node's pool). */
const SPARE_BODY_MIN_BYTES = 64 * 1024;
/** ... and at most this large, so a client does not keep a huge buffer alive after one huge call. */
const SPARE_BODY_MAX_BYTES = 64 * 1024 * 1024;

/** An encoded infer request, sent as often as asked. */
class PreparedHttpInfer implements PreparedInfer {
  readonly model: string;
  readonly byteLength: number;
  readonly #client: HttpInferenceClient;
  readonly #path: string;
  readonly #body: Uint8Array;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #requestId: string | undefined;
  #compressed: Promise<Uint8Array> | undefined;

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

class HttpInferenceClient extends HttpRestCalls<RawResponse> implements InferenceClient {
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
  /** The infer path of each model seen (no version), so the hot path does not rebuild it. */
  readonly #inferPaths = new Map<string, string>();
  /** infer()'s request headers per JSON header length (undefined: a JSON-only body). */
  readonly #inferHeadersByLength = new Map<number | undefined, Readonly<Record<string, string>>>();
  /** A large infer() body's memory, reused by the next large infer() (see infer()). */
  #spareBody: Uint8Array | null = null;
  /** Decodes infer answers, remembering the last JSON header (infer-decoder.ts). */
  readonly #decodeInfer = createInferDecoder();

  constructor(options: ResolvedHttpClientOptions) {
    super(options.basePath);
    this.options = options;
    this.#base = options.basePath;
    this.#transport = new HttpTransport(options);
    this.#shareHeaders = options.proxy === undefined && options.dispatcher === undefined;
    this.#wireEngine = options.engine === "wire";
    this.#plainHeaders = options.headers;
    this.#jsonHeaders = jsonHeaders(options);
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
  #keepSpare(buffer: Uint8Array | null): void {
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
    body: Uint8Array | readonly Buffer[] | Promise<Uint8Array>,
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
    body: Uint8Array | readonly Buffer[] | Promise<Uint8Array>,
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

  #inferResult(response: RawResponse, body: Uint8Array, requestId: string | undefined): InferResult {
    if (response.status !== 200) throw errorOfAnswer(response, body, requestId);
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
    return callHeaders(base, extra, hook);
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

  protected override decoded(response: RawResponse): Promise<Buffer> | Buffer {
    const encoding = response.header("content-encoding");
    return encoding === undefined ? response.body : decompressBody(response.body, encoding);
  }

  /** Sends a non-infer call (JSON body or none) and resolves with the answer, whatever its status. */
  protected override exchange(
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
 * throws InvalidArgumentError); the client owns a keep-alive connection pool until `close()` (with
 * `engine: "fetch"`, the runtime's fetch owns the connections).
 *
 * @example
 * ```ts
 * await using client = createHttpClient({ url: "http://localhost:8000" });
 * const result = await client.infer("simple", { inputs: [...] });
 * ```
 */
export function createHttpClient(options: HttpClientOptions): InferenceClient {
  if (options?.engine === "fetch") return createFetchClient(fetchEngineOptions(options));
  return new HttpInferenceClient(resolveHttpClientOptions(options));
}
