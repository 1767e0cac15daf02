/**
 * An HTTP/1.1 response parser for the wire pool (wire-pool.ts): one response at a time, fed the socket's
 * 'data' Buffers as they come. The head is found with one native `indexOf` of CRLFCRLF and cut into raw
 * (name, value) Buffer pairs, as undici hands them to a handler (raw-response.ts reads them); a body is
 * passed on as views of the received Buffers, by Content-Length, `Transfer-Encoding: chunked`, or until the
 * connection closes. Only chunk-size lines and trailers are read byte by byte (a few bytes each).
 *
 * Strict where a lenient reading could desynchronise the connection: a bad status line, a header line
 * without ':' or folded onto the previous one, a bad or conflicting Content-Length, Content-Length with
 * Transfer-Encoding, and bytes after the end of a response (no pipelining, so nothing may follow) end the
 * connection. 1xx answers other than 101 are skipped; HEAD, 204 and 304 answers have no body.
 */
import { errors } from "undici";
import { decimalOf, isHeader } from "../raw-response.js";

/** What the parser tells its connection. A callback may stop() the parser (an abort); it then says no more. */
export interface ResponseParserListener {
  /** The final (non-1xx) head. */
  onResponseHead(status: number, rawHeaders: Buffer[], statusText: string): void;
  /** A piece of the body (a view of a received Buffer). */
  onResponseData(chunk: Buffer): void;
  /** The response is complete; `reusable`: the connection may carry another request. */
  onResponseEnd(reusable: boolean): void;
  /** The response is malformed, too large, or cut short; the connection must not be used again. */
  onResponseError(error: Error): void;
}

// Parser states (plain numbers: the switch stays a jump table).
const IDLE = 0;
const HEAD = 1;
const BODY_LENGTH = 2;
const CHUNK_SIZE = 3;
const CHUNK_DATA = 4;
const CHUNK_CRLF = 5;
const TRAILERS = 6;
const BODY_UNTIL_CLOSE = 7;
const STOPPED = 8;

const CRLFCRLF = Buffer.from("\r\n\r\n", "latin1");
const CR = 13;
const LF = 10;
/** undici's default limit on a response head (Node's http.maxHeaderSize). */
export const DEFAULT_MAX_HEADER_BYTES = 16 * 1024;

function malformed(what: string, code: string): Error {
  // undici's class (its typings omit the constructor's code argument, so the code is set here).
  const error = new errors.HTTPParserError(`malformed HTTP response: ${what}`);
  error.code = `HPE_${code}`;
  return error;
}

function hexDigit(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/** Whether `data` starts with "HTTP/1." (byte compares: Buffer.compare validates its offsets each call). */
function isHttp1(data: Buffer): boolean {
  return (
    data[0] === 0x48 &&
    data[1] === 0x54 &&
    data[2] === 0x54 &&
    data[3] === 0x50 &&
    data[4] === 0x2f &&
    data[5] === 0x31 &&
    data[6] === 0x2e
  );
}

function isSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x09;
}

/** Parses `Keep-Alive: timeout=N` (seconds) into ms, as undici does; undefined without a timeout. */
export function keepAliveHintMs(value: string): number | undefined {
  const match = /timeout=(\d+)/i.exec(value);
  return match === null ? undefined : Number(match[1]) * 1000;
}

/** What a Connection header says of keep-alive: false for `close`, true for `keep-alive`, else nothing. */
function connectionSays(value: string): boolean | undefined {
  const tokens = value.toLowerCase();
  if (/(?:^|[\s,])close(?:$|[\s,])/.test(tokens)) return false;
  if (/(?:^|[\s,])keep-alive(?:$|[\s,])/.test(tokens)) return true;
  return undefined;
}

/**
 * A final (>= 200) response head and what it says. `head` is a copy of its bytes (status line to the blank
 * line), which `rawHeaders` view, so replaying it holds no socket chunk.
 */
interface ParsedHead {
  readonly head: Buffer;
  readonly status: number;
  readonly statusText: string;
  readonly rawHeaders: Buffer[];
  readonly keepAlive: boolean;
  /** Body framing: Content-Length (>= 0, or -1 for none), -1 with Transfer-Encoding not chunked, -2 chunked. */
  readonly framing: number;
  /** The Keep-Alive header's hint, or null when the head has none. */
  readonly hintMs: number | undefined | null;
}

/** One connection's response parser. */
export class Http1ResponseParser {
  readonly #listener: ResponseParserListener;
  readonly #maxHeaderBytes: number;
  #state = IDLE;
  #noBody = false;
  #pending: Buffer | null = null;
  #remaining = 0;
  #keepAlive = true;
  #chunkDigits = 0;
  #inExtension = false;
  #sawCR = false;
  #lineLength = 0;
  /** The last final head parsed and what it said, replayed while the server repeats it byte for byte. */
  #lastHead: ParsedHead | null = null;
  /** The server's `Keep-Alive: timeout=` hint of the last response, ms (undefined: none given). */
  keepAliveHintMs: number | undefined = undefined;

  constructor(listener: ResponseParserListener, maxHeaderBytes = DEFAULT_MAX_HEADER_BYTES) {
    this.#listener = listener;
    this.#maxHeaderBytes = maxHeaderBytes;
  }

  /** Expects the response to a request just written (`noBody`: a HEAD request). */
  start(noBody: boolean): void {
    this.#state = HEAD;
    this.#noBody = noBody;
    this.#pending = null;
    this.keepAliveHintMs = undefined;
  }

  /** Says nothing more (the request was aborted or the connection is going). */
  stop(): void {
    this.#state = STOPPED;
    this.#pending = null;
  }

  /** Whether a response is expected or being read. */
  get busy(): boolean {
    return this.#state !== IDLE && this.#state !== STOPPED;
  }

  /** Feeds received bytes. */
  execute(chunk: Buffer): void {
    let pos = 0;
    while (pos < chunk.length) {
      switch (this.#state) {
        case HEAD:
          pos = this.#head(chunk, pos);
          break;
        case BODY_LENGTH:
        case CHUNK_DATA:
          pos = this.#counted(chunk, pos);
          break;
        case CHUNK_SIZE:
          pos = this.#chunkSize(chunk, pos);
          break;
        case CHUNK_CRLF:
          pos = this.#chunkEnd(chunk, pos);
          break;
        case TRAILERS:
          pos = this.#trailers(chunk, pos);
          break;
        case BODY_UNTIL_CLOSE:
          this.#listener.onResponseData(pos === 0 ? chunk : chunk.subarray(pos));
          return;
        case IDLE:
          this.#fail(malformed("data after the end of the response", "DATA_AFTER_END"));
          return;
        default:
          return; // STOPPED
      }
      if (pos < 0) return;
    }
  }

  /** The server closed the connection: completes a body read until close, or fails the response. */
  eof(): void {
    if (this.#state === BODY_UNTIL_CLOSE) this.#end(false);
    else if (this.busy) this.#fail(new errors.SocketError("other side closed"));
  }

  #fail(error: Error): -1 {
    this.stop();
    this.#listener.onResponseError(error);
    return -1;
  }

  /** Ends the response; bytes left in the chunk after it make the connection unusable. */
  #end(reusable: boolean): -1 {
    this.#state = IDLE;
    this.#listener.onResponseEnd(reusable && this.#keepAlive);
    return -1;
  }

  #head(chunk: Buffer, pos: number): number {
    const pending = this.#pending;
    let data: Buffer;
    let from = 0;
    if (pending === null) data = pos === 0 ? chunk : chunk.subarray(pos);
    else {
      data = Buffer.concat([pending, pos === 0 ? chunk : chunk.subarray(pos)]);
      from = Math.max(0, pending.length - 3);
    }
    const end = data.indexOf(CRLFCRLF, from);
    if (end < 0 || end + 4 > this.#maxHeaderBytes) {
      if (data.length > this.#maxHeaderBytes || end >= 0) {
        return this.#fail(
          new errors.HeadersOverflowError(`response head over ${this.#maxHeaderBytes} bytes`),
        );
      }
      this.#pending = data;
      return chunk.length;
    }
    this.#pending = null;
    const next = pos + end + 4 - (pending === null ? 0 : pending.length);
    // A server answering the same request repeats the same head (node:http's Date changes once a second):
    // one compare then stands for the whole parse.
    const last = this.#lastHead;
    if (last !== null && last.head.compare(data, 0, end + 4) === 0) {
      this.#applyHead(last);
      if (this.#state === STOPPED) return -1;
      return this.#afterHead(chunk, next, last.status);
    }
    // Parsed from a copy, so that the header views kept for replay hold no socket chunk.
    const status = this.#parseHead(Buffer.from(data.subarray(0, end + 4)), end + 2);
    if (status < 0 || this.#state === STOPPED) return -1;
    return this.#afterHead(chunk, next, status);
  }

  /** Sets the body state from a final head and hands the head to the listener. */
  #applyHead(parsed: ParsedHead): void {
    if (parsed.hintMs !== null) this.keepAliveHintMs = parsed.hintMs;
    this.#keepAlive = parsed.keepAlive;
    const status = parsed.status;
    this.#remaining = this.#noBody || status === 204 || status === 304 ? 0 : parsed.framing;
    this.#listener.onResponseHead(status, parsed.rawHeaders, parsed.statusText);
  }

  /** Parses a head ending at `headEnd` (after the last header line's CRLF); returns the status or -1. */
  #parseHead(data: Buffer, headEnd: number): number {
    const lineEnd = data.indexOf(CR);
    // "HTTP/1.x NNN[ reason]"
    if (
      lineEnd < 12 ||
      data[lineEnd + 1] !== LF ||
      !isHttp1(data) ||
      (data[7] !== 0x31 && data[7] !== 0x30) ||
      data[8] !== 0x20 ||
      (lineEnd > 12 && data[12] !== 0x20)
    ) {
      const line = data.toString("latin1", 0, Math.min(lineEnd < 0 ? data.length : lineEnd, 64));
      return this.#fail(
        malformed(`expected 'HTTP/1.x NNN' status line, got ${JSON.stringify(line)}`, "INVALID_STATUS"),
      );
    }
    const status = decimalOf(data.subarray(9, 12));
    if (!(status >= 100 && status <= 999)) {
      return this.#fail(
        malformed(`status code ${JSON.stringify(data.toString("latin1", 9, 12))}`, "INVALID_STATUS"),
      );
    }
    const statusText = lineEnd > 13 ? data.toString("latin1", 13, lineEnd) : "";
    let keepAlive = data[7] === 0x31; // HTTP/1.1 keeps the connection unless told otherwise
    let length = -1;
    let chunked = false;
    let transferEncoding = false;
    let hintMs: number | undefined | null = null;
    const rawHeaders: Buffer[] = [];
    for (let p = lineEnd + 2; p < headEnd; ) {
      const end = data.indexOf(CR, p);
      if (data[end + 1] !== LF || data.indexOf(LF, p) !== end + 1) {
        return this.#fail(malformed("a header line not ended by CRLF, or with a bare LF", "LF_EXPECTED"));
      }
      if (isSpace(data[p])) return this.#fail(malformed("a folded header line", "INVALID_HEADER_TOKEN"));
      const colon = data.indexOf(0x3a, p);
      if (colon <= p || colon > end || isSpace(data[colon - 1])) {
        const line = data.toString("latin1", p, Math.min(end, p + 64));
        return this.#fail(
          malformed(`header line ${JSON.stringify(line)} has no 'name:'`, "INVALID_HEADER_TOKEN"),
        );
      }
      let v = colon + 1;
      let w = end;
      while (v < w && isSpace(data[v])) v++;
      while (w > v && isSpace(data[w - 1])) w--;
      const name = data.subarray(p, colon);
      const value = data.subarray(v, w);
      rawHeaders.push(name, value);
      p = end + 2;
      switch (name.length) {
        case 14:
          if (isHeader(name, "content-length")) {
            const n = decimalOf(value);
            if (Number.isNaN(n) || (length >= 0 && n !== length)) {
              return this.#fail(
                malformed(
                  `Content-Length ${JSON.stringify(value.toString("latin1"))}`,
                  "INVALID_CONTENT_LENGTH",
                ),
              );
            }
            length = n;
          }
          break;
        case 17:
          if (isHeader(name, "transfer-encoding")) {
            transferEncoding = true;
            chunked = /(?:^|,)\s*chunked\s*$/i.test(value.toString("latin1"));
          }
          break;
        case 10:
          if (isHeader(name, "connection")) {
            const says = connectionSays(value.toString("latin1"));
            if (says !== undefined) keepAlive = says;
          } else if (isHeader(name, "keep-alive")) {
            hintMs = keepAliveHintMs(value.toString("latin1"));
          }
          break;
      }
    }
    if (status < 200) {
      if (status === 101)
        return this.#fail(
          malformed("101 Switching Protocols to a request that asked for none", "INVALID_STATUS"),
        );
      return status; // skipped by #afterHead
    }
    if (transferEncoding && length >= 0) {
      return this.#fail(malformed("both Content-Length and Transfer-Encoding", "UNEXPECTED_CONTENT_LENGTH"));
    }
    const framing = transferEncoding ? (chunked ? -2 : -1) : length;
    const parsed: ParsedHead = { head: data, status, statusText, rawHeaders, keepAlive, framing, hintMs };
    this.#lastHead = parsed;
    this.#applyHead(parsed);
    return status;
  }

  /** Sets the body state after a head and goes on at `next` (or ends an empty response there). */
  #afterHead(chunk: Buffer, next: number, status: number): number {
    if (status < 200) {
      this.start(this.#noBody); // an interim answer: the final one follows
      return next;
    }
    const remaining = this.#remaining;
    if (remaining === 0) return this.#end(next === chunk.length);
    if (remaining === -1) {
      this.#keepAlive = false;
      this.#state = BODY_UNTIL_CLOSE;
    } else if (remaining === -2) {
      this.#state = CHUNK_SIZE;
      this.#resetChunkLine();
    } else this.#state = BODY_LENGTH;
    return next;
  }

  #resetChunkLine(): void {
    this.#remaining = 0;
    this.#chunkDigits = 0;
    this.#inExtension = false;
    this.#sawCR = false;
  }

  /** A Content-Length body or one chunk's data. */
  #counted(chunk: Buffer, pos: number): number {
    const n = Math.min(chunk.length - pos, this.#remaining);
    this.#listener.onResponseData(pos === 0 && n === chunk.length ? chunk : chunk.subarray(pos, pos + n));
    if (this.#state === STOPPED) return -1;
    this.#remaining -= n;
    pos += n;
    if (this.#remaining > 0) return pos;
    if (this.#state === BODY_LENGTH) return this.#end(pos === chunk.length);
    this.#state = CHUNK_CRLF;
    this.#sawCR = false;
    return pos;
  }

  /** A chunk-size line: hex digits, an optional `;extension`, CRLF. */
  #chunkSize(chunk: Buffer, pos: number): number {
    for (; pos < chunk.length; pos++) {
      const byte = chunk[pos]!;
      if (this.#sawCR) {
        if (byte !== LF || this.#chunkDigits === 0)
          return this.#fail(malformed("a bad chunk size line", "INVALID_CHUNK_SIZE"));
        if (this.#remaining === 0) {
          this.#state = TRAILERS;
          this.#lineLength = 0;
          this.#sawCR = false;
          return pos + 1;
        }
        this.#state = CHUNK_DATA;
        return pos + 1;
      }
      if (byte === CR) this.#sawCR = true;
      else if (this.#inExtension) continue;
      else if (byte === 0x3b) this.#inExtension = true;
      else {
        const digit = hexDigit(byte);
        if (digit < 0 || this.#chunkDigits >= 12) {
          return this.#fail(malformed("a bad chunk size", "INVALID_CHUNK_SIZE"));
        }
        this.#remaining = this.#remaining * 16 + digit;
        this.#chunkDigits++;
      }
    }
    return pos;
  }

  /** The CRLF after a chunk's data. */
  #chunkEnd(chunk: Buffer, pos: number): number {
    for (; pos < chunk.length; pos++) {
      const byte = chunk[pos]!;
      if (!this.#sawCR && byte === CR) this.#sawCR = true;
      else if (this.#sawCR && byte === LF) {
        this.#state = CHUNK_SIZE;
        this.#resetChunkLine();
        return pos + 1;
      } else return this.#fail(malformed("chunk data not followed by CRLF", "STRICT"));
    }
    return pos;
  }

  /** Trailer lines after the last chunk, up to an empty line (their content is not kept). */
  #trailers(chunk: Buffer, pos: number): number {
    for (; pos < chunk.length; pos++) {
      const byte = chunk[pos]!;
      if (this.#sawCR) {
        if (byte !== LF) return this.#fail(malformed("a trailer line not ended by CRLF", "LF_EXPECTED"));
        if (this.#lineLength === 0) return this.#end(pos + 1 === chunk.length);
        this.#lineLength = 0;
        this.#sawCR = false;
      } else if (byte === CR) this.#sawCR = true;
      else if (++this.#lineLength > this.#maxHeaderBytes) {
        return this.#fail(new errors.HeadersOverflowError("response trailers too large"));
      }
    }
    return pos;
  }
}
