/**
 * `--http-max-buffered-bytes` (ours; Triton bounds only each request, --http-max-input-size): a server-wide
 * bound on the bytes the HTTP front end holds for request bodies and for answers not yet handed to the
 * kernel. Without it, many large requests at once (or clients that never read their large answers) grow
 * memory without limit: 40 held 60 MiB bodies took a server from 0.9 to 3.5 GB. Each request has a hold:
 * a body reserves its bytes before they are buffered (all of a declared Content-Length up front, a chunked
 * body as its buffer grows) and is refused when they do not fit; its answer replaces them whatever the
 * bound (the work is done), and the hold is released when the response closes, however it ends. The count
 * lives in a SharedArrayBuffer so that every `--http-thread-count` thread draws on the same bound.
 */
import { totalmem } from "node:os";
import { HttpError } from "./http-error.js";

/** The default bound: an eighth of the machine's memory, and room for two largest requests at least. */
export function defaultMaxBufferedBytes(maxInputSize: number): number {
  return Math.max(Math.floor(totalmem() / 8), 2 * maxInputSize);
}

/** The server-wide count and its bound. */
export interface BufferBudget {
  readonly maxBytes: number;
  /** The shared count, handed to front-end threads so that they draw on the same bound. */
  readonly counter: SharedArrayBuffer;
  /** Bytes held now by every thread's requests. */
  heldBytes(): number;
  /** A new request's hold, empty. */
  open(): BufferHold;
}

/** What one request holds of the budget. */
export interface BufferHold {
  /**
   * Adds `bytes` for a body about to be buffered; throws HttpError (503, or 413 for a body that could
   * never fit) and adds nothing when they do not fit.
   */
  reserve(bytes: number): void;
  /** Holds exactly `bytes` from now on, whatever the bound (an answer that is already computed). */
  set(bytes: number): void;
  /** Gives everything back; later calls hold nothing. Idempotent. */
  release(): void;
}

/** A new count for the front ends of one server. */
export function createBufferCounter(): SharedArrayBuffer {
  return new SharedArrayBuffer(BigInt64Array.BYTES_PER_ELEMENT);
}

/** The budget of `maxBytes` over `counter` (shared with other threads, or a fresh one). */
export function createBufferBudget(maxBytes: number, counter = createBufferCounter()): BufferBudget {
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0)
    throw new RangeError(
      `maxBufferedBytes must be a positive whole number of bytes, got ${String(maxBytes)}`,
    );
  const held = new BigInt64Array(counter, 0, 1);
  const max = BigInt(maxBytes);
  const add = (bytes: number) => {
    if (bytes !== 0) Atomics.add(held, 0, BigInt(bytes));
  };
  const tryAdd = (bytes: number): boolean => {
    const wanted = BigInt(bytes);
    for (;;) {
      const now = Atomics.load(held, 0);
      if (now + wanted > max) return false;
      if (Atomics.compareExchange(held, 0, now, now + wanted) === now) return true;
    }
  };
  const refusal = (bytes: number): HttpError =>
    bytes > maxBytes
      ? new HttpError(
          413,
          `request body of ${bytes} bytes exceeds the ${maxBytes} bytes the server may buffer for all ` +
            "requests (--http-max-buffered-bytes)",
        )
      : new HttpError(
          503,
          "request refused: the request bodies and unsent answers the server holds would exceed " +
            `--http-max-buffered-bytes (${maxBytes} bytes); try again later`,
        );
  return {
    maxBytes,
    counter,
    heldBytes: () => Number(Atomics.load(held, 0)),
    open() {
      let mine = 0;
      let released = false;
      return {
        reserve(bytes) {
          if (released) return;
          if (!tryAdd(bytes)) throw refusal(bytes);
          mine += bytes;
        },
        set(bytes) {
          if (released) return;
          add(bytes - mine);
          mine = bytes;
        },
        release() {
          if (released) return;
          released = true;
          add(-mine);
          mine = 0;
        },
      };
    },
  };
}
