/**
 * The InferenceClient over the standard fetch: what browsers, web workers, edge runtimes (workerd), Deno and
 * Bun get from `@tbench/client`, and Node with `engine: "fetch"`. The calls other than infer are
 * http/http-rest-calls.ts's, as on Node; infer encodes and decodes with the same modules as Node's client
 * (http/infer-encoding.ts, http/infer-decoder.ts), compresses request bodies with CompressionStream
 * (fetch-compression.ts) and leaves compressed answers to fetch, which decodes them itself.
 */
import { ClientClosedError, InvalidArgumentError, MalformedResponseError } from "../errors.js";
import { errorOfAnswer } from "../http/http-answer.js";
import { callHeaders, inferHeaders, jsonHeaders } from "../http/http-headers.js";
import { paths } from "../http/http-paths.js";
import { HttpRestCalls } from "../http/http-rest-calls.js";
import { createInferDecoder } from "../http/infer-decoder.js";
import { encodeInferRequest } from "../http/infer-encoding.js";
import type { InferResult } from "../infer-result.js";
import type { CallOptions, InferenceClient, PreparedInfer } from "../inference-client.js";
import type { InferRequest } from "../tensor-types.js";
import type { FetchAnswer } from "./fetch-answer.js";
import {
  type FetchClientOptions,
  type ResolvedFetchClientOptions,
  resolveFetchClientOptions,
} from "./fetch-client-options.js";
import { compressBody } from "./fetch-compression.js";
import type { FetchRequest } from "./fetch-exchange.js";
import { FetchTransport } from "./fetch-transport.js";

/** An encoded infer request, sent as often as asked (compressed once, on the first send). */
class PreparedFetchInfer implements PreparedInfer {
  readonly model: string;
  readonly byteLength: number;
  readonly #client: FetchInferenceClient;
  readonly #path: string;
  readonly #body: Uint8Array;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #requestId: string | undefined;
  #compressed: Promise<Uint8Array> | undefined;

  constructor(client: FetchInferenceClient, model: string, path: string, request: InferRequest) {
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

class FetchInferenceClient extends HttpRestCalls<FetchAnswer> implements InferenceClient {
  readonly options: ResolvedFetchClientOptions;
  readonly #transport: FetchTransport;
  /** Headers of calls with a JSON body. */
  readonly #jsonHeaders: Readonly<Record<string, string>>;
  /** Decodes infer answers, remembering the last JSON header (infer-decoder.ts). */
  readonly #decodeInfer = createInferDecoder();

  constructor(options: ResolvedFetchClientOptions) {
    super(options.basePath);
    this.options = options;
    this.#transport = new FetchTransport(options);
    this.#jsonHeaders = jsonHeaders(options);
  }

  // ---- infer ---------------------------------------------------------------------------------------

  #inferPath(model: string, version: string | undefined): string {
    if (typeof model !== "string" || model === "")
      throw new InvalidArgumentError("infer: model must be a non-empty string");
    return paths.infer(this.options.basePath, model, version);
  }

  infer(model: string, request: InferRequest, options?: CallOptions): Promise<InferResult> {
    let path: string;
    let encoded: ReturnType<typeof encodeInferRequest>;
    try {
      path = this.#inferPath(model, request.modelVersion);
      encoded = encodeInferRequest(request);
    } catch (error) {
      return Promise.reject(error);
    }
    const algorithm = this.options.requestCompression;
    const body = algorithm === undefined ? encoded.body : compressBody(encoded.body, algorithm);
    const headers = inferHeaders(this.options, encoded.jsonLength);
    return this.sendInfer(path, body, headers, request.id, options);
  }

  prepareInfer(model: string, request: InferRequest): PreparedInfer {
    return new PreparedFetchInfer(this, model, this.#inferPath(model, request.modelVersion), request);
  }

  /** Sends an encoded infer body (used by infer and PreparedInfer). */
  async sendInfer(
    path: string,
    body: Uint8Array | Promise<Uint8Array>,
    baseHeaders: Readonly<Record<string, string>>,
    requestId: string | undefined,
    options: CallOptions | undefined,
  ): Promise<InferResult> {
    if (this.#transport.closed) throw new ClientClosedError();
    const o = this.options;
    const request: FetchRequest = {
      method: "POST",
      origin: o.origin,
      path,
      headers: await callHeaders(baseHeaders, options?.headers, o.authHook),
      body: await body,
    };
    const maxRetries = options?.maxRetries ?? (o.retryInfer ? o.maxRetries : 0);
    const answer = await this.#send(request, options, maxRetries, true);
    if (answer.status !== 200) throw errorOfAnswer(answer, answer.body, requestId);
    const jsonLength = answer.header("inference-header-content-length");
    if (jsonLength === undefined && answer.header("content-type")?.startsWith("application/octet-stream")) {
      // Content-Type is readable cross-origin, Inference-Header-Content-Length only when the server exposes it.
      throw new MalformedResponseError(
        `POST ${path}: the answer carries binary tensors but its Inference-Header-Content-Length header is not readable; a server on another origin must list it in Access-Control-Expose-Headers (or ask for JSON outputs: binaryOutputs false)`,
      );
    }
    return this.#decodeInfer(answer.body, jsonLength);
  }

  // ---- plumbing ------------------------------------------------------------------------------------

  #send(
    request: FetchRequest,
    options: CallOptions | undefined,
    maxRetries: number,
    idempotent: boolean,
  ): Promise<FetchAnswer> {
    const timeoutMs = options?.timeoutMs ?? this.options.timeoutMs;
    return this.#transport.send(request, options?.signal, timeoutMs, { idempotent, maxRetries });
  }

  /** fetch has already decoded any Content-Encoding it accepted. */
  protected override decoded(answer: FetchAnswer): Uint8Array {
    return answer.body;
  }

  protected override async exchange(
    method: "GET" | "POST",
    path: string,
    json: unknown,
    options: CallOptions | undefined,
    idempotent: boolean,
  ): Promise<FetchAnswer> {
    if (this.#transport.closed) throw new ClientClosedError();
    const o = this.options;
    const base = json === undefined ? o.headers : this.#jsonHeaders;
    const request: FetchRequest = {
      method,
      origin: o.origin,
      path,
      headers: await callHeaders(base, options?.headers, o.authHook),
      body: json === undefined ? null : JSON.stringify(json),
    };
    return this.#send(request, options, options?.maxRetries ?? o.maxRetries, idempotent);
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
 * Creates an HTTP client that sends with the standard `fetch`. Options are validated here, once (a bad
 * option throws InvalidArgumentError). The runtime's fetch owns the connections; `close()` waits for the
 * calls in flight.
 *
 * @example
 * ```ts
 * const client = createHttpClient({ url: "https://triton.example.com" });
 * const result = await client.infer("simple", { inputs: [...] });
 * ```
 */
export function createFetchClient(options: FetchClientOptions): InferenceClient {
  return new FetchInferenceClient(resolveFetchClientOptions(options));
}
