/**
 * Client text echoed back (a model name in "Request for unknown model: '<name>' is not found", an input
 * name, a version string) is cut to MAX_ECHO_CHARS characters. Triton echoes it whole; the words around
 * it stay Triton's. Why: a gRPC error travels in the `grpc-message` trailer, and one header field larger
 * than nghttp2's HPACK limit (NGHTTP2_HD_MAX_NV, 64 KiB encoded) is a COMPRESSION_ERROR that kills the
 * client's whole HTTP/2 connection (Node's client then leaves every call on it hanging); gRPC core clients
 * refuse metadata past 8-16 KiB. Log lines and HTTP bodies stay small for the same reason.
 */

/** Most characters of one piece of client text that a message, log line or `grpc-message` repeats. */
export const MAX_ECHO_CHARS = 256;

/**
 * `text`, or its first `maxChars` characters and how long it was (never splitting a surrogate pair):
 * `xxxx… (1048576 characters)`.
 */
export function truncateEcho(text: string, maxChars: number = MAX_ECHO_CHARS): string {
  if (text.length <= maxChars) return text;
  let end = maxChars;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}… (${text.length} characters)`;
}

/**
 * `message` with every occurrence of each over-long text in `echoes` replaced by its truncateEcho form:
 * for messages built elsewhere (the core) around text the front end knows came from the client.
 */
export function truncateEchoesIn(
  message: string,
  echoes: Iterable<string>,
  maxChars: number = MAX_ECHO_CHARS,
): string {
  let result = message;
  // Longest first, so a long text is cut before a shorter one that it contains.
  const long = [...new Set(echoes)].filter((e) => e.length > maxChars).sort((a, b) => b.length - a.length);
  for (const echo of long) {
    if (result.includes(echo)) result = result.split(echo).join(truncateEcho(echo, maxChars));
  }
  return result;
}
