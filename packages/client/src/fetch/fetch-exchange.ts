/**
 * One request/response exchange over fetch: the call's deadline, the caller's abort signal and the client's
 * destroy() each settle it at once with their own error and abort the fetch (which also stops reading the
 * body). A failure of fetch itself is a ConnectionError; fetch says little about why, so `requestSent` is
 * false only where the runtime names a failure to connect (Node's and Bun's fetch do).
 */
import {
  AbortedError,
  ConnectionError,
  DeadlineExceededError,
  InferenceError,
  InvalidArgumentError,
} from "../errors.js";
import { type FetchAnswer, readAnswer } from "./fetch-answer.js";
import type { FetchFunction } from "./fetch-client-options.js";

/** What an exchange sends. */
export interface FetchRequest {
  readonly method: "GET" | "POST";
  /** The server's origin, e.g. `http://127.0.0.1:8000`. */
  readonly origin: string;
  /** Path with the client's base path, e.g. `/v2/models/simple/infer`. */
  readonly path: string;
  /** Request headers, names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array | string | null;
}

/**
 * Error codes (on the error or its `cause`) that mean the connection was never made, so the server cannot
 * have seen the request: Node's (undici) and Bun's names.
 */
const NOT_CONNECTED = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
  "ConnectionRefused",
  "FailedToOpenSocket",
]);

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** A failure of fetch (or of reading the body) as a ConnectionError; our own errors pass through. */
function connectionError(error: unknown, what: string): InferenceError {
  if (error instanceof InferenceError) return error;
  const cause = (error as { cause?: unknown } | null)?.cause;
  const code = codeOf(cause) ?? codeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  const detail = cause instanceof Error && cause.message !== "" ? ` (${cause.message})` : "";
  return new ConnectionError(`${what}: ${message || code || "fetch failed"}${detail}`, {
    cause: error,
    requestSent: code === undefined || !NOT_CONNECTED.has(code),
  });
}

/** `headers` as a Headers object; an invalid name or value is an InvalidArgumentError naming the header. */
function headersOf(headers: Readonly<Record<string, string>>): Headers {
  const result = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    try {
      result.append(name, value);
    } catch (error) {
      throw new InvalidArgumentError(`invalid ${name} header: ${(error as Error).message}`, { cause: error });
    }
  }
  return result;
}

function onDeadline(exchange: FetchExchange): void {
  exchange.fail(
    new DeadlineExceededError(`${exchange.describe()}: deadline of ${exchange.timeoutMs} ms exceeded`),
  );
}

/** One attempt. Create, then `start()`; resolves with the answer (any status) or rejects with an InferenceError. */
export class FetchExchange {
  readonly timeoutMs: number | undefined;
  readonly #request: FetchRequest;
  readonly #signal: AbortSignal | undefined;
  /** The transport's exchanges in flight (this one is in it until it settles). */
  readonly #inflight: Set<FetchExchange>;
  readonly #controller = new AbortController();
  #resolve!: (answer: FetchAnswer) => void;
  #reject!: (error: unknown) => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #done = false;
  /** Settles (never rejects) when the exchange has: what a graceful close waits for. */
  settled: Promise<void> = Promise.resolve();

  constructor(
    request: FetchRequest,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    inflight: Set<FetchExchange>,
  ) {
    this.#request = request;
    this.#signal = signal;
    this.timeoutMs = timeoutMs;
    this.#inflight = inflight;
  }

  /** "POST /v2/models/x/infer", for messages. */
  describe(): string {
    return `${this.#request.method} ${this.#request.path}`;
  }

  /** Sends the request; the promise settles once. */
  start(fetch: FetchFunction): Promise<FetchAnswer> {
    const promise = new Promise<FetchAnswer>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    const signal = this.#signal;
    if (signal?.aborted) {
      this.fail(new AbortedError(`${this.describe()}: aborted`, { cause: signal.reason }));
      return promise;
    }
    let headers: Headers;
    try {
      headers = headersOf(this.#request.headers);
    } catch (error) {
      // An invalid header name or value: nothing was sent.
      const message = `${this.describe()}: ${(error as Error).message}`;
      this.fail(new InvalidArgumentError(message, { cause: (error as Error).cause }));
      return promise;
    }
    this.settled = promise.then(
      () => undefined,
      () => undefined,
    );
    signal?.addEventListener("abort", this, { once: true });
    this.#inflight.add(this);
    if (this.timeoutMs !== undefined) this.#timer = setTimeout(onDeadline, this.timeoutMs, this);
    this.#run(fetch, headers).then(
      (answer) => this.#succeed(answer),
      (error: unknown) => {
        if (!this.#done) this.fail(connectionError(error, this.describe()));
      },
    );
    return promise;
  }

  async #run(fetch: FetchFunction, headers: Headers): Promise<FetchAnswer> {
    const { method, origin, path, body } = this.#request;
    const init: RequestInit = { method, headers, signal: this.#controller.signal };
    if (body !== null) init.body = body as Uint8Array<ArrayBuffer> | string;
    return readAnswer(await fetch(origin + path, init));
  }

  /** The abort signal's listener. */
  handleEvent(): void {
    this.fail(new AbortedError(`${this.describe()}: aborted`, { cause: this.#signal?.reason }));
  }

  /** Settles with `error` (first settlement wins) and aborts the fetch. */
  fail(error: InferenceError): void {
    if (this.#done) return;
    this.#finish();
    this.#reject(error);
    this.#controller.abort(error);
  }

  #succeed(answer: FetchAnswer): void {
    if (this.#done) return;
    this.#finish();
    this.#resolve(answer);
  }

  #finish(): void {
    this.#done = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#signal?.removeEventListener("abort", this);
    this.#inflight.delete(this);
  }
}
