/**
 * One request as the wire pool (wire-pool.ts) sends it: its record while queued and in flight, and its
 * head (request line and headers) as bytes. A head is built and validated once per distinct (method, path,
 * headers object, body length) and then reused: the client passes shared frozen header objects on the infer
 * path, and a prepared infer re-sends the same body, so the hot path looks the head up with a few compares.
 */
import { errors } from "undici";
import type { ExchangeHandler, ExchangeRequest } from "../exchange.js";

/** The connection a request is on, as far as an abort needs it. */
export interface WireRequestCarrier {
  /** Cancels `request` on the connection (the socket is ended if any of it was written). */
  cancel(request: WireRequest): void;
}

/** A dispatched request (also the `request` of the diagnostics channels' messages). */
export class WireRequest {
  readonly origin: string;
  readonly method: string;
  readonly path: string;
  readonly handler: ExchangeHandler;
  readonly head: Buffer;
  readonly body: WireBody | null;
  /** Bytes in the body (0 without one). */
  readonly bodyLength: number;
  /** The next request in the pool's queue. */
  next: WireRequest | null = null;
  /** Answered, failed or aborted: nothing more is said to the handler. */
  done = false;
  /** The connection carrying it, from onConnect until it is done. */
  carrier: WireRequestCarrier | null = null;

  constructor(
    request: ExchangeRequest,
    handler: ExchangeHandler,
    head: Buffer,
    body: WireBody | null,
    length: number,
  ) {
    this.origin = request.origin;
    this.method = request.method;
    this.path = request.path;
    this.handler = handler;
    this.head = head;
    this.body = body;
    this.bodyLength = length;
  }
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What undici refuses in a header value: control characters other than tab. */
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/** What undici refuses in a request path. */
const BAD_PATH = /[^\u0021-\u00ff]/;
/** Headers the pool writes itself (or, for these, cannot honour: no upgrades, no 100-continue). */
const RESERVED = new Set(["connection", "keep-alive", "upgrade", "transfer-encoding", "expect"]);
/** Methods whose request carries a body, so an empty one still says `content-length: 0` (as undici). */
const PAYLOAD_METHODS = new Set(["POST", "PUT", "PATCH", "QUERY"]);
/** Heads kept per headers object; past it the object's heads are dropped and built again. */
const MAX_HEADS_PER_HEADERS = 64;

function invalid(message: string): Error {
  return new errors.InvalidArgumentError(message);
}

/** A request body as the pool writes it: bytes, or pieces written one after the other. */
export type WireBody = Buffer | readonly Buffer[];

/**
 * The request body as bytes (a string body is UTF-8) or as pieces (an array of Buffers, kept as they are).
 * Throws undici's InvalidArgumentError otherwise.
 */
export function bodyBytes(body: unknown): WireBody | null {
  if (body === null || body === undefined) return null;
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (Array.isArray(body) && body.every((piece) => Buffer.isBuffer(piece))) return body as Buffer[];
  throw invalid(`request body: expected a Buffer, Buffers, a string or null, got ${typeof body}`);
}

/** Bytes in a body. */
export function bodyLength(body: WireBody): number {
  if (Buffer.isBuffer(body)) return body.length;
  let length = 0;
  for (const piece of body) length += piece.length;
  return length;
}

/** Builds and caches request heads for one origin. */
export class RequestHeadCache {
  readonly #host: string;
  readonly #byHeaders = new WeakMap<object, Map<string, Buffer>>();
  // The last head built or found: a prepared infer hits it with four compares.
  #lastHeaders: object | null = null;
  #lastMethod = "";
  #lastPath = "";
  #lastLength = -2;
  #lastHead: Buffer | null = null;

  /** `host`: the Host header, e.g. `127.0.0.1:8000`. */
  constructor(host: string) {
    this.#host = host;
  }

  /** The head of a request with a body of `bodyLength` bytes (-1: no body). Throws on invalid input. */
  head(method: string, path: string, headers: Readonly<Record<string, string>>, bodyLength: number): Buffer {
    if (
      headers === this.#lastHeaders &&
      bodyLength === this.#lastLength &&
      path === this.#lastPath &&
      method === this.#lastMethod
    ) {
      return this.#lastHead!;
    }
    let heads = this.#byHeaders.get(headers);
    const key = `${method} ${bodyLength} ${path}`;
    let head = heads?.get(key);
    if (head === undefined) {
      head = this.#build(method, path, headers, bodyLength);
      if (heads === undefined || heads.size >= MAX_HEADS_PER_HEADERS) {
        heads = new Map();
        this.#byHeaders.set(headers, heads);
      }
      heads.set(key, head);
    }
    this.#lastHeaders = headers;
    this.#lastMethod = method;
    this.#lastPath = path;
    this.#lastLength = bodyLength;
    this.#lastHead = head;
    return head;
  }

  #build(
    method: string,
    path: string,
    headers: Readonly<Record<string, string>>,
    bodyLength: number,
  ): Buffer {
    if (typeof method !== "string" || !TOKEN.test(method)) {
      throw invalid(`request method: expected an HTTP token such as "GET", got ${JSON.stringify(method)}`);
    }
    if (typeof path !== "string" || !(path.startsWith("/") || path === "*") || BAD_PATH.test(path)) {
      throw invalid(
        `request path: expected "/..." without spaces or control characters, got ${JSON.stringify(path)}`,
      );
    }
    const length = Math.max(bodyLength, 0);
    let host = this.#host;
    let lines = "";
    for (const [name, value] of Object.entries(headers)) {
      if (!TOKEN.test(name)) throw invalid(`header name ${JSON.stringify(name)} is not an HTTP token`);
      if (typeof value !== "string" || BAD_VALUE.test(value)) {
        throw invalid(
          `header '${name}': expected a string without control characters, got ${JSON.stringify(value)}`,
        );
      }
      const lower = name.toLowerCase();
      if (lower === "host") host = value;
      else if (lower === "content-length") {
        if (value.trim() !== String(length)) {
          throw invalid(
            `header 'content-length' is ${JSON.stringify(value)} but the body has ${length} bytes`,
          );
        }
      } else if (RESERVED.has(lower)) {
        throw invalid(`header '${name}' is set by the connection pool and cannot be given`);
      } else lines += `${name}: ${value}\r\n`;
    }
    if (length > 0 || PAYLOAD_METHODS.has(method)) lines += `content-length: ${length}\r\n`;
    const text = `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\n${lines}`;
    return Buffer.from(`${text}\r\n`, "latin1");
  }
}
