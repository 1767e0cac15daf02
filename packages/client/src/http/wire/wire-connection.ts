/**
 * One keep-alive HTTP/1.1 connection of the wire pool: a socket, its response parser, and at most one
 * request on it (no pipelining). It writes a request's head and body with one `socket.write` (a large body
 * goes corked, as two buffers in one writev, not copied), hands the response to the request's handler in
 * undici's order (onConnect, onHeaders, onData..., onComplete, or onError), and tells the pool when it is
 * connected, free again, or gone. A connection that saw anything unexpected (a malformed answer, bytes
 * nobody asked for, `Connection: close`, an abort mid-request, a body still being written when the answer
 * ended) is never reused.
 */
import type { Socket } from "node:net";
import { errors } from "undici";
import { Http1ResponseParser, type ResponseParserListener } from "./http1-response-parser.js";
import { wireChannels } from "./wire-diagnostics.js";
import type { WireRequest, WireRequestCarrier } from "./wire-request.js";

/** Bodies up to this size are copied behind the head (one buffer); larger ones are written corked. */
const COPY_BODY_MAX_BYTES = 16 * 1024;

/** What a connection tells its pool. Each is called at most once per state change, never re-entered. */
export interface WireConnectionOwner {
  /** Connected: ready for a request. */
  onConnected(connection: WireConnection): void;
  /** The connection could not be made (`error`: the reason); it is gone. */
  onConnectFailed(connection: WireConnection, error: Error): void;
  /** A request finished and the connection may carry the next one. */
  onFree(connection: WireConnection): void;
  /** The connection will carry nothing more (its socket is closing). */
  onGone(connection: WireConnection): void;
  /** Its socket has closed (after onGone or onConnectFailed). */
  onSocketClosed(connection: WireConnection): void;
  /** Whether to write the request just put on `connection` later (then the pool calls its write()). */
  deferWrite(connection: WireConnection): boolean;
  /** The handler aborted `request` (through the `abort` its onConnect got). */
  abortRequest(request: WireRequest, error: Error): void;
}

/** How connections keep alive (undici's defaults and rules). */
export interface KeepAliveRules {
  /** Idle time allowed when the server gives no `Keep-Alive: timeout=` hint, ms. */
  readonly defaultMs: number;
  /** Upper bound of a hinted idle time, ms. */
  readonly maxMs: number;
  /** Taken off the server's hint, so that a request never races the server's own idle close, ms. */
  readonly thresholdMs: number;
}

/** Settings of one connection. */
export interface WireConnectionSettings {
  /** 'secureConnect' for TLS sockets, 'connect' otherwise. */
  readonly readyEvent: "connect" | "secureConnect";
  readonly connectTimeoutMs: number;
  /** For messages: `host:port`. */
  readonly address: string;
  readonly keepAlive: KeepAliveRules;
  readonly maxHeaderBytes: number;
}

/** One connection; created connecting. */
export class WireConnection implements ResponseParserListener, WireRequestCarrier {
  readonly socket: Socket;
  /** Not reused at or after this time (Date.now() ms); set each time it becomes free. */
  idleUntil = 0;
  readonly #owner: WireConnectionOwner;
  readonly #settings: WireConnectionSettings;
  readonly #parser: Http1ResponseParser;
  #request: WireRequest | null = null;
  /** The current request has been written (or its write begun); false while a deferred write waits. */
  #written = false;
  #connected = false;
  #gone = false;
  #connectTimer: NodeJS.Timeout | undefined;
  #socketError: Error | undefined;

  constructor(owner: WireConnectionOwner, socket: Socket, settings: WireConnectionSettings) {
    this.#owner = owner;
    this.#settings = settings;
    this.socket = socket;
    this.#parser = new Http1ResponseParser(this, settings.maxHeaderBytes);
    socket.setNoDelay(true);
    socket.once(settings.readyEvent, this.#onReady);
    socket.on("data", this.#onData);
    socket.on("end", this.#onEnd);
    socket.on("error", this.#onError);
    socket.on("close", this.#onClose);
    this.#connectTimer = setTimeout(this.#onConnectTimeout, settings.connectTimeoutMs);
  }

  /** Whether its connect timer is pending (for the pool's count of timers). */
  get timing(): boolean {
    return this.#connectTimer !== undefined;
  }

  #clearConnectTimer(): void {
    if (this.#connectTimer === undefined) return;
    clearTimeout(this.#connectTimer);
    this.#connectTimer = undefined;
  }

  /** Whether a request is on it. */
  get busy(): boolean {
    return this.#request !== null;
  }

  /**
   * Puts `request` on the connection and writes it. Returns false, with the connection still free, when
   * the handler aborted the request in its onConnect (nothing was written).
   */
  send(request: WireRequest): boolean {
    this.#request = request;
    this.#written = false;
    request.carrier = this;
    request.handler.onConnect(this.#abort);
    if (request.done) {
      this.#request = null;
      request.carrier = null;
      return false;
    }
    this.#parser.start(request.method === "HEAD");
    if (this.#owner.deferWrite(this)) return true;
    this.write();
    return true;
  }

  /** Writes the request put on it by send() (now, or when the pool flushes its deferred writes). */
  write(): void {
    if (this.#gone || this.#written) return;
    const request = this.#request;
    if (request === null) {
      this.#owner.onFree(this); // its request was aborted while the write waited: nothing was sent
      return;
    }
    this.#written = true;
    const socket = this.socket;
    const { head, body, bodyLength } = request;
    if (body === null || bodyLength === 0) socket.write(head);
    else if (bodyLength <= COPY_BODY_MAX_BYTES) {
      // A small request goes out as one packet: head and body joined.
      const packet = Buffer.allocUnsafe(head.length + bodyLength);
      head.copy(packet, 0);
      if (Buffer.isBuffer(body)) body.copy(packet, head.length);
      else {
        let pos = head.length;
        for (const piece of body) pos += piece.copy(packet, pos);
      }
      socket.write(packet);
    } else {
      socket.cork();
      socket.write(head);
      if (Buffer.isBuffer(body)) socket.write(body);
      else for (const piece of body) if (piece.length > 0) socket.write(piece);
      socket.uncork();
    }
    if (wireChannels.bodySent.hasSubscribers) wireChannels.bodySent.publish({ request });
  }

  /** Cancels `request` (an abort): the socket goes if any of the request was written. */
  cancel(request: WireRequest): void {
    if (this.#request !== request) return;
    this.#request = null;
    request.carrier = null;
    if (this.#written) this.#retire();
  }

  /** Ends the connection; a request still on it fails with `error`. */
  destroy(error: Error): void {
    const request = this.#request;
    this.#retire();
    if (request !== null) this.#failRequest(request, error);
  }

  onResponseHead(status: number, rawHeaders: Buffer[], statusText: string): void {
    const request = this.#request!;
    if (wireChannels.headers.hasSubscribers) {
      wireChannels.headers.publish({ request, response: { statusCode: status, statusText } });
    }
    if (request.handler.onHeaders(status, rawHeaders, this.#resume, statusText) === false)
      this.socket.pause();
  }

  onResponseData(chunk: Buffer): void {
    if (this.#request!.handler.onData(chunk) === false) this.socket.pause();
  }

  onResponseEnd(reusable: boolean): void {
    const request = this.#request!;
    this.#request = null;
    request.carrier = null;
    request.done = true;
    // A body still being written when the answer ended would reach the server as the next request.
    let keep = reusable && this.socket.writableLength === 0;
    if (keep) {
      const idleMs = this.#idleMs();
      keep = idleMs > 0;
      this.idleUntil = Date.now() + idleMs;
    }
    if (!keep) this.#retire();
    if (wireChannels.trailers.hasSubscribers) wireChannels.trailers.publish({ request, trailers: [] });
    request.handler.onComplete([]);
    if (keep && !this.#gone) this.#owner.onFree(this);
  }

  onResponseError(error: Error): void {
    const request = this.#request;
    this.#retire();
    if (request !== null) this.#failRequest(request, error);
  }

  /** How long it may stay idle: the server's hint less the threshold, or the default. */
  #idleMs(): number {
    const hint = this.#parser.keepAliveHintMs;
    const rules = this.#settings.keepAlive;
    if (hint === undefined) return rules.defaultMs;
    return Math.min(hint - rules.thresholdMs, rules.maxMs);
  }

  #failRequest(request: WireRequest, error: Error): void {
    this.#request = null;
    request.carrier = null;
    if (request.done) return;
    request.done = true;
    if (wireChannels.error.hasSubscribers) wireChannels.error.publish({ request, error });
    request.handler.onError(error);
  }

  /** Never used again: stops the parser, ends the socket, tells the pool once. */
  #retire(): void {
    this.#parser.stop();
    this.socket.resume(); // a paused socket would never emit 'close'
    this.socket.destroy();
    this.#clearConnectTimer();
    if (this.#gone) return;
    this.#gone = true;
    if (this.#connected) this.#owner.onGone(this);
    else this.#owner.onConnectFailed(this, new errors.SocketError("closed before connecting"));
  }

  #failConnect(error: Error): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#clearConnectTimer();
    this.socket.destroy();
    this.#owner.onConnectFailed(this, error);
  }

  /**
   * The `abort` handed to each request's onConnect: one function per connection, not a closure per request.
   * It aborts the request on the connection now, so a handler must not call it once its request is over
   * (an exchange never does: it calls it only while unsettled, and a completed request is settled).
   */
  readonly #abort = (error?: Error): void => {
    const request = this.#request;
    if (request !== null) this.#owner.abortRequest(request, error ?? new errors.RequestAbortedError());
  };

  readonly #resume = (): void => {
    this.socket.resume();
  };

  readonly #onReady = (): void => {
    this.#clearConnectTimer();
    if (this.#gone) return;
    this.#connected = true;
    this.socket.setKeepAlive(true, 60_000);
    this.#owner.onConnected(this);
  };

  readonly #onConnectTimeout = (): void => {
    const { address, connectTimeoutMs } = this.#settings;
    this.#failConnect(
      new errors.ConnectTimeoutError(`connect to ${address} timed out after ${connectTimeoutMs} ms`),
    );
  };

  readonly #onData = (chunk: Buffer): void => {
    if (this.#request !== null && this.#written) this.#parser.execute(chunk);
    else this.#drop(new errors.SocketError("data before any request was written")); // confused or hostile
  };

  readonly #onEnd = (): void => {
    if (this.#request !== null && this.#written) this.#parser.eof();
    else this.#drop(new errors.SocketError("other side closed"));
  };

  /** Ends the connection; a request on it whose write is still waiting fails with `error`. */
  #drop(error: Error): void {
    const request = this.#request;
    if (!this.#gone) this.#retire();
    if (request !== null) this.#failRequest(request, error);
  }

  readonly #onError = (error: Error): void => {
    this.#socketError ??= error;
    if (!this.#connected) this.#failConnect(error);
  };

  readonly #onClose = (): void => {
    if (!this.#gone) {
      const request = this.#request;
      if (!this.#connected) this.#failConnect(this.#socketError ?? new errors.SocketError("closed"));
      else this.#retire();
      if (request !== null) this.#failRequest(request, this.#closeError());
    }
    this.#owner.onSocketClosed(this);
  };

  /** A reset or an EOF mid-response, as undici names it. */
  #closeError(): Error {
    const cause = this.#socketError;
    const error = new errors.SocketError(cause === undefined ? "other side closed" : cause.message);
    if (cause !== undefined) (error as { cause?: unknown }).cause = cause;
    return error;
  }
}
