/**
 * The KServe v2 HTTP front end on node:http: routes each request, serves it through the InferenceCore, and
 * answers every failure with Triton's `{"error": "..."}` body and status. `close()` drains: the port stops
 * accepting once the backlog is taken (new connections are refused, as Triton's front ends refuse them);
 * every answer not begun yet says `Connection: close` (a keep-alive client then sends its next request on a
 * new connection, refused cleanly, never into one about to close); a connection's first request is still
 * served (it was on the wire), any later one is answered 503 with `Connection: close`. So the drain waits
 * for a bounded set of requests, and clients that keep sending cannot hold it to its deadline. Once none is
 * in flight, idle connections get a moment to send a request already on its way (closeIdleGraceMs, 503),
 * then end; after the grace period (closeGraceMs) whatever is left is cut. Triton's HTTP server refuses new
 * connections too (at once, backlog included), but serves open ones without telling them to close and waits
 * up to --exit-timeout-secs for them to go. Slow clients are bounded (Triton's libevhtp server has no such
 * limits, server issue #7077): headers and the whole request must arrive within their timeouts (408 with a
 * JSON body otherwise), and an answer that is not read is cut after the send timeout (response-writer.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Socket } from "node:net";
import { DEFAULT_MAX_BYTES_TENSOR_ELEMENTS } from "../core/bytes-data.js";
import { type Clock, createSystemClock } from "../core/clock.js";
import { truncateEchoesIn } from "../core/echo-text.js";
import { listen } from "../core/listen.js";
import type { Logger } from "../core/logger.js";
import type { RestrictedApis } from "../core/restricted-api.js";
import { clipForLog, createSummarizingLog } from "../core/summarizing-log.js";
import { handleApiRequest } from "./api-handlers.js";
import { type BufferHold, createBufferBudget, defaultMaxBufferedBytes } from "./buffer-budget.js";
import {
  answerPreflight,
  corsHeaderLines,
  createCorsPolicy,
  type HttpCorsOptions,
  isPreflight,
  setCorsResponseHeaders,
} from "./cors.js";
import type { FrontEndCore } from "./front-end-core.js";
import { handleGenerate } from "./generate-handler.js";
import { describeError, errorBody, HttpError } from "./http-error.js";
import { type HttpTlsOptions, httpsOptions } from "./http-tls.js";
import { abortClientRequest, type HandlerContext, handleInfer } from "./infer-handler.js";
import { createOpenAiFrontEnd } from "./openai/openai-endpoint.js";
import { OpenAiError, sendOpenAiError } from "./openai/openai-error.js";
import { createRejectionLog } from "./rejection-log.js";
import { sendError } from "./respond.js";
import { restrictionRefusal } from "./restricted-routes.js";
import { isOpenAiPath, isOpenAiRoute, matchRoute, methodAllowed } from "./router.js";
import { createJsonDecodePool, DEFAULT_JSON_DECODE_MIN_BYTES } from "./threads/json-decode-pool.js";

/** The longest error message an HTTP answer carries (client text inside is cut first, to 256 characters). */
const MAX_ERROR_MESSAGE_CHARS = 4096;

/** The decoded segments of a URL's path: the client's text that error messages may echo. */
function urlSegments(url: string): string[] {
  const path = url.split("?")[0] ?? "";
  return path.split("/").map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  });
}

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
  /** `--http-cors-*` (ours, Triton has none): let pages on these origins call the API (cors.ts). Default: off. */
  readonly cors?: HttpCorsOptions;
  /**
   * A front-end thread's own handle on the main thread's listening socket (http-threads.ts): listened on
   * instead of binding `address`:`port`, which then only name the endpoint.
   */
  readonly listenHandle?: object;
  /** How long close() waits for the requests in flight before cutting connections. Default 30 s. */
  readonly closeGraceMs?: number;
  /**
   * How long close(), once nothing is in flight, leaves an idle connection open for a request that may be
   * on its way (answered 503 with `Connection: close`). Default 1 s.
   */
  readonly closeIdleGraceMs?: number;
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

/** How long close() waits for in-flight requests before cutting connections (Triton's exit timeout). */
export const CLOSE_GRACE_MS = 30_000;
/** Most event-loop polls close() keeps accepting a backlog in (a burst of connections at SIGTERM). */
const MAX_ACCEPT_POLLS = 32;
/** Default closeIdleGraceMs: a client between two requests sends its next one well within it. */
export const CLOSE_IDLE_GRACE_MS = 1_000;
/** The 503 a request gets once close() has begun. */
export const SHUTTING_DOWN_MESSAGE = "Server is shutting down, no new requests are accepted";
/** Most characters of a URL in an error line (the rest of the line is for the message). */
const URL_LOG_MAX_CHARS = 200;
/** How long a refused body may keep streaming in (discarded) before the connection is cut. */
const DISCARD_GRACE_MS = 2_000;

/** Starts the HTTP front end and resolves once it listens. */
export async function createHttpFrontEnd(options: HttpFrontEndOptions): Promise<HttpFrontEndThread> {
  const { core, maxInputSize, logger } = options;
  const restrictedApis = options.restrictedApis ?? {};
  const restricted = Object.keys(restrictedApis).length > 0;
  // Checked before anything is started: bad settings throw CorsConfigError. Off, the hot path only tests it.
  const cors = options.cors === undefined ? undefined : createCorsPolicy(options.cors, restrictedApis);
  const sockets = new Set<TrackedSocket>();
  let closing = false;
  /** Requests being served (not those refused during close()), on every connection: what close() drains. */
  let inFlight = 0;
  let served = 0;
  /** Connections accepted: close() stops listening once a poll accepts none. */
  let accepted = 0;
  /** Set by close(): ends idle connections once nothing is in flight. */
  let onDrained: (() => void) | undefined;
  let server: Server;
  const clock = options.clock ?? createSystemClock();
  const rejections = createRejectionLog({ logger, clock });
  // Failures a client can repeat at will: a few lines in full a second, the rest summarised.
  const errors = createSummarizingLog({
    write: (line) => logger.error(line),
    clock,
    summary: (count, period, groups) =>
      `${count} more error${count === 1 ? "" : "s"} in the last ${period}, not written one by one: ${groups}`,
  });

  /** Logs and answers a failure; `answer` writes the body (Triton's shape unless told otherwise). */
  const finish = (
    req: IncomingMessage,
    res: ServerResponse,
    error: unknown,
    answer: (res: ServerResponse, status: number, message: string, error: unknown) => void = sendError,
  ) => {
    const { status, message: whole } = describeError(error);
    // A name from the URL is echoed cut short (core/echo-text.ts), and no message grows past a bound.
    const message = clipForLog(truncateEchoesIn(whole, urlSegments(req.url ?? "")), MAX_ERROR_MESSAGE_CHARS);
    // 503 is admission refusing work under overload: summarised, not a line each (rejection-log.ts).
    if (status === 503) rejections.record(message);
    if (status >= 500 && status !== 503 && !(error instanceof HttpError))
      errors.record(`HTTP ${req.method} ${clipForLog(req.url ?? "", URL_LOG_MAX_CHARS)}: ${message}`);
    else
      logger.verbose(
        `HTTP ${req.method} ${clipForLog(req.url ?? "", URL_LOG_MAX_CHARS)}: ${status} ${message}`,
      );
    // A body refused before it was read whole: answered now, what still arrives is discarded.
    discardUnread(req);
    answer(res, status, message, error);
  };

  const releaseSocket = (res: ServerResponse): void => {
    const socket = res.req.socket as TrackedSocket;
    socket[ACTIVE] = (socket[ACTIVE] ?? 1) - 1;
    if (socket[RESPONSE] === res) socket[RESPONSE] = undefined;
  };
  // One handler per server, not per request: `this` is the response that closed.
  function onRefusedClose(this: ServerResponse): void {
    releaseSocket(this);
  }
  function onResponseClose(this: ServerResponse): void {
    releaseSocket(this);
    inFlight--;
    (this as HeldResponse)[HOLD]?.release();
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

  // /v1 (OpenAI-compatible) answers its errors, the front end's refusals included, in OpenAI's shape.
  const openAi = createOpenAiFrontEnd({
    ...context,
    fail: (req, res, error) => finish(req, res, error, sendOpenAiError),
  });

  /**
   * A request that arrives once close() has begun: 503 with `Connection: close`, not counted by the drain.
   * Answered once its body is in (discarded, for at most the discard grace): closing a connection with
   * unread bytes resets it, which can lose the answer the client is about to read.
   */
  const refuseWhileClosing = (req: IncomingMessage, res: ServerResponse): void => {
    res.on("close", onRefusedClose);
    res.setHeader("Connection", "close");
    rejections.record(SHUTTING_DOWN_MESSAGE);
    const timer = setTimeout(() => req.socket.destroy(), DISCARD_GRACE_MS);
    timer.unref();
    res.once("close", () => clearTimeout(timer));
    req.once("end", () => {
      clearTimeout(timer);
      sendError(res, 503, SHUTTING_DOWN_MESSAGE);
    });
    req.resume();
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const socket = req.socket as TrackedSocket;
    const first = socket[ACTIVE] === undefined;
    socket[ACTIVE] = (socket[ACTIVE] ?? 0) + 1;
    served++;
    socket[RESPONSE] = res;
    // A preflight is answered below from its route alone; every other answer gets the CORS headers now,
    // so that whatever writes it (errors and refusals included) sends them.
    const preflight = cors !== undefined && isPreflight(req);
    if (cors !== undefined && !preflight) setCorsResponseHeaders(cors, req, res);
    if (closing) {
      // A connection's first request is served: it was on the wire (connections are accepted only until
      // close() began, so these are a bounded set); any later one is refused.
      if (!first) {
        refuseWhileClosing(req, res);
        return;
      }
      res.setHeader("Connection", "close");
    }
    inFlight++;
    res.on("close", onResponseClose);
    const route = matchRoute(req.url ?? "/");
    // Before the restriction: a browser sends no request headers (no key) with a preflight, and a preflight
    // runs nothing; the request it clears is checked below like any other.
    if (preflight) {
      const refusal = answerPreflight(cors!, route, req, res);
      if (refusal !== undefined) finish(req, res, refusal);
      else discardUnread(req);
      return;
    }
    if (route === undefined) {
      const url = req.url ?? "/";
      if (isOpenAiPath(url))
        openAi.fail(req, res, new OpenAiError(404, `Invalid URL (${req.method} ${url.split("?")[0]})`));
      else finish(req, res, new HttpError(404, "Not Found"));
      return;
    }
    // Triton checks the restriction first, before the method: a restricted endpoint reveals nothing.
    const refusal = restricted ? restrictionRefusal(restrictedApis, route.kind, req) : undefined;
    if (refusal !== undefined) {
      (isOpenAiRoute(route.kind) ? openAi.fail : finish)(req, res, refusal);
      return;
    }
    if (!methodAllowed(route, req.method)) {
      (isOpenAiRoute(route.kind) ? openAi.fail : finish)(req, res, new HttpError(405, "Method Not Allowed"));
      return;
    }
    if (route.kind === "model-infer") void handleInfer(context, route, req, res);
    else if (isOpenAiRoute(route.kind)) void openAi.handle(route, req, res);
    else if (route.kind === "model-generate" || route.kind === "model-generate-stream")
      void handleGenerate(context, route, req, res, route.kind === "model-generate-stream");
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
    accepted++;
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
      const extra = cors !== undefined && response !== undefined ? corsHeaderLines(response) : "";
      socket.end(rawAnswer("408 Request Timeout", errorBody(message), extra));
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
  server.once("close", () => {
    rejections.close();
    errors.close();
  });
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
        // The answers not begun yet say Connection: close, so their clients do not send into this connection
        // as it closes (node:http closes it after the answer).
        for (const socket of sockets) {
          const response = socket[RESPONSE];
          if (response !== undefined && !response.headersSent) response.setHeader("Connection", "close");
        }
        // New connections are refused from now on (as Triton's front ends do), once the event loop has
        // accepted what waits in the backlog (a reset otherwise, its request lost): clients told to close
        // find the port closed, cleanly, instead of racing its close at the end of the drain. node:http's
        // close() is kept from destroying the connections with no request in progress: a kept-alive or new
        // one may have a request on its way, which would be lost to a reset or an EOF ("socket hang up").
        server.closeIdleConnections = () => {};
        let idleTimer: NodeJS.Timeout | undefined;
        let rounds = 0;
        const stopAccepting = (): void => {
          const before = accepted;
          afterPoll(() => {
            // Still accepting what was waiting: another poll, until one finds the backlog empty (or a bounded
            // number of polls, so clients that keep connecting cannot keep the port open).
            if (accepted !== before && ++rounds < MAX_ACCEPT_POLLS) return stopAccepting();
            server.close(() => {
              clearTimeout(timer);
              clearTimeout(idleTimer);
              resolve();
            });
          });
        };
        stopAccepting();
        let drained = false;
        /** Nothing in flight: idle connections get closeIdleGraceMs to send a request on its way, then end. */
        const endIdle = (): void => {
          if (drained) return;
          drained = true;
          afterPoll(() => {
            idleTimer = setTimeout(() => {
              for (const socket of sockets) if ((socket[ACTIVE] ?? 0) === 0) socket.end();
            }, options.closeIdleGraceMs ?? CLOSE_IDLE_GRACE_MS);
            idleTimer.unref();
          });
        };
        const timer = setTimeout(() => server.closeAllConnections(), options.closeGraceMs ?? CLOSE_GRACE_MS);
        timer.unref();
        onDrained = endIdle;
        if (inFlight === 0) endIdle();
      });
      return closed;
    },
  };
  // The decode threads end once the front end has closed: no request can need them any more.
  return { ...frontEnd, close: () => frontEnd.close().then(() => jsonDecoder.close()) };
}

/** Calls `callback` after the event loop has polled for I/O at least once (a check phase in between). */
function afterPoll(callback: () => void): void {
  setImmediate(() => setImmediate(callback));
}

/**
 * A whole HTTP/1.1 answer written straight to a socket, bypassing the response object (client errors);
 * `headerLines` are more header lines, each ending in CRLF.
 */
function rawAnswer(statusLine: string, json: string, headerLines = ""): string {
  return (
    `HTTP/1.1 ${statusLine}\r\nConnection: close\r\nContent-Type: application/json\r\n${headerLines}` +
    `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`
  );
}

/**
 * Discards what still arrives of a body the answer did not read (node:http drains it for keep-alive); a
 * client still sending after the grace period loses the connection. Closing at once instead would reset
 * the socket under a client still writing, losing the answer.
 */
function discardUnread(req: IncomingMessage): void {
  if (req.complete) return;
  req.resume();
  const timer = setTimeout(() => req.socket.destroy(), DISCARD_GRACE_MS);
  timer.unref();
  req.once("end", () => clearTimeout(timer));
}

/** How often node:http checks for expired requests: a quarter of the shortest limit, at most 1 s. */
function checkingIntervalMs(headerTimeoutMs: number, requestTimeoutMs: number): number {
  const limits = [headerTimeoutMs, requestTimeoutMs].filter((ms) => ms > 0);
  if (limits.length === 0) return 30_000;
  return Math.max(10, Math.min(1000, Math.floor(Math.min(...limits) / 4)));
}
