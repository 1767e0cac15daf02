/**
 * One HTTP request/response exchange on an undici Dispatcher, driven through `dispatch()` with a handler
 * object, not `request()`: no response stream, no per-call closures beyond the promise executor. The
 * handler itself is the abort-signal listener (`handleEvent`) and the deadline timer's argument.
 *
 * The handler speaks undici's original handler API (onConnect / onHeaders / onData / onComplete / onError),
 * the one undici 7's connection code calls itself. A handler written against the newer onRequestStart /
 * onResponseStart API gets wrapped per request in an adapter that also parses every response header into
 * an object: on a loop of 16 health probes in flight, that costs about 1 us of CPU per call (~12.8 us
 * instead of ~11.8 us in the calling process, raw undici dispatch both ways). The headers stay raw
 * (name, value, ...) and the few this client reads are looked up by name (raw-response.ts).
 *
 * An exchange may carry a `settle` function that turns the raw answer into the call's result inside
 * onComplete (the infer hot path decodes there): the call then costs one promise, not a second layer of
 * `await` or `.then()` per call, and the function and its argument are shared, not a closure per call.
 *
 * The response body is collected into one buffer. When Content-Length is known and the body is not
 * content-encoded, that buffer is allocated up front and padded so the binary tensor section (which starts
 * right after the JSON header, `Inference-Header-Content-Length` bytes in) lands on an 8-byte boundary:
 * then output TypedArrays can view it without copying.
 */
import type { Dispatcher } from "undici";
import {
  AbortedError,
  ClientClosedError,
  ConnectionError,
  DeadlineExceededError,
  type InferenceError,
  InvalidArgumentError,
} from "../errors.js";
import type { InflightList } from "./inflight-list.js";
import { decimalOf, isHeader, NO_HEADERS, type RawHeaders, RawResponse } from "./raw-response.js";

/**
 * What an exchange sends. It is handed to undici's `dispatch()` as is (its fields are dispatch options),
 * so callers build one object per call, not two.
 */
export interface ExchangeRequest {
  /** The server's origin, e.g. `http://127.0.0.1:8000`. */
  readonly origin: string;
  readonly method: "GET" | "POST";
  /** Path with the client's base path, e.g. `/v2/models/simple/infer`. */
  readonly path: string;
  /** Request headers, names in lower case. undici only reads them, so a shared, frozen object is fine. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Pieces (only with the wire engine, which writes them one after the other without joining them: a
   * large infer body sent from the caller's own tensor memory).
   */
  readonly body: Uint8Array | readonly Buffer[] | string | null;
}

/**
 * undici's original handler API, the part an exchange implements and a dispatcher calls: undici's own
 * Dispatcher and the wire pool (wire-pool.ts) both call it the same way.
 */
export interface ExchangeHandler {
  /** The request is on a connection; `abort(error)` cancels it there. */
  onConnect(abort: (error?: Error) => void): void;
  /** Status and headers as raw (name, value, ...) Buffers; false asks the dispatcher to pause. */
  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean;
  /** A piece of the body; false asks the dispatcher to pause. */
  onData(chunk: Buffer): boolean;
  onComplete(trailers: string[] | null): void;
  onError(error: Error): void;
}

/** What an exchange is sent through: an undici Dispatcher, or the wire pool. */
export interface ExchangeDispatcher {
  dispatch(request: ExchangeRequest, handler: ExchangeHandler): boolean;
  /** Graceful: requests queued and in flight finish first. */
  close(): Promise<void>;
  /** Forceful: requests queued and in flight fail with `error`. */
  destroy(error: Error | null): Promise<void>;
}

const EMPTY = Buffer.alloc(0);

/** What the transport's list of calls in flight needs of an exchange, whatever its result type. */
export interface InflightExchange {
  inflightPrev: InflightExchange | null;
  inflightNext: InflightExchange | null;
  describe(): string;
  fail(error: InferenceError): void;
}

function onDeadline(exchange: InflightExchange & { readonly timeoutMs: number | undefined }): void {
  exchange.fail(
    new DeadlineExceededError(`${exchange.describe()}: deadline of ${exchange.timeoutMs} ms exceeded`),
  );
}

/**
 * Turns a complete answer into the call's result (or throws the call's error); `arg` is what the caller
 * passed with it, so one function serves every call.
 */
export type Settle<T, A> = (response: RawResponse, arg: A) => T | Promise<T>;

/**
 * One attempt. Create, then `start()`; resolves with the raw answer (or what `settle` makes of it) or
 * rejects with an InferenceError (or what `settle` throws).
 */
export class Exchange<T = RawResponse, A = undefined>
  implements Dispatcher.DispatchHandler, ExchangeHandler, InflightExchange
{
  readonly timeoutMs: number | undefined;
  readonly #request: ExchangeRequest;
  readonly #signal: AbortSignal | undefined;
  readonly #inflight: InflightList<InflightExchange>;
  /** Links of the transport's InflightList (managed by the list only). */
  inflightPrev: InflightExchange | null = null;
  inflightNext: InflightExchange | null = null;
  readonly #settle: Settle<T, A> | null;
  readonly #arg: A;
  #resolve!: (result: T | Promise<T>) => void;
  #reject!: (error: unknown) => void;
  /** undici's abort of the request, once it is on a connection. */
  #abort: ((error: Error) => void) | null = null;
  #timer: NodeJS.Timeout | undefined;
  #done = false;
  #failure: InferenceError | undefined;
  #sent = false;
  #status = 0;
  #rawHeaders: RawHeaders = NO_HEADERS;
  #chunks: Buffer[] | null = null;
  #buffer: Buffer | null = null;
  #start = 0;
  #pos = 0;

  constructor(
    request: ExchangeRequest,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    inflight: InflightList<InflightExchange>,
    settle: Settle<T, A> | null,
    arg: A,
  ) {
    this.#request = request;
    this.#signal = signal;
    this.timeoutMs = timeoutMs;
    this.#inflight = inflight;
    this.#settle = settle;
    this.#arg = arg;
  }

  /** "POST /v2/models/x/infer", for messages. */
  describe(): string {
    return `${this.#request.method} ${this.#request.path}`;
  }

  /** Dispatches the request; the promise settles once. */
  start(dispatcher: ExchangeDispatcher): Promise<T> {
    const promise = new Promise<T>((resolve, reject) => {
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
    dispatcher.dispatch(this.#request, this);
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
    this.#abort?.(error);
  }

  #finish(): void {
    this.#done = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#signal?.removeEventListener("abort", this);
    this.#inflight.remove(this);
  }

  onConnect(abort: (error?: Error) => void): void {
    if (this.#done) {
      abort(this.#failure ?? new Error("aborted"));
      return;
    }
    this.#abort = abort;
    this.#sent = true;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.#status = statusCode;
    this.#rawHeaders = rawHeaders;
    let length = Number.NaN;
    let encoded = false;
    let jsonLength = 0;
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const key = rawHeaders[i]!;
      if (isHeader(key, "content-length")) length = decimalOf(rawHeaders[i + 1]!);
      else if (isHeader(key, "content-encoding")) encoded = true;
      else if (isHeader(key, "inference-header-content-length"))
        jsonLength = decimalOf(rawHeaders[i + 1]!) || 0;
    }
    if (!encoded && Number.isInteger(length) && length > 0) {
      const buffer = Buffer.allocUnsafe(length + 7);
      this.#start = (8 - ((buffer.byteOffset + jsonLength) % 8)) % 8;
      this.#pos = this.#start;
      this.#buffer = buffer;
    }
    // Otherwise (no length, an empty body, or an encoded one) onData collects chunks as they come.
    return true;
  }

  onData(chunk: Buffer): boolean {
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
    return true;
  }

  onComplete(): void {
    if (this.#done) return;
    this.#finish();
    let body: Buffer;
    if (this.#buffer !== null) body = this.#buffer.subarray(this.#start, this.#pos);
    else if (this.#chunks === null || this.#chunks.length === 0) body = EMPTY;
    else body = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks);
    const response = new RawResponse(this.#status, this.#rawHeaders, body);
    const settle = this.#settle;
    if (settle === null) {
      this.#resolve(response as T);
      return;
    }
    try {
      this.#resolve(settle(response, this.#arg));
    } catch (error) {
      this.#reject(error);
    }
  }

  onError(error: Error): void {
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
