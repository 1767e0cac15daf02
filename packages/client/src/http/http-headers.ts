/**
 * The request headers of each kind of call, shared by both HTTP transports: names in lower case, built from
 * the client's resolved options, then a call's own headers and the auth hook on top.
 */
import type { AuthHook } from "../auth-options.js";
import type { ResolvedHttpCommonOptions } from "./http-common-options.js";

export const JSON_TYPE = "application/json";
export const BINARY_TYPE = "application/octet-stream";

/** The headers of a call with a JSON body. */
export function jsonHeaders(o: ResolvedHttpCommonOptions): Readonly<Record<string, string>> {
  return Object.freeze({ ...o.headers, "content-type": JSON_TYPE });
}

/**
 * The headers every infer request with this body layout carries: the client's headers, the body's type
 * and JSON length (undefined: a JSON-only body), and the compression headers.
 */
export function inferHeaders(
  o: ResolvedHttpCommonOptions,
  jsonLength: number | undefined,
): Readonly<Record<string, string>> {
  const headers: Record<string, string> = { ...o.headers };
  if (jsonLength === undefined) headers["content-type"] = JSON_TYPE;
  else {
    headers["content-type"] = BINARY_TYPE;
    headers["inference-header-content-length"] = String(jsonLength);
  }
  if (o.requestCompression !== undefined) headers["content-encoding"] = o.requestCompression;
  if (o.responseCompression) headers["accept-encoding"] = "gzip, deflate";
  return Object.freeze(headers);
}

/**
 * One call's own headers: a copy of `base` with the call's `extra` headers on top (they win; names are
 * lower-cased), then the auth hook run on it (a promise when the hook is async).
 */
export function callHeaders(
  base: Readonly<Record<string, string>>,
  extra: Readonly<Record<string, string>> | undefined,
  hook: AuthHook | undefined,
): Record<string, string> | Promise<Record<string, string>> {
  const headers: Record<string, string> = { ...base };
  if (extra !== undefined) {
    for (const [k, v] of Object.entries(extra)) headers[k.toLowerCase()] = v;
  }
  if (hook === undefined) return headers;
  const done = hook(headers);
  return done instanceof Promise ? done.then(() => headers) : headers;
}
