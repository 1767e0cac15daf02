import { UsageError } from "../run/usage-error.js";

/** A parsed `start:end:step` range. */
export interface ParsedRange {
  start: number;
  end: number;
  step: number;
}

/**
 * Parses perf_analyzer's `start[:end[:step]]` (end defaults to start, step to 1). Concurrency takes whole
 * numbers, request rates any positive numbers. End 0 means "until the latency threshold".
 */
export function parseRange(flag: string, text: string, integer: boolean): ParsedRange {
  const parts = text.split(":");
  const what = integer ? "whole numbers" : "numbers";
  if (parts.length > 3 || parts.some((p) => p.trim() === "")) {
    throw new UsageError(`${flag}: expected start[:end[:step]] with ${what}, got "${text}"`);
  }
  const values = parts.map((p) => Number(p));
  if (values.some((v) => !Number.isFinite(v) || v < 0 || (integer && !Number.isInteger(v)))) {
    throw new UsageError(`${flag}: expected start[:end[:step]] with non-negative ${what}, got "${text}"`);
  }
  const [start = 1, end = start, step = 1] = values;
  if (start <= 0) throw new UsageError(`${flag}: start must be greater than 0, got "${text}"`);
  if (step <= 0) throw new UsageError(`${flag}: step must be greater than 0, got "${text}"`);
  if (end !== 0 && end < start)
    throw new UsageError(`${flag}: end must be 0 or at least start, got "${text}"`);
  return { start, end, step };
}

/**
 * Parses `--shape name:d1,d2,...` into a name and dimensions, refusing what perf_analyzer's parser refuses
 * (src/command_line_parser.cc): no colon, or a dimension <= 0. The last colon separates the name, so
 * names may hold colons, as in perf_analyzer.
 */
export function parseShape(text: string): [string, number[]] {
  const colon = text.lastIndexOf(":");
  if (colon < 0) {
    throw new UsageError(`--shape: there must be a colon after input name (name:d1,d2,...), got "${text}"`);
  }
  const name = text.slice(0, colon);
  if (name === "") throw new UsageError(`--shape: expected an input name before the colon, got "${text}"`);
  const dims = text.slice(colon + 1).split(",");
  const values = dims.map((d) => (d.trim() === "" ? Number.NaN : Number(d)));
  if (values.some((v) => !Number.isInteger(v))) {
    throw new UsageError(`--shape: expected whole-number dimensions (name:d1,d2,...), got "${text}"`);
  }
  if (values.some((v) => v <= 0)) {
    throw new UsageError(`--shape: the dimensions of input tensor ${name} must be > 0, got "${text}"`);
  }
  return [name, values];
}

/** Parses `-H Header:Value`. */
export function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(":");
  if (colon <= 0) throw new UsageError(`-H: expected Header:Value, got "${text}"`);
  return [text.slice(0, colon).trim(), text.slice(colon + 1).trim()];
}

/** Adds `http://` to `host:port` URLs (perf_analyzer's `-u localhost:8000` form). */
export function normalizeUrl(flag: string, text: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UsageError(`${flag}: expected host:port or an http(s) URL, got "${text}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`${flag}: expected an http or https URL, got "${text}"`);
  }
  return withScheme.replace(/\/+$/, "");
}

/** grpc-js's own target schemes (its resolvers), passed to the client as given. */
const GRPC_TARGET_SCHEMES = /^(dns|unix|unix-abstract|ipv4|ipv6|vsock):/i;

/**
 * Checks `-u` for `-i grpc`: `host:port` (perf_analyzer's form, e.g. `localhost:8001`), `grpc://host:port`
 * or `grpcs://host:port`, or a grpc-js target (`dns:///host:8001`, `unix:/path`, ...), all handed to
 * `createGrpcClient` unchanged. An http(s) URL is refused: it is the HTTP front end's address, not gRPC's.
 */
export function normalizeGrpcUrl(flag: string, text: string): string {
  const expected = `${flag}: with -i grpc expected host:port (e.g. localhost:8001), grpc(s)://host:port or a grpc-js target such as dns:///host:8001`;
  if (GRPC_TARGET_SCHEMES.test(text) && !/^[a-z]+:\d+$/i.test(text)) return text;
  if (/^https?:\/\//i.test(text)) {
    throw new UsageError(`${expected}, got "${text}" (an HTTP URL)`);
  }
  const hasScheme = /^grpcs?:\/\//i.test(text);
  if (!hasScheme && /^[a-z][a-z0-9+.-]*:\/\//i.test(text)) throw new UsageError(`${expected}, got "${text}"`);
  let url: URL;
  try {
    url = new URL(hasScheme ? text : `grpc://${text}`);
  } catch {
    throw new UsageError(`${expected}, got "${text}"`);
  }
  const rest = url.pathname.replace(/\/+$/, "");
  if (url.hostname === "" || rest !== "" || url.search !== "" || url.hash !== "") {
    throw new UsageError(`${expected}, got "${text}"`);
  }
  if (!hasScheme && url.port === "") throw new UsageError(`${expected}, got "${text}" (no port)`);
  return text.replace(/\/+$/, "");
}
