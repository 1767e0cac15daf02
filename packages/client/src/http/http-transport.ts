/**
 * Sends requests over one dispatcher: undici's (a keep-alive Pool, a ProxyAgent, or one injected) or, with
 * `engine: "wire"`, the client's own HTTP/1.1 pool (wire/wire-pool.ts), with the call's deadline and abort
 * signal, and retries per http-retries.ts. Owns the client's lifetime: close() drains, destroy() fails calls
 * in flight with ClientClosedError.
 */
import { type Dispatcher, Pool, ProxyAgent } from "undici";
import { ClientClosedError } from "../errors.js";
import {
  Exchange,
  type ExchangeDispatcher,
  type ExchangeRequest,
  type InflightExchange,
  type Settle,
} from "./exchange.js";
import type { ResolvedHttpClientOptions } from "./http-client-options.js";
import { type SendPolicy, sendWithRetries } from "./http-retries.js";
import { InflightList } from "./inflight-list.js";
import type { RawResponse } from "./raw-response.js";
import { createWirePool } from "./wire/wire-pool.js";

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
  send(
    request: ExchangeRequest,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    policy: SendPolicy,
  ): Promise<RawResponse> {
    if (policy.maxRetries === 0) return this.once(request, signal, timeoutMs);
    return sendWithRetries((remainingMs) => this.once(request, signal, remainingMs), policy, {
      what: `${request.method} ${request.path}`,
      signal,
      timeoutMs,
      backoff: this.options.backoff,
      isClosed: () => this.#closed,
    });
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
