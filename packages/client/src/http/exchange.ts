/**
 * One HTTP request/response exchange on an undici Dispatcher, driven through `dispatch()` with a handler
 * object, not `request()`: no response stream, no per-call closures beyond the promise executor. The
 * handler itself is the abort-signal listener (`handleEvent`) and the deadline timer's argument.
 *
 * The response body is collected into one buffer. When Content-Length is known and the body is not
 * content-encoded, that buffer is allocated up front and padded so the binary tensor section (which starts
 * right after the JSON header, `Inference-Header-Content-Length` bytes in) lands on an 8-byte boundary:
 * then output TypedArrays can view it without copying.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { Dispatcher } from "undici";
import {
  AbortedError,
  ClientClosedError,
  ConnectionError,
  DeadlineExceededError,
  type InferenceError,
  InvalidArgumentError,
} from "../errors.js";

/** What an exchange sends. */
export interface ExchangeRequest {
  readonly method: "GET" | "POST";
  /** Path with the client's base path, e.g. `/v2/models/simple/infer`. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer | string | undefined;
}

/** A completed answer (any status). */
export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

const EMPTY = Buffer.alloc(0);

function onDeadline(exchange: Exchange): void {
  exchange.fail(
    new DeadlineExceededError(`${exchange.describe()}: deadline of ${exchange.timeoutMs} ms exceeded`),
  );
}

/** One attempt. Create, then `start()`; resolves with the raw answer or rejects with an InferenceError. */
export class Exchange implements Dispatcher.DispatchHandler {
  readonly timeoutMs: number | undefined;
  readonly #request: ExchangeRequest;
  readonly #origin: string;
  readonly #signal: AbortSignal | undefined;
  readonly #inflight: Set<Exchange>;
  #resolve!: (response: RawResponse) => void;
  #reject!: (error: InferenceError) => void;
  #controller: Dispatcher.DispatchController | null = null;
  #timer: NodeJS.Timeout | undefined;
  #done = false;
  #failure: InferenceError | undefined;
  #sent = false;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  #chunks: Buffer[] | null = null;
  #buffer: Buffer | null = null;
  #start = 0;
  #pos = 0;

  constructor(
    origin: string,
    request: ExchangeRequest,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    inflight: Set<Exchange>,
  ) {
    this.#origin = origin;
    this.#request = request;
    this.#signal = signal;
    this.timeoutMs = timeoutMs;
    this.#inflight = inflight;
  }

  /** "POST /v2/models/x/infer", for messages. */
  describe(): string {
    return `${this.#request.method} ${this.#request.path}`;
  }

  /** Dispatches the request; the promise settles once. */
  start(dispatcher: Dispatcher): Promise<RawResponse> {
    const promise = new Promise<RawResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    const signal = this.#signal;
    if (signal?.aborted) {
      this.fail(new AbortedError(`${this.describe()}: aborted`, { cause: signal.reason }));
      return promise;
    }
    signal?.addEventListener("abort", this, { once: true });
    this.#inflight.add(this);
    if (this.timeoutMs !== undefined) this.#timer = setTimeout(onDeadline, this.timeoutMs, this);
    const r = this.#request;
    dispatcher.dispatch(
      { origin: this.#origin, path: r.path, method: r.method, headers: r.headers, body: r.body ?? null },
      this,
    );
    return promise;
  }

  /** The abort signal's listener. */
  handleEvent(): void {
    this.fail(new AbortedError(`${this.describe()}: aborted`, { cause: this.#signal?.reason }));
  }

  /** Settles with `error` (first settlement wins) and cancels the request on the wire. */
  fail(error: InferenceError): void {
    if (this.#done) return;
    this.#finish();
    this.#failure = error;
    this.#reject(error);
    this.#controller?.abort(error);
  }

  #finish(): void {
    this.#done = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#signal?.removeEventListener("abort", this);
    this.#inflight.delete(this);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#done) {
      controller.abort(this.#failure ?? new Error("aborted"));
      return;
    }
    this.#controller = controller;
    this.#sent = true;
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    this.#status = statusCode;
    this.#headers = headers;
    const length = Number(headers["content-length"]);
    if (headers["content-encoding"] === undefined && Number.isInteger(length) && length > 0) {
      const jsonLength = Number(headers["inference-header-content-length"]) || 0;
      const buffer = Buffer.allocUnsafe(length + 7);
      this.#start = (8 - ((buffer.byteOffset + jsonLength) % 8)) % 8;
      this.#pos = this.#start;
      this.#buffer = buffer;
    } else {
      this.#chunks = [];
    }
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const buffer = this.#buffer;
    if (buffer !== null && this.#pos + chunk.length <= buffer.length) {
      chunk.copy(buffer, this.#pos);
      this.#pos += chunk.length;
    } else {
      // More bytes than Content-Length announced (or no length): fall back to collecting chunks.
      if (this.#chunks === null) {
        this.#chunks = buffer === null ? [] : [buffer.subarray(this.#start, this.#pos)];
        this.#buffer = null;
      }
      this.#chunks.push(chunk);
    }
  }

  onResponseEnd(): void {
    if (this.#done) return;
    this.#finish();
    let body: Buffer;
    if (this.#buffer !== null) body = this.#buffer.subarray(this.#start, this.#pos);
    else if (this.#chunks === null || this.#chunks.length === 0) body = EMPTY;
    else body = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks);
    this.#resolve({ status: this.#status, headers: this.#headers, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.#done) return;
    this.fail(this.#mapError(error));
  }

  #mapError(error: Error): InferenceError {
    const code = (error as { code?: string }).code;
    const what = this.describe();
    switch (code) {
      case "UND_ERR_HEADERS_TIMEOUT":
      case "UND_ERR_BODY_TIMEOUT":
        return new DeadlineExceededError(`${what}: ${error.message}`, { cause: error });
      case "UND_ERR_DESTROYED":
      case "UND_ERR_CLOSED":
        return new ClientClosedError(`${what}: the client is closed`, { cause: error });
      case "UND_ERR_INVALID_ARG":
        return new InvalidArgumentError(`${what}: ${error.message}`, { cause: error });
      case "UND_ERR_CONNECT_TIMEOUT":
        return new ConnectionError(`${what}: connect timeout (${error.message})`, {
          cause: error,
          requestSent: false,
        });
      default:
        return new ConnectionError(`${what}: ${error.message || code || "connection failed"}`, {
          cause: error,
          requestSent: this.#sent,
        });
    }
  }
}
