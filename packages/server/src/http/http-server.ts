/**
 * The KServe v2 HTTP front end on node:http: routes each request, serves it through the InferenceCore, and
 * answers every failure with Triton's `{"error": "..."}` body and status. `close()` stops accepting, lets
 * in-flight requests finish, then closes idle keep-alive connections.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { DEFAULT_MAX_BYTES_TENSOR_ELEMENTS } from "../core/bytes-data.js";
import { type Clock, createSystemClock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { InferenceCore } from "../core/types.js";
import { handleApiRequest } from "./api-handlers.js";
import { describeError, HttpError } from "./http-error.js";
import { abortClientRequest, type HandlerContext, handleInfer } from "./infer-handler.js";
import { listen } from "./listen.js";
import { createRejectionLog } from "./rejection-log.js";
import { sendError } from "./respond.js";
import { matchRoute, routeMethod } from "./router.js";

/** Options of createHttpFrontEnd. */
export interface HttpFrontEndOptions {
  readonly core: InferenceCore;
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
}

/** A listening HTTP front end. */
export interface HttpFrontEnd {
  /** `http://address:port`. */
  readonly url: string;
  readonly port: number;
  /** Stops accepting, finishes in-flight requests, closes connections. Idempotent. */
  close(): Promise<void>;
}

/** Requests in progress on a socket, kept on the socket itself (no per-request map lookups). */
const ACTIVE = Symbol("tbench.activeRequests");
type TrackedSocket = Socket & { [ACTIVE]?: number };

/** How long close() waits for in-flight requests before cutting connections. */
const CLOSE_GRACE_MS = 30_000;
/** How long a refused body may keep streaming in (discarded) before the connection is cut. */
const DISCARD_GRACE_MS = 2_000;

/** Starts the HTTP front end and resolves once it listens. */
export async function createHttpFrontEnd(options: HttpFrontEndOptions): Promise<HttpFrontEnd> {
  const { core, maxInputSize, logger } = options;
  const sockets = new Set<TrackedSocket>();
  let closing = false;
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
    if (closing && socket[ACTIVE] === 0) socket.end();
    // A client that goes away before its answer aborts the core request.
    if (!this.writableFinished) abortClientRequest(this);
  }

  const maxBytesTensorElements = options.maxBytesTensorElements ?? DEFAULT_MAX_BYTES_TENSOR_ELEMENTS;
  const context: HandlerContext = { core, maxInputSize, maxBytesTensorElements, fail: finish };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const socket = req.socket as TrackedSocket;
    socket[ACTIVE] = (socket[ACTIVE] ?? 0) + 1;
    res.on("close", onResponseClose);
    if (closing) res.setHeader("Connection", "close");
    const route = matchRoute(req.url ?? "/");
    if (route === undefined) {
      finish(req, res, new HttpError(404, "Not Found"));
      return;
    }
    if (req.method !== routeMethod(route.kind)) {
      finish(req, res, new HttpError(405, "Method Not Allowed"));
      return;
    }
    if (route.kind === "model-infer") void handleInfer(context, route, req, res);
    else void handleApiRequest(context, route, req, res);
  };

  server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 120_000 }, onRequest);
  server.on("connection", (socket: TrackedSocket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("clientError", (error, socket) => {
    // Malformed HTTP (bad headers, oversized header block): answer 400 where the socket still can.
    if (socket.writable)
      socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    else socket.destroy();
    logger.verbose(`HTTP client error: ${(error as Error).message}`);
  });
  // The last summary is written when the server has closed.
  server.once("close", () => rejections.close());
  const { port, baseUrl: url } = await listen(server, options.port, options.address);
  logger.info(`Started HTTPService at ${options.address}:${port}`);

  let closed: Promise<void> | undefined;
  return {
    url,
    port,
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        const timer = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        // Idle keep-alive connections (and ones that never sent a request) go now; busy ones after their answer.
        for (const socket of sockets) if ((socket[ACTIVE] ?? 0) === 0) socket.end();
      });
      return closed;
    },
  };
}
