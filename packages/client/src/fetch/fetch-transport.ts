/**
 * Sends requests with fetch, with the call's deadline and abort signal (fetch-exchange.ts) and retries
 * (http/http-retries.ts, shared with Node's transport). The runtime's fetch owns the connections, so the
 * client's lifetime is its calls: close() lets the calls in flight finish, destroy() fails them with
 * ClientClosedError; after either, calls reject with ClientClosedError.
 */
import { ClientClosedError } from "../errors.js";
import { type SendPolicy, sendWithRetries } from "../http/http-retries.js";
import type { FetchAnswer } from "./fetch-answer.js";
import type { ResolvedFetchClientOptions } from "./fetch-client-options.js";
import { FetchExchange, type FetchRequest } from "./fetch-exchange.js";

/** The fetch transport under the client. */
export class FetchTransport {
  readonly #options: ResolvedFetchClientOptions;
  readonly #inflight = new Set<FetchExchange>();
  #closed = false;

  constructor(options: ResolvedFetchClientOptions) {
    this.#options = options;
  }

  /** Whether close() or destroy() was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** One attempt, no retries. */
  once(
    request: FetchRequest,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
  ): Promise<FetchAnswer> {
    if (this.#closed) return Promise.reject(new ClientClosedError());
    return new FetchExchange(request, signal, timeoutMs, this.#inflight).start(this.#options.fetch);
  }

  /** Sends with retries and an overall deadline. Resolves with the last answer, whatever its status. */
  send(
    request: FetchRequest,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    policy: SendPolicy,
  ): Promise<FetchAnswer> {
    if (policy.maxRetries === 0) return this.once(request, signal, timeoutMs);
    return sendWithRetries((remainingMs) => this.once(request, signal, remainingMs), policy, {
      what: `${request.method} ${request.path}`,
      signal,
      timeoutMs,
      backoff: this.#options.backoff,
      isClosed: () => this.#closed,
    });
  }

  /** Graceful: refuses new calls and resolves once the calls in flight have settled. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(Array.from(this.#inflight, (exchange) => exchange.settled));
  }

  /** Forceful: calls in flight reject with ClientClosedError (`cause` = `error`). Idempotent. */
  async destroy(error?: Error): Promise<void> {
    this.#closed = true;
    for (const exchange of Array.from(this.#inflight)) {
      exchange.fail(
        new ClientClosedError(`${exchange.describe()}: the client was destroyed`, { cause: error }),
      );
    }
  }
}
