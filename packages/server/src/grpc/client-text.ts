/**
 * What a gRPC error may repeat of the request, kept small. Messages come from the core with the client's
 * text inside them (a 1 MiB model name in "Request for unknown model: '…' is not found"); the front end
 * cuts each over-long string the request carried (core/echo-text.ts) and then bounds the whole
 * `grpc-message`, so no trailer can exceed what HTTP/2 clients accept. A trailer over nghttp2's 64 KiB
 * header-field limit is a COMPRESSION_ERROR on the client: Node's client then hangs every call on the
 * connection until its deadline, and gRPC core clients refuse metadata past 8-16 KiB.
 */
import { MAX_ECHO_CHARS, truncateEchoesIn } from "../core/echo-text.js";

/**
 * Most bytes of a `grpc-message` as sent (grpc-js percent-encodes it with encodeURI): well under gRPC
 * core's 8 KiB default metadata limit, so Python and C++ clients read it too.
 */
export const MAX_GRPC_MESSAGE_BYTES = 4096;

const MAX_DEPTH = 8;

/** The strings in a decoded request longer than MAX_ECHO_CHARS (names, ids, parameter values, ...). */
export function longTextsOf(request: unknown): string[] {
  const found: string[] = [];
  const walk = (value: unknown, depth: number): void => {
    if (typeof value === "string") {
      if (value.length > MAX_ECHO_CHARS) found.push(value);
      return;
    }
    if (value === null || typeof value !== "object" || depth > MAX_DEPTH) return;
    if (ArrayBuffer.isView(value)) return;
    if (Array.isArray(value)) {
      for (const item of value) {
        if (typeof item !== "string" && (item === null || typeof item !== "object")) return;
        walk(item, depth + 1);
      }
      return;
    }
    for (const [key, item] of Object.entries(value)) {
      if (key.length > MAX_ECHO_CHARS) found.push(key);
      walk(item, depth + 1);
    }
  };
  walk(request, 0);
  return found;
}

/** Lone surrogates (which encodeURI, and so grpc-js, would throw on) as U+FFFD. */
function wellFormed(text: string): string {
  return text.replace(/\p{Cs}/gu, "\uFFFD");
}

function encodedLength(ch: string): number {
  try {
    return encodeURI(ch).length;
  } catch {
    return 9; // a lone surrogate; never sent as such (see boundGrpcMessage)
  }
}

/** `details` cut so that its percent-encoded form fits MAX_GRPC_MESSAGE_BYTES, marked when cut. */
export function boundGrpcMessage(details: string, maxBytes: number = MAX_GRPC_MESSAGE_BYTES): string {
  // Each UTF-16 unit encodes to at most 9 bytes: short messages need no counting.
  if (details.length * 9 <= maxBytes) return wellFormed(details);
  const suffix = "… (message truncated)";
  const room = maxBytes - encodedLength(suffix);
  let used = 0;
  let cut = "";
  let whole = true;
  for (const ch of details) {
    const size = encodedLength(ch);
    if (used + size > room) {
      whole = false;
      break;
    }
    used += size;
    cut += ch;
  }
  return whole ? wellFormed(details) : `${wellFormed(cut)}${suffix}`;
}

/** The `grpc-message` (or stream `error_message`) for `message`, raised while serving `request`. */
export function boundedMessage(message: string, request: unknown): string {
  return boundGrpcMessage(truncateEchoesIn(message, longTextsOf(request)));
}
