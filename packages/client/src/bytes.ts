/**
 * Bytes and UTF-8 text on plain Uint8Arrays, for the modules every runtime loads (the encoders, decoders and
 * answer parsers under both HTTP transports): no `node:` import and no `Buffer` that a browser lacks. Where
 * the runtime has Node's Buffer (Node, Bun) it is used, because on Node 20 it is the faster way for these
 * small, hot operations (measured: `new Uint8Array(300)` about 10x `Buffer.allocUnsafe(300)`, which takes
 * pooled memory; `TextEncoder.encode` allocates outside the pool too).
 */

/** Node's Buffer where the runtime has one (looked up, never imported: browsers must not need it). */
const NodeBuffer: typeof Buffer | undefined = (globalThis as { Buffer?: typeof Buffer }).Buffer;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `length` bytes of uninitialised (Node) or zeroed memory. */
export function allocBytes(length: number): Uint8Array {
  return NodeBuffer === undefined ? new Uint8Array(length) : NodeBuffer.allocUnsafe(length);
}

/** The length of `text` in UTF-8 (a lone surrogate counts 3 bytes, as TextEncoder writes U+FFFD). */
export function utf8Length(text: string): number {
  if (NodeBuffer !== undefined) return NodeBuffer.byteLength(text, "utf8");
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) length += 1;
    else if (c < 0x800) length += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        length += 4;
        i++;
      } else length += 3;
    } else length += 3;
  }
  return length;
}

/** Writes `text` as UTF-8 at `offset` of `target` (which has room for utf8Length(text) bytes there). */
export function writeUtf8(target: Uint8Array, text: string, offset = 0): void {
  encoder.encodeInto(text, offset === 0 ? target : target.subarray(offset));
}

/** `text` as UTF-8 bytes. */
export function utf8Bytes(text: string): Uint8Array {
  return NodeBuffer === undefined ? encoder.encode(text) : NodeBuffer.from(text, "utf8");
}

/** Bytes `start` to `end` of `bytes` decoded as UTF-8 (malformed sequences become U+FFFD). */
export function readUtf8(bytes: Uint8Array, start = 0, end = bytes.length): string {
  if (NodeBuffer !== undefined && bytes instanceof NodeBuffer) return bytes.toString("utf8", start, end);
  return decoder.decode(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end));
}

/** Whether the first `length` bytes of `a` and `b` are equal (both have at least `length`). */
export function startsEqual(a: Uint8Array, b: Uint8Array, length: number): boolean {
  if (NodeBuffer !== undefined && a instanceof NodeBuffer) return a.compare(b, 0, length, 0, length) === 0;
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** `bytes` in base64 (RFC 4648, with padding). */
export function base64Of(bytes: Uint8Array): string {
  if (NodeBuffer !== undefined) {
    return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
  }
  // btoa takes a "binary string" (one char per byte); built in slices to keep the argument lists short.
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}
