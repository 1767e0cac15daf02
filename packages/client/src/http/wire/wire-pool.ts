/**
 * A minimal HTTP/1.1 keep-alive connection pool over node:net / node:tls: the part of undici's Dispatcher
 * that the client's exchanges use (`dispatch()` with undici's original handler API, `close()`,
 * `destroy()`), without undici's generality (no pipelining, no proxies, no HTTP/2, no streamed bodies, no
 * interceptors) and so without most of its cost per request: a cached request head written with the body
 * in one `socket.write`, and a response parser that finds the head with one native search (see
 * wire-connection.ts, http1-response-parser.ts, wire-request.ts).
 *
 * At most `connections` sockets, one request in flight on each; requests wait in a FIFO queue when all are
 * busy. Idle sockets are reused last-in first-out, and not past their keep-alive time (the server's
 * `Keep-Alive: timeout=` less 2 s, else 4 s, as undici); a sweep timer (unref'd) closes the expired ones.
 * With other requests in flight, writes wait for the end of the loop's turn and go out in one burst (see
 * deferWrite): against a trivial server at 16 in flight that took the calling process from ~31 to ~21 us
 * of CPU per request (fewer wakeups of the server, whose loopback receive work the writer pays for).
 * A failed connect fails every request waiting in the queue, as an undici Client fails its own queue.
 * Errors carry undici's codes (UND_ERR_CONNECT_TIMEOUT, UND_ERR_CLOSED, UND_ERR_DESTROYED, UND_ERR_SOCKET,
 * UND_ERR_INVALID_ARG), so exchange.ts maps both engines' failures the same way.
 */
import { connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { errors } from "undici";
import type { TlsOptions } from "../../connection-options.js";
import type { ExchangeDispatcher, ExchangeHandler, ExchangeRequest } from "../exchange.js";
import { DEFAULT_MAX_HEADER_BYTES } from "./http1-response-parser.js";
import {
  type KeepAliveRules,
  WireConnection,
  type WireConnectionOwner,
  type WireConnectionSettings,
} from "./wire-connection.js";
import { wireChannels } from "./wire-diagnostics.js";
import { bodyBytes, bodyLength, RequestHeadCache, WireRequest } from "./wire-request.js";

/** Where to connect. */
export interface WireTarget {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
}

/** Opens a socket to `target` (it emits 'connect', or 'secureConnect' for TLS, once connected). */
export type WireConnect = (target: WireTarget, tls: Readonly<TlsOptions> | undefined) => Socket;

/** Options of {@link createWirePool}. */
export interface WirePoolOptions {
  /** Most sockets open at once (default 8). */
  connections?: number;
  /** Connect timeout, ms (default 10000). */
  connectTimeoutMs?: number;
  /** TLS settings of https origins. */
  tls?: Readonly<TlsOptions> | undefined;
  /** Idle time without a server hint, ms (default 4000, undici's). */
  keepAliveTimeoutMs?: number;
  /** Largest response head, bytes (default 16 KiB, undici's). */
  maxHeaderBytes?: number;
  /** Opens sockets instead of node:net / node:tls (tests). */
  connect?: WireConnect;
}

const KEEP_ALIVE_MAX_MS = 600_000;
const KEEP_ALIVE_THRESHOLD_MS = 2_000;

function defaultConnect(target: WireTarget, tls: Readonly<TlsOptions> | undefined): Socket {
  if (!target.tls) return netConnect({ host: target.host, port: target.port });
  const servername = tls?.servername ?? (/^[\d.]+$|:/.test(target.host) ? undefined : target.host);
  return tlsConnect({
    host: target.host,
    port: target.port,
    ALPNProtocols: ["http/1.1"],
    ...(tls ?? {}),
    ...(servername === undefined ? {} : { servername }),
  });
}

/** A keep-alive pool for one origin. */
export class WirePool implements ExchangeDispatcher, WireConnectionOwner {
  readonly #target: WireTarget;
  readonly #tls: Readonly<TlsOptions> | undefined;
  readonly #connect: WireConnect;
  readonly #max: number;
  readonly #settings: WireConnectionSettings;
  readonly #heads: RequestHeadCache;
  /** Every connection not yet gone (connecting, busy or idle). */
  readonly #live = new Set<WireConnection>();
  /** Free connections, the most recently used last. */
  readonly #idle: WireConnection[] = [];
  #connecting = 0;
  /** Sockets not yet closed (close() and destroy() resolve when none are left). */
  #sockets = 0;
  #queueHead: WireRequest | null = null;
  #queueTail: WireRequest | null = null;
  #queued = 0;
  #sweepTimer: NodeJS.Timeout | undefined;
  /** Connections whose request is to be written at the next flush (see deferWrite). */
  #deferred: WireConnection[] = [];
  #closed = false;
  #destroyed = false;
  #drained: (() => void) | null = null;
  #drainedPromise: Promise<void> | null = null;

  constructor(origin: string, options: WirePoolOptions = {}) {
    const url = new URL(origin);
    const tls = url.protocol === "https:";
    if (!tls && url.protocol !== "http:") {
      throw new errors.InvalidArgumentError(`wire pool: expected an http: or https: origin, got ${origin}`);
    }
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    this.#target = { host, port: Number(url.port) || (tls ? 443 : 80), tls };
    this.#tls = options.tls;
    this.#connect = options.connect ?? defaultConnect;
    this.#max = options.connections ?? 8;
    const keepAlive: KeepAliveRules = {
      defaultMs: options.keepAliveTimeoutMs ?? 4_000,
      maxMs: KEEP_ALIVE_MAX_MS,
      thresholdMs: KEEP_ALIVE_THRESHOLD_MS,
    };
    this.#settings = {
      readyEvent: tls ? "secureConnect" : "connect",
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      address: `${url.hostname}:${this.#target.port}`,
      keepAlive,
      maxHeaderBytes: options.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES,
    };
    this.#heads = new RequestHeadCache(url.host);
  }

  /** Sockets open now (connecting, busy or idle), for tests and diagnostics. */
  get openSockets(): number {
    return this.#sockets;
  }

  /** Timers pending now (connect timeouts, the idle sweep), for tests: none once closed. */
  get timers(): number {
    let n = this.#sweepTimer === undefined ? 0 : 1;
    for (const connection of this.#live) if (connection.timing) n++;
    return n;
  }

  dispatch(request: ExchangeRequest, handler: ExchangeHandler): boolean {
    if (this.#closed) {
      handler.onError(this.#destroyed ? new errors.ClientDestroyedError() : new errors.ClientClosedError());
      return false;
    }
    let wire: WireRequest;
    try {
      const body = bodyBytes(request.body);
      const length = body === null ? -1 : bodyLength(body);
      const head = this.#heads.head(request.method, request.path, request.headers, length);
      wire = new WireRequest(request, handler, head, body, Math.max(0, length));
    } catch (error) {
      handler.onError(error as Error);
      return false;
    }
    if (wireChannels.create.hasSubscribers) wireChannels.create.publish({ request: wire });
    const connection = this.#takeIdle();
    if (connection === null) {
      this.#enqueue(wire);
      this.#openForQueue();
    } else if (!connection.send(wire)) this.#free(connection); // aborted in onConnect: nothing written
    return true;
  }

  abortRequest(request: WireRequest, error: Error): void {
    if (request.done) return;
    request.done = true;
    if (wireChannels.error.hasSubscribers) wireChannels.error.publish({ request, error });
    request.carrier?.cancel(request);
    request.handler.onError(error);
    // A queued request stays in the queue, done: it is skipped when its turn comes.
  }

  /** Graceful: new requests fail with UND_ERR_CLOSED; queued and in-flight ones finish, then the sockets close. */
  close(): Promise<void> {
    this.#closed = true;
    this.#settleIfDrained();
    return this.#whenDrained();
  }

  /** Forceful: queued and in-flight requests fail with `error` (default UND_ERR_DESTROYED); sockets close. */
  destroy(error: Error | null = null): Promise<void> {
    this.#closed = true;
    this.#destroyed = true;
    const reason = error ?? new errors.ClientDestroyedError();
    for (let r = this.#dequeue(); r !== null; r = this.#dequeue()) this.#failQueued(r, reason);
    for (const connection of [...this.#live]) connection.destroy(reason);
    this.#settleIfDrained();
    return this.#whenDrained();
  }

  /**
   * With other requests in flight, a request's write waits for the end of this turn of the event loop
   * (setImmediate), so that the answers read in one turn are followed by one burst of writes: the server
   * then wakes once for many requests instead of once per request. A lone request is written at once.
   */
  deferWrite(connection: WireConnection): boolean {
    if (this.#live.size - this.#idle.length - this.#connecting <= 1) return false;
    if (this.#deferred.length === 0) setImmediate(this.#flush);
    this.#deferred.push(connection);
    return true;
  }

  readonly #flush = (): void => {
    const deferred = this.#deferred;
    this.#deferred = [];
    for (const connection of deferred) connection.write();
  };

  onConnected(connection: WireConnection): void {
    this.#connecting--;
    this.#free(connection);
  }

  onConnectFailed(connection: WireConnection, error: Error): void {
    this.#connecting--;
    this.#live.delete(connection);
    // As an undici Client fails its queue: the requests waiting for a connection fail with its error.
    // Only when no other connection is left that could still serve them (connected or connecting).
    if (this.#live.size === 0) {
      for (let r = this.#dequeue(); r !== null; r = this.#dequeue()) this.#failQueued(r, error);
    }
    this.#settleIfDrained();
  }

  onFree(connection: WireConnection): void {
    this.#free(connection);
  }

  onGone(connection: WireConnection): void {
    this.#live.delete(connection);
    const at = this.#idle.lastIndexOf(connection);
    if (at >= 0) this.#idle.splice(at, 1);
    if (this.#queued > 0 && !this.#closedAndEmpty()) this.#openForQueue();
    this.#settleIfDrained();
  }

  onSocketClosed(): void {
    this.#sockets--;
    this.#settleIfDrained();
  }

  /** Gives a free connection the next queued request, or keeps it idle (or ends it when closing). */
  #free(connection: WireConnection): void {
    for (let next = this.#dequeue(); next !== null; next = this.#dequeue()) {
      if (next.done) continue;
      if (connection.send(next)) return;
    }
    if (this.#closed) {
      connection.destroy(new errors.ClientClosedError());
      return;
    }
    this.#idle.push(connection);
    this.#armSweep();
  }

  /** The most recently used idle connection still within its keep-alive time, or null. */
  #takeIdle(): WireConnection | null {
    const idle = this.#idle;
    if (idle.length === 0) return null;
    const now = Date.now();
    for (let connection = idle.pop(); connection !== undefined; connection = idle.pop()) {
      if (now < connection.idleUntil) return connection;
      connection.destroy(new errors.SocketError("keep-alive timeout")); // no request on it: nobody fails
    }
    return null;
  }

  /** Opens connections for the queue, up to the limit and never more than requests waiting. */
  #openForQueue(): void {
    while (this.#connecting < this.#queued && this.#live.size < this.#max) {
      const socket = this.#connect(this.#target, this.#tls);
      const connection = new WireConnection(this, socket, this.#settings);
      this.#live.add(connection);
      this.#connecting++;
      this.#sockets++;
    }
  }

  #enqueue(request: WireRequest): void {
    if (this.#queueTail === null) this.#queueHead = request;
    else this.#queueTail.next = request;
    this.#queueTail = request;
    this.#queued++;
  }

  #dequeue(): WireRequest | null {
    const head = this.#queueHead;
    if (head === null) return null;
    this.#queueHead = head.next;
    if (this.#queueHead === null) this.#queueTail = null;
    head.next = null;
    this.#queued--;
    return head;
  }

  #failQueued(request: WireRequest, error: Error): void {
    if (request.done) return;
    request.done = true;
    if (wireChannels.error.hasSubscribers) wireChannels.error.publish({ request, error });
    request.handler.onError(error);
  }

  /** Closes idle connections past their keep-alive time, and comes back while any are idle. */
  #armSweep(): void {
    if (this.#sweepTimer !== undefined) return;
    this.#sweepTimer = setTimeout(this.#sweep, this.#settings.keepAlive.defaultMs).unref();
  }

  readonly #sweep = (): void => {
    this.#sweepTimer = undefined;
    const now = Date.now();
    for (const connection of [...this.#idle]) {
      if (now >= connection.idleUntil) connection.destroy(new errors.SocketError("keep-alive timeout"));
    }
    if (this.#idle.length > 0) this.#armSweep();
  };

  #closedAndEmpty(): boolean {
    return this.#closed && this.#queued === 0;
  }

  /** When closed with nothing queued or in flight: ends idle sockets, and resolves once all are closed. */
  #settleIfDrained(): void {
    if (!this.#closedAndEmpty()) return;
    for (const connection of this.#live) if (connection.busy) return;
    for (const connection of [...this.#idle]) connection.destroy(new errors.ClientClosedError());
    if (this.#sweepTimer !== undefined) {
      clearTimeout(this.#sweepTimer);
      this.#sweepTimer = undefined;
    }
    if (this.#sockets === 0) this.#drained?.();
  }

  #whenDrained(): Promise<void> {
    if (this.#sockets === 0 && this.#closedAndEmpty() && this.#drainedPromise === null) {
      this.#drainedPromise = Promise.resolve();
    }
    this.#drainedPromise ??= new Promise<void>((resolve) => {
      this.#drained = resolve;
    });
    return this.#drainedPromise;
  }
}

/** Creates a wire pool for `origin` (`http://host:port` or `https://...`). */
export function createWirePool(origin: string, options: WirePoolOptions = {}): WirePool {
  return new WirePool(origin, options);
}
