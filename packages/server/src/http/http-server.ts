/**
 * The KServe v2 HTTP front end on node:http: routes each request, serves it through the InferenceCore, and
 * answers every failure with Triton's `{"error": "..."}` body and status. `close()` keeps the endpoint up
 * while requests are in flight (Triton's core takes requests while it exits, its front ends stopping after),
 * answering each with `Connection: close`, so a request already on the wire or waiting in the listen backlog
 * is answered rather than reset; once none is in flight it stops listening and closes idle keep-alive
 * connections (after the grace period, whatever is left). Slow clients are bounded (Triton's
 * libevhtp server has no such limits, server issue #7077): headers and the whole request must arrive within
 * their timeouts (408 with a JSON body otherwise), and an answer that is not read is cut after the send
 * timeout (response-writer.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Socket } from "node:net";
import { DEFAULT_MAX_BYTES_TENSOR_ELEMENTS } from "../core/bytes-data.js";
import { type Clock, createSystemClock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { RestrictedApis } from "../core/restricted-api.js";
import { handleApiRequest } from "./api-handlers.js";
import { type BufferHold, createBufferBudget, defaultMaxBufferedBytes } from "./buffer-budget.js";
import type { FrontEndCore } from "./front-end-core.js";
import { describeError, errorBody, HttpError } from "./http-error.js";
import { type HttpTlsOptions, httpsOptions } from "./http-tls.js";
import { abortClientRequest, type HandlerContext, handleInfer } from "./infer-handler.js";
import { createJsonDecodePool, DEFAULT_JSON_DECODE_MIN_BYTES } from "./json-decode-pool.js";
import { listen } from "./listen.js";
import { createRejectionLog } from "./rejection-log.js";
import { sendError } from "./respond.js";
import { restrictionRefusal } from "./restricted-routes.js";
import { matchRoute, methodAllowed } from "./router.js";

/** Options of createHttpFrontEnd. */
export interface HttpFrontEndOptions {
  /** The main thread's InferenceCore, or a front-end thread's proxy to it (http-threads.ts). */
  readonly core: FrontEndCore;
  /** 0 picks a free port. */
  readonly port: number;
  readonly address: string;
  /** Largest request body accepted, before and after decompression, in bytes. */
  readonly maxInputSize: number;
  /** Most elements one BYTES input may have, checked from its shape before it is decoded. Default 2^20. */
  readonly maxBytesTensorElements?: number;
  readonly logger: Logger;
  /** Runs the front end's timers (the rejection summary). Default: the system clock. */
  readonly clock?: Clock;
  /** Time from connection (or a kept-alive request's first byte) to its whole header block; 0: none. */
  readonly headerTimeoutMs?: number;
  /** Time for a whole request, headers and body, to arrive; 0: none. */
  readonly requestTimeoutMs?: number;
  /** Time an answer may wait on a client that does not read before its connection is cut; 0: none. */
  readonly sendTimeoutMs?: number;
  /** Most open connections; one past it is closed as accepted, before any byte is read. 0: none. */
  readonly maxConnections?: number;
  /** `--http-restricted-api`: endpoint groups that need a header with a value (403 otherwise). */
  readonly restrictedApis?: RestrictedApis;
  /** `--http-ssl-cert` / `--http-ssl-key` (ours, Triton has none): serve HTTPS. Default: plain HTTP. */
  readonly tls?: HttpTlsOptions;
  /**
   * A front-end thread's own handle on the main thread's listening socket (http-threads.ts): listened on
   * instead of binding `address`:`port`, which then only name the endpoint.
   */
  readonly listenHandle?: object;
  /**
   * `--http-max-buffered-bytes`: most bytes held for request bodies and unsent answers, server-wide; a
   * body past it is refused with 503 (buffer-budget.ts). Default: defaultMaxBufferedBytes(maxInputSize).
   */
  readonly maxBufferedBytes?: number;
  /** The count that bound is drawn from, shared by every front-end thread of one server. Default: a new one. */
  readonly bufferCounter?: SharedArrayBuffer;
  /** Infer bodies with at least this many bytes of JSON are decoded in a thread. Default 1 MiB. */
  readonly jsonDecodeMinBytes?: number;
  /** Tests only: holds each decode in its thread (json-decode-pool.ts DecodeThreadInit). */
  readonly jsonDecodeGate?: SharedArrayBuffer;
}

/** Default --http-header-timeout-ms: half Node's 60 s, nginx's client_header_timeout is 60 s. */
export const DEFAULT_HTTP_HEADER_TIMEOUT_MS = 30_000;
/** Default --http-request-timeout-ms: a 64 MiB body at 1 MB/s arrives with room to spare. */
export const DEFAULT_HTTP_REQUEST_TIMEOUT_MS = 120_000;
/** Default --http-send-timeout-ms: how long an answer may make no progress. */
export const DEFAULT_HTTP_SEND_TIMEOUT_MS = 30_000;

/** A listening HTTP front end. */
export interface HttpFrontEnd {
  /** `http://address:port`. */
  readonly url: string;
  readonly port: number;
  /** Stops accepting, finishes in-flight requests, closes connections. Idempotent. */
  close(): Promise<void>;
  /** Answer bytes queued in this front end's sockets that the kernel has not taken yet (all connections). */
  pendingResponseBytes(): number;
  /** Bytes held for request bodies and unsent answers, by every thread (--http-max-buffered-bytes). */
  bufferedBytes(): number;
}

/** One thread's front end, with what http-threads.ts needs to run more of them. */
export interface HttpFrontEndThread extends HttpFrontEnd {
  /** The listening socket's file descriptor (what front-end threads dup). */
  readonly listeningFd: number | undefined;
  /** Requests this thread has received. */
  requestsServed(): number;
}

/** Requests in progress on a socket, kept on the socket itself (no per-request map lookups). */
const ACTIVE = Symbol("tbench.activeRequests");
/** The response in progress on a socket, if any. */
const RESPONSE = Symbol("tbench.response");
type TrackedSocket = Socket & { [ACTIVE]?: number; [RESPONSE]?: ServerResponse | undefined };
/** A response's share of --http-max-buffered-bytes, released when it closes. */
const HOLD = Symbol("tbench.bufferHold");
type HeldResponse = ServerResponse & { [HOLD]?: BufferHold };

/** How long close() waits for in-flight requests before cutting connections. */
export const CLOSE_GRACE_MS = 30_000;
/** How long a refused body may keep streaming in (discarded) before the connection is cut. */
const DISCARD_GRACE_MS = 2_000;

/** Starts the HTTP front end and resolves once it listens. */
export async function createHttpFrontEnd(options: HttpFrontEndOptions): Promise<HttpFrontEndThread> {
  const { core, maxInputSize, logger } = options;
  const sockets = new Set<TrackedSocket>();
  let closing = false;
  /** Requests received and not yet answered, on every connection. */
  let inFlight = 0;
  let served = 0;
  /** Set by close(): stops listening once nothing is in flight. */
  let onDrained: (() => void) | undefined;
  let server: Server;
  const rejections = createRejectionLog({ logger, clock: options.clock ?? createSystemClock() });

  const finish = (req: IncomingMessage, res: ServerResponse, error: unknown) => {
    const { status, message } = describeError(error);
    // 503 is admission refusing work under overload: summarised, not a line each (rejection-log.ts).
    if (status === 503) rejections.record(message);
    if (status >= 500 && status !== 503 && !(error instanceof HttpError))
      logger.error(`HTTP ${req.method} ${req.url}: ${message}`);
    else logger.verbose(`HTTP ${req.method} ${req.url}: ${status} ${message}`);
    if (!req.complete) {
      // The body was refused before it was read whole: answer now and discard what still arrives (node:http
      // drains it for keep-alive); a client still sending after the grace period loses the connection.
      // Closing at once instead would reset the socket under a client still writing, losing the answer.
      req.resume();
      const timer = setTimeout(() => req.socket.destroy(), DISCARD_GRACE_MS);
      timer.unref();
      req.once("end", () => clearTimeout(timer));
    }
    sendError(res, status, message);
  };

  // One handler per server, not per request: `this` is the response that closed.
  function onResponseClose(this: ServerResponse): void {
    const socket = this.req.socket as TrackedSocket;
    socket[ACTIVE] = (socket[ACTIVE] ?? 1) - 1;
    inFlight--;
    if (socket[RESPONSE] === this) socket[RESPONSE] = undefined;
    (this as HeldResponse)[HOLD]?.release();
    if (closing && socket[ACTIVE] === 0) socket.end();
    if (inFlight === 0) onDrained?.();
    // A client that goes away before its answer aborts the core request.
    if (!this.writableFinished) abortClientRequest(this);
  }

  const maxBytesTensorElements = options.maxBytesTensorElements ?? DEFAULT_MAX_BYTES_TENSOR_ELEMENTS;
  const headerTimeoutMs = options.headerTimeoutMs ?? DEFAULT_HTTP_HEADER_TIMEOUT_MS;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_HTTP_REQUEST_TIMEOUT_MS;
  const sendTimeoutMs = options.sendTimeoutMs ?? DEFAULT_HTTP_SEND_TIMEOUT_MS;
  // node:http refuses a header timeout past the request timeout: the request's covers its headers too.
  const headersTimeoutMs =
    requestTimeoutMs > 0 && headerTimeoutMs > requestTimeoutMs ? requestTimeoutMs : headerTimeoutMs;
  const budget = createBufferBudget(
    options.maxBufferedBytes ?? defaultMaxBufferedBytes(maxInputSize),
    options.bufferCounter,
  );
  const jsonDecoder = createJsonDecodePool(
    options.jsonDecodeGate !== undefined ? { gate: options.jsonDecodeGate } : {},
  );
  const restrictedApis = options.restrictedApis ?? {};
  const restricted = Object.keys(restrictedApis).length > 0;
  const context: HandlerContext = {
    core,
    maxInputSize,
    maxBytesTensorElements,
    sendTimeoutMs,
    onSendTimeout: (res, unsent) =>
      logger.verbose(
        `HTTP ${res.req.method} ${res.req.url}: connection cut, the client read nothing for ${sendTimeoutMs} ms ` +
          `(--http-send-timeout-ms) with ${unsent} bytes of the answer unsent`,
      ),
    // Made when a handler first needs it; a response that closes before then never holds anything.
    holdOf: (res: HeldResponse) => {
      if (res[HOLD] === undefined) {
        res[HOLD] = budget.open();
        if (res.closed) res[HOLD].release();
      }
      return res[HOLD];
    },
    jsonDecoder,
    jsonDecodeMinBytes: options.jsonDecodeMinBytes ?? DEFAULT_JSON_DECODE_MIN_BYTES,
    fail: finish,
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const socket = req.socket as TrackedSocket;
    socket[ACTIVE] = (socket[ACTIVE] ?? 0) + 1;
    inFlight++;
    served++;
    socket[RESPONSE] = res;
    res.on("close", onResponseClose);
    if (closing) res.setHeader("Connection", "close");
    const route = matchRoute(req.url ?? "/");
    if (route === undefined) {
      finish(req, res, new HttpError(404, "Not Found"));
      return;
    }
    // Triton checks the restriction first, before the method: a restricted endpoint reveals nothing.
    const refusal = restricted ? restrictionRefusal(restrictedApis, route.kind, req) : undefined;
    if (refusal !== undefined) {
      finish(req, res, refusal);
      return;
    }
    if (!methodAllowed(route, req.method)) {
      finish(req, res, new HttpError(405, "Method Not Allowed"));
      return;
    }
    if (route.kind === "model-infer") void handleInfer(context, route, req, res);
    else void handleApiRequest(context, route, req, res);
  };

  const serverOptions = {
    keepAliveTimeout: 65_000,
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    // node:http looks for expired requests this often (its default, 30 s, made a 60 s limit act at 90 s).
    connectionsCheckingInterval: checkingIntervalMs(headerTimeoutMs, requestTimeoutMs),
  };
  server =
    options.tls === undefined
      ? createServer(serverOptions, onRequest)
      : (createHttpsServer(
          { ...serverOptions, ...httpsOptions(options.tls) },
          onRequest,
        ) as unknown as Server);
  const maxConnections = options.maxConnections ?? 0;
  if (maxConnections > 0) {
    // net closes a connection past the limit before it becomes a socket: the cheapest refusal there is.
    server.maxConnections = maxConnections;
    server.on("drop", () =>
      rejections.record(`connection closed: ${maxConnections} open (--http-max-connections)`),
    );
  }
  // Over TLS the sockets requests arrive on are the TLS ones, which exist once the handshake is done.
  server.on(options.tls === undefined ? "connection" : "secureConnection", (socket: TrackedSocket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("clientError", (error: Error & { code?: string }, socket: TrackedSocket) => {
    const response = socket[RESPONSE];
    // An answer already begun on this connection cannot be followed by another: only cut it.
    const answering = response?.headersSent === true && !response.writableFinished;
    if (error.code === "ERR_HTTP_REQUEST_TIMEOUT" && socket.writable && !answering) {
      // A request in progress on the socket had its headers: its body was too slow, else its headers were.
      const message =
        (socket[ACTIVE] ?? 0) > 0
          ? `request not received whole within ${requestTimeoutMs} ms (--http-request-timeout-ms)`
          : `request headers not received within ${headersTimeoutMs} ms (--http-header-timeout-ms)`;
      socket.end(rawAnswer("408 Request Timeout", errorBody(message)));
      logger.verbose(`HTTP client error: 408 ${message}`);
      return;
    }
    // Malformed HTTP (bad headers, oversized header block): answer 400 where the socket still can.
    if (socket.writable && !answering)
      socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    else socket.destroy();
    logger.verbose(`HTTP client error: ${error.message}`);
  });
  // The last summary is written when the server has closed.
  server.once("close", () => rejections.close());
  const { port, baseUrl } = await listen(server, options.port, options.address, options.listenHandle);
  const url = options.tls === undefined ? baseUrl : baseUrl.replace(/^http:/, "https:");
  // Front-end threads share the main thread's endpoint, which it announces.
  if (options.listenHandle === undefined)
    logger.info(
      `Started HTTPService at ${options.address}:${port}${options.tls === undefined ? "" : " (HTTPS)"}`,
    );

  let closed: Promise<void> | undefined;
  const frontEnd: HttpFrontEndThread = {
    url,
    port,
    listeningFd: (server as unknown as { _handle?: { fd?: number } })._handle?.fd,
    requestsServed: () => served,
    bufferedBytes: () => budget.heldBytes(),
    pendingResponseBytes() {
      let bytes = 0;
      for (const socket of sockets) bytes += socket.writableLength;
      return bytes;
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        let stopped = false;
        const stopListening = (): void => {
          if (stopped) return;
          stopped = true;
          server.close(() => {
            clearTimeout(timer);
            resolve();
          });
          // Idle keep-alive connections (and ones that never sent a request) go now; busy ones after their
          // answer.
          for (const socket of sockets) if ((socket[ACTIVE] ?? 0) === 0) socket.end();
        };
        const timer = setTimeout(() => {
          stopListening();
          server.closeAllConnections();
        }, CLOSE_GRACE_MS);
        timer.unref();
        onDrained = stopListening;
        if (inFlight === 0) stopListening();
      });
      return closed;
    },
  };
  // The decode threads end once the front end has closed: no request can need them any more.
  return { ...frontEnd, close: () => frontEnd.close().then(() => jsonDecoder.close()) };
}

/** A whole HTTP/1.1 answer written straight to a socket that has no response object (client errors). */
function rawAnswer(statusLine: string, json: string): string {
  return (
    `HTTP/1.1 ${statusLine}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`
  );
}

/** How often node:http checks for expired requests: a quarter of the shortest limit, at most 1 s. */
function checkingIntervalMs(headerTimeoutMs: number, requestTimeoutMs: number): number {
  const limits = [headerTimeoutMs, requestTimeoutMs].filter((ms) => ms > 0);
  if (limits.length === 0) return 30_000;
  return Math.max(10, Math.min(1000, Math.floor(Math.min(...limits) / 4)));
}
