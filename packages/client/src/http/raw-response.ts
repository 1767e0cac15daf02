/**
 * A completed HTTP answer as the exchange collected it: status, body, and the response headers as undici
 * hands them over (name, value, name, value, ... as raw bytes). The client reads only a few headers, so
 * they are looked up by name on the raw list instead of being parsed into an object for every answer.
 */

/** undici's raw header list: name, value, name, value, ... */
export type RawHeaders = readonly (Buffer | string)[];

/** An empty header list. */
export const NO_HEADERS: RawHeaders = [];

function text(value: Buffer | string): string {
  return typeof value === "string" ? value : value.toString("latin1");
}

/**
 * Whether raw header name `key` is `name` (given in lower case), without making a string of it. OR-ing
 * 0x20 lower-cases ASCII letters and leaves '-' and digits alone; header names hold nothing else that
 * could fold onto those (llhttp rejects control characters in names).
 */
export function isHeader(key: Buffer | string, name: string): boolean {
  if (key.length !== name.length) return false;
  if (typeof key === "string") return key.toLowerCase() === name;
  for (let i = 0; i < key.length; i++) if ((key[i]! | 0x20) !== name.charCodeAt(i)) return false;
  return true;
}

/**
 * A header value of decimal digits as a number, without making a string; NaN for anything else, an empty
 * value, or more than 15 digits (past exact doubles; no body that size is collected in memory anyway).
 */
export function decimalOf(value: Buffer | string): number {
  if (value.length === 0 || value.length > 15) return Number.NaN;
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const digit = (typeof value === "string" ? value.charCodeAt(i) : value[i]!) - 0x30;
    if (digit < 0 || digit > 9) return Number.NaN;
    n = n * 10 + digit;
  }
  return n;
}

/** The value of header `name` (lower case) in undici's raw list, repeated values joined with ", ". */
function findHeader(raw: RawHeaders, name: string): string | undefined {
  let found: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!isHeader(raw[i]!, name)) continue;
    const value = text(raw[i + 1]!);
    found = found === undefined ? value : `${found}, ${value}`;
  }
  return found;
}

/** A completed answer (any status). */
export class RawResponse {
  readonly status: number;
  readonly body: Buffer;
  readonly #rawHeaders: RawHeaders;

  constructor(status: number, rawHeaders: RawHeaders, body: Buffer) {
    this.status = status;
    this.#rawHeaders = rawHeaders;
    this.body = body;
  }

  /** A response header by its lower-case name (repeated headers joined with ", "), or undefined. */
  header(name: string): string | undefined {
    return findHeader(this.#rawHeaders, name);
  }
}
