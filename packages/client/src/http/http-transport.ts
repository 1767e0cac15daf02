/**
 * Sends requests over one dispatcher: undici's (a keep-alive Pool, a ProxyAgent, or one injected) or, with
 * `engine: "wire"`, the client's own HTTP/1.1 pool (wire/wire-pool.ts), with the call's deadline and abort
 * signal, and retries per retry-policy.ts. Owns the client's lifetime: close() drains, destroy() fails calls
 * in flight with ClientClosedError.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type Dispatcher, Pool, ProxyAgent } from "undici";
import {
  AbortedError,
  ClientClosedError,
  DeadlineExceededError,
  InferenceError,
  UnavailableError,
} from "../errors.js";
import { isRetryable, parseRetryAfterMs, retryDelayMs } from "../retry-policy.js";
import {
  Exchange,
  type ExchangeDispatcher,
  type ExchangeRequest,
  type InflightExchange,
  type Settle,
} from "./exchange.js";
import type { ResolvedHttpClientOptions } from "./http-client-options.js";
import { InflightList } from "./inflight-list.js";
import type { RawResponse } from "./raw-response.js";
import { createWirePool } from "./wire/wire-pool.js";

/** HTTP statuses that mean "try again later". */
function isUnavailableStatus(status: number): boolean {
  return status === 503 || status === 429 || status === 502;
}

function createDispatcher(o: ResolvedHttpClientOptions): ExchangeDispatcher {
  if (o.engine === "wire") {
    return createWirePool(o.origin, {
      connections: o.connections,
      connectTimeoutMs: o.connectTimeoutMs,
      tls: o.tls,
    });
  }
  const connect = { timeout: o.connectTimeoutMs, ...(o.tls ?? {}) };
  if (o.proxy !== undefined) {
    return undiciDispatcher(
      new ProxyAgent({ uri: o.proxy, connections: o.connections, requestTls: connect, connect }),
    );
  }
  return undiciDispatcher(new Pool(o.origin, { connections: o.connections, connect }));
}

/**
 * An undici Dispatcher as an exchange's dispatcher. Only a body in pieces is outside undici's typed bodies,
 * and only the wire engine's infer() makes one (http-client.ts); undici would still send it, as an iterable.
 */
function undiciDispatcher(dispatcher: Dispatcher): ExchangeDispatcher {
  return dispatcher as unknown as ExchangeDispatcher;
}

/** How one call is sent. */
export interface SendPolicy {
  /** Safe to repeat (then UNAVAILABLE answers and any connection failure are retried). */
  readonly idempotent: boolean;
  /** Retries allowed. */
  readonly maxRetries: number;
}

/** The HTTP transport under the client. */
export class HttpTransport {
  readonly options: ResolvedHttpClientOptions;
  readonly #dispatcher: ExchangeDispatcher;
  readonly #owned: boolean;
  readonly #inflight = new InflightList<InflightExchange>();
  #closed = false;
  #destroyed = false;
  #closing: Promise<void> | undefined;

  constructor(options: ResolvedHttpClientOptions) {
    this.options = options;
    this.#owned = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher === undefined ? createDispatcher(options) : undiciDispatcher(options.dispatcher);
  }

  /** Whether close() or destroy() was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** One attempt, no retries: the infer hot path. */
  once(
    request: ExchangeRequest,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
  ): Promise<RawResponse> {
    if (this.#closed) return Promise.reject(new ClientClosedError());
    const exchange = new Exchange<RawResponse>(request, signal, timeoutMs, this.#inflight, null, undefined);
    return exchange.start(this.#dispatcher);
  }

  /** One attempt whose answer `settle(answer, arg)` turns into the result, in the same promise. */
  onceSettled<T, A>(
    request: ExchangeRequest,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    settle: Settle<T, A>,
    arg: A,
  ): Promise<T> {
    if (this.#closed) return Promise.reject(new ClientClosedError());
    const exchange = new Exchange<T, A>(request, signal, timeoutMs, this.#inflight, settle, arg);
    return exchange.start(this.#dispatcher);
  }

  /** Sends with retries and an overall deadline. Resolves with the last answer, whatever its status. */
  async send(
    request: ExchangeRequest,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    policy: SendPolicy,
  ): Promise<RawResponse> {
    if (policy.maxRetries === 0) return this.once(request, signal, timeoutMs);
    const deadlineAt = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
    for (let retry = 0; ; retry++) {
      const remainingMs = deadlineAt === undefined ? undefined : deadlineAt - Date.now();
      if (remainingMs !== undefined && remainingMs <= 0) {
        throw new DeadlineExceededError(
          `${request.method} ${request.path}: deadline of ${timeoutMs} ms exceeded`,
        );
      }
      let failure: InferenceError;
      let answer: RawResponse | undefined;
      try {
        answer = await this.once(request, signal, remainingMs);
        if (!isUnavailableStatus(answer.status) || !policy.idempotent || retry >= policy.maxRetries)
          return answer;
        const retryAfterMs = parseRetryAfterMs(answer.header("retry-after"));
        failure = new UnavailableError(
          `HTTP ${answer.status}`,
          retryAfterMs === undefined ? {} : { retryAfterMs },
        );
      } catch (error) {
        if (!(error instanceof InferenceError) || retry >= policy.maxRetries) throw error;
        if (!isRetryable(error, policy.idempotent)) throw error;
        failure = error;
      }
      const delayMs = retryDelayMs(retry, this.options.backoff, failure);
      if (deadlineAt !== undefined && Date.now() + delayMs >= deadlineAt) {
        if (answer !== undefined) return answer; // the caller turns it into the right error
        throw failure;
      }
      await this.#wait(delayMs, signal, request);
      if (this.#closed) throw new ClientClosedError();
    }
  }

  async #wait(delayMs: number, signal: AbortSignal | undefined, request: ExchangeRequest): Promise<void> {
    try {
      await sleep(delayMs, undefined, signal === undefined ? undefined : { signal });
    } catch {
      throw new AbortedError(`${request.method} ${request.path}: aborted`, { cause: signal?.reason });
    }
  }

  /** Graceful: refuses new calls, lets calls in flight finish, then closes the pool. Idempotent. */
  close(): Promise<void> {
    this.#closed = true;
    if (this.#destroyed || !this.#owned) return Promise.resolve();
    // A destroy() while closing makes undici's close() reject; the client is closed either way.
    this.#closing ??= this.#dispatcher.close().catch(() => undefined);
    return this.#closing;
  }

  /** Forceful: calls in flight reject with ClientClosedError (`cause` = `error`). Idempotent. */
  async destroy(error?: Error): Promise<void> {
    this.#closed = true;
    for (const exchange of this.#inflight.toArray()) {
      exchange.fail(
        new ClientClosedError(`${exchange.describe()}: the client was destroyed`, { cause: error }),
      );
    }
    if (this.#destroyed) return;
    this.#destroyed = true;
    if (this.#owned) await this.#dispatcher.destroy(error ?? null);
  }
}
