/**
 * CORS on the HTTP front end (ours: Triton answers no preflight, server#1147 and #5971), so that a web page
 * on another origin can call the API. Off unless origins are configured (`--http-cors-allow-origin`); off,
 * the front end never reaches this file and OPTIONS is answered as before (405).
 *
 * On, as the Fetch standard's CORS protocol asks (https://fetch.spec.whatwg.org/#http-cors-protocol):
 * - a preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered here, from the flags
 *   and the route alone, never from a model: 204 with the Access-Control-Allow-* headers when the origin,
 *   the method and every requested header are allowed. A preflight succeeds only with an ok status (2xx),
 *   and the standard suggests 403 without those headers for one the server will not share: so a refused
 *   preflight is 403 (404 for a path that is no endpoint), with Triton's error body saying why;
 * - every other answer (errors included) from an allowed origin carries Access-Control-Allow-Origin and
 *   exposes Inference-Header-Content-Length (a page cannot split a binary tensor answer without it) and
 *   Content-Encoding. With exact origins the answer depends on Origin, so every answer says `Vary: Origin`
 *   (the standard's advice, so that a cache never hands one origin's answer to another); with `*` the
 *   answer is the same for everyone and needs no Vary.
 * CORS is not access control: a request from an origin not allowed is still served (a browser hides the
 * answer from the page; curl sees it). `--http-restricted-api` stays the access control: a browser sends a
 * preflight without the request's own headers, so the key cannot be checked there, and the preflight runs
 * nothing; the request that follows is checked as any other (403 without the key's value).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { truncateEcho } from "../core/echo-text.js";
import type { RestrictedApis } from "../core/restricted-api.js";
import { HttpError } from "./http-error.js";
import { methodAllowed, type Route } from "./router.js";

/** What `--http-cors-*` ask for: plain data, so that it crosses to front-end threads as is. */
export interface HttpCorsOptions {
  /** Origins whose pages may read answers, each `scheme://host[:port]` (http or https), or `["*"]` for any. */
  readonly allowOrigins: readonly string[];
  /** Request headers a page may send, beyond DEFAULT_CORS_ALLOW_HEADERS and the restricted APIs' keys. */
  readonly allowHeaders?: readonly string[];
  /** How long a browser may keep a preflight's answer, 0 to MAX_CORS_MAX_AGE_SECS. Default 600. */
  readonly maxAgeSecs?: number;
  /** Lets pages send cookies and HTTP authentication (exact origins only, never with `*`). Default false. */
  readonly allowCredentials?: boolean;
}

/** Default `--http-cors-max-age`: an infer page preflights once per model URL every 10 minutes. */
export const DEFAULT_CORS_MAX_AGE_SECS = 600;
/** The longest preflight cache any browser keeps (Firefox's 24 h; Chromium stops at 2 h). */
export const MAX_CORS_MAX_AGE_SECS = 86_400;
/** Most header names `allowHeaders` may add: they all go into each preflight's answer. */
export const MAX_CORS_ALLOW_HEADERS = 64;
/**
 * The request headers always allowed: what the KServe v2 API reads (JSON or binary bodies, compression)
 * and W3C trace context. The restricted APIs' header keys are added to them.
 */
export const DEFAULT_CORS_ALLOW_HEADERS: readonly string[] = Object.freeze([
  "Content-Type",
  "Inference-Header-Content-Length",
  "Content-Encoding",
  "Accept-Encoding",
  "traceparent",
  "tracestate",
]);
/** The answer headers a page may read besides the CORS-safelisted ones. */
export const CORS_EXPOSE_HEADERS = "Inference-Header-Content-Length, Content-Encoding";

/** Longest origin accepted (a host name is at most 253 characters). */
const MAX_ORIGIN_CHARS = 512;
/** Longest header name accepted. */
const MAX_HEADER_NAME_CHARS = 256;
/** Most characters of a flag value an error message repeats. */
const MAX_SHOWN_CHARS = 200;
/** RFC 7230 `token` (section 3.2.6), which header field names are. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** `scheme://authority` and nothing after it; the authority without user info, whitespace or slashes. */
const ORIGIN_FORM = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#@\\\s\u0000-\u001f\u007f]+)$/;
const EXPECTED_ORIGIN =
  "expected scheme://host[:port] with scheme http or https and no path, query, fragment or user name, or a lone '*'";
const EXPECTED_HEADER =
  "expected a header name (an RFC 7230 token: letters, digits and !#$%&'+-.^_`|~; '*' is not accepted)";

/** A CORS setting that cannot be served; the message names the flag (or option), the form and the value. */
export class CorsConfigError extends Error {
  override readonly name = "CorsConfigError";
}

/** How errors name each setting: the flags on the command line, the option's fields in code. */
export interface CorsSettingNames {
  readonly allowOrigins: string;
  readonly allowHeaders: string;
  readonly maxAgeSecs: string;
  readonly allowCredentials: string;
}

const OPTION_NAMES: CorsSettingNames = {
  allowOrigins: "cors.allowOrigins",
  allowHeaders: "cors.allowHeaders",
  maxAgeSecs: "cors.maxAgeSecs",
  allowCredentials: "cors.allowCredentials",
};

/** `value` as a one-line error repeats it: quoted, control characters escaped, cut past 200 characters. */
export function shownValue(value: unknown): string {
  const text = String(value).replace(
    /[\u0000-\u001f\u007f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return `'${truncateEcho(text, MAX_SHOWN_CHARS)}'`;
}

/** Whether `name` can be a header field name (and is not the `*` wildcard). */
export function isHeaderName(name: string): boolean {
  return name !== "*" && name.length <= MAX_HEADER_NAME_CHARS && TOKEN.test(name);
}

/**
 * The origin `text` names, serialized as a browser sends it in Origin (lower case, IDN as punycode, no
 * default port), or `*`. Refuses anything else: a path (even `/`), a query, user info, a wildcard inside a
 * host, `null` (the opaque origin any sandboxed page can take), other schemes.
 */
export function normalizeOrigin(text: string, setting: string = OPTION_NAMES.allowOrigins): string {
  const bad = (why: string) => new CorsConfigError(`invalid ${setting} ${shownValue(text)}: ${why}`);
  if (typeof text !== "string") throw bad(EXPECTED_ORIGIN);
  if (text === "*") return text;
  if (text.length > MAX_ORIGIN_CHARS)
    throw bad(`expected an origin of at most ${MAX_ORIGIN_CHARS} characters`);
  if (text === "null")
    throw bad("the opaque origin 'null' (sandboxed and file: pages) cannot be allowed: any page can take it");
  if (text.includes("*")) throw bad("expected an exact origin: no wildcard other than a lone '*'");
  const form = ORIGIN_FORM.exec(text);
  if (form === null) throw bad(EXPECTED_ORIGIN);
  const scheme = form[1]!.toLowerCase();
  if (scheme !== "http" && scheme !== "https") throw bad(`expected an http or https origin, not ${scheme}:`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw bad(EXPECTED_ORIGIN);
  }
  if (url.hostname === "") throw bad(EXPECTED_ORIGIN);
  return url.origin;
}

/**
 * `options` checked and normalized (origins as browsers send them, duplicates dropped), frozen; throws
 * CorsConfigError naming the setting as `names` say. Credentials are refused with `*`: a browser never lets
 * a page read a credentialed answer whose Access-Control-Allow-Origin is `*`.
 */
export function normalizeCorsOptions(
  options: HttpCorsOptions,
  names: CorsSettingNames = OPTION_NAMES,
): HttpCorsOptions {
  const given = options.allowOrigins;
  if (!Array.isArray(given) || given.length === 0)
    throw new CorsConfigError(`${names.allowOrigins}: expected at least one origin, or '*'`);
  const origins = [...new Set(given.map((origin) => normalizeOrigin(origin, names.allowOrigins)))];
  if (origins.includes("*") && origins.length > 1)
    throw new CorsConfigError(
      `invalid ${names.allowOrigins} '*': it allows every origin, give it alone (also given: ` +
        `${shownValue(origins.filter((o) => o !== "*").join(" "))})`,
    );
  const headers = options.allowHeaders ?? [];
  if (!Array.isArray(headers)) throw new CorsConfigError(`${names.allowHeaders}: ${EXPECTED_HEADER}`);
  for (const header of headers)
    if (typeof header !== "string" || !isHeaderName(header))
      throw new CorsConfigError(`invalid ${names.allowHeaders} ${shownValue(header)}: ${EXPECTED_HEADER}`);
  if (headers.length > MAX_CORS_ALLOW_HEADERS)
    throw new CorsConfigError(
      `${names.allowHeaders}: expected at most ${MAX_CORS_ALLOW_HEADERS} header names, got ${headers.length}`,
    );
  const maxAgeSecs = options.maxAgeSecs ?? DEFAULT_CORS_MAX_AGE_SECS;
  if (!Number.isInteger(maxAgeSecs) || maxAgeSecs < 0 || maxAgeSecs > MAX_CORS_MAX_AGE_SECS)
    throw new CorsConfigError(
      `invalid ${names.maxAgeSecs} ${shownValue(maxAgeSecs)}: expected whole seconds from 0 to ${MAX_CORS_MAX_AGE_SECS}`,
    );
  const allowCredentials = options.allowCredentials ?? false;
  if (typeof allowCredentials !== "boolean")
    throw new CorsConfigError(
      `invalid ${names.allowCredentials} ${shownValue(allowCredentials)}: expected a boolean`,
    );
  if (allowCredentials && origins[0] === "*")
    throw new CorsConfigError(
      `${names.allowCredentials} cannot be used with ${names.allowOrigins} '*': browsers refuse a credentialed ` +
        "answer to a wildcard origin; list the exact origins instead",
    );
  return Object.freeze({
    allowOrigins: Object.freeze(origins),
    allowHeaders: Object.freeze(uniqueHeaderNames(headers)),
    maxAgeSecs,
    allowCredentials,
  });
}

/** `names` without repeats, compared without regard to case; the first spelling kept. */
function uniqueHeaderNames(names: Iterable<string>): string[] {
  const seen = new Set<string>();
  const unique: string[] = [];
  for (const name of names) {
    const key = name.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    unique.push(name);
  }
  return unique;
}

/** The CORS settings a front end serves, resolved once. */
export interface CorsPolicy {
  /** `*`: every origin, the same answer for all. */
  readonly anyOrigin: boolean;
  /** Exact origins, serialized as in Origin (empty with anyOrigin). */
  readonly origins: ReadonlySet<string>;
  readonly allowCredentials: boolean;
  /** Access-Control-Allow-Headers of a preflight's answer. */
  readonly allowHeaders: string;
  /** The same names in lower case, to check Access-Control-Request-Headers. */
  readonly allowHeaderSet: ReadonlySet<string>;
  /** Access-Control-Max-Age of a preflight's answer. */
  readonly maxAge: string;
}

/**
 * The policy for `options` (checked as normalizeCorsOptions does; CorsConfigError otherwise). The keys of
 * `restrictedApis` are allowed request headers, so that a page holding a key can send it; a key that is no
 * valid header name is left out (a browser could not send it anyway).
 */
export function createCorsPolicy(options: HttpCorsOptions, restrictedApis: RestrictedApis = {}): CorsPolicy {
  const resolved = normalizeCorsOptions(options);
  const keys = Object.values(restrictedApis).flatMap((r) =>
    r !== undefined && isHeaderName(r.key) ? [r.key] : [],
  );
  const headers = uniqueHeaderNames([
    ...DEFAULT_CORS_ALLOW_HEADERS,
    ...(resolved.allowHeaders ?? []),
    ...keys,
  ]);
  const anyOrigin = resolved.allowOrigins[0] === "*";
  return Object.freeze({
    anyOrigin,
    origins: new Set(anyOrigin ? [] : resolved.allowOrigins),
    allowCredentials: resolved.allowCredentials === true,
    allowHeaders: headers.join(", "),
    allowHeaderSet: new Set(headers.map((name) => name.toLowerCase())),
    maxAge: String(resolved.maxAgeSecs ?? DEFAULT_CORS_MAX_AGE_SECS),
  });
}

/**
 * The Access-Control-Allow-Origin an answer to a request from `origin` carries, or undefined when that
 * origin may not read it: `*` for every request (Origin or not) when any origin may, else the request's
 * own Origin when it is one of the allowed ones, compared exactly (a browser serializes it one way).
 */
export function allowedOrigin(policy: CorsPolicy, origin: string | undefined): string | undefined {
  if (policy.anyOrigin) return "*";
  return origin !== undefined && policy.origins.has(origin) ? origin : undefined;
}

/** What to answer to a preflight. */
export type PreflightDecision =
  | { readonly allow: true; readonly allowOrigin: string }
  | { readonly allow: false; readonly status: 403 | 404; readonly message: string };

/** A preflight's questions: its Origin, Access-Control-Request-Method and -Headers. */
export interface PreflightRequest {
  readonly origin: string;
  readonly method: string;
  readonly headers: string | undefined;
}

/**
 * Whether to let a page send the request a preflight asks about. `routeMethods` are the methods of the
 * endpoint at the preflight's path (undefined: no endpoint there, 404 as for any request to it). Depends on
 * the policy and the request alone: no model, queue or restriction is consulted.
 */
export function decidePreflight(
  policy: CorsPolicy,
  request: PreflightRequest,
  routeMethods: readonly string[] | undefined,
): PreflightDecision {
  const allowOrigin = allowedOrigin(policy, request.origin);
  if (allowOrigin === undefined)
    return refused(403, `origin ${shownValue(request.origin)} is not allowed (--http-cors-allow-origin)`);
  if (routeMethods === undefined) return { allow: false, status: 404, message: "Not Found" };
  if (!routeMethods.includes(request.method))
    return refused(403, `method ${shownValue(request.method)} is not allowed on this endpoint`);
  if (request.headers !== undefined) {
    for (const entry of request.headers.split(",")) {
      const name = entry.trim().toLowerCase();
      if (name !== "" && !policy.allowHeaderSet.has(name))
        return refused(403, `request header ${shownValue(name)} is not allowed (--http-cors-allow-headers)`);
    }
  }
  return { allow: true, allowOrigin };
}

function refused(status: 403, why: string): PreflightDecision {
  return { allow: false, status, message: `CORS preflight refused: ${why}` };
}

const GET: readonly string[] = Object.freeze(["GET"]);
const POST: readonly string[] = Object.freeze(["POST"]);
const GET_POST: readonly string[] = Object.freeze(["GET", "POST"]);

/** The methods an endpoint serves (router.ts methodAllowed), as constants. */
function methodsOf(route: Route): readonly string[] {
  if (methodAllowed(route, "GET")) return methodAllowed(route, "POST") ? GET_POST : GET;
  return POST;
}

/** Whether `req` is a CORS preflight: OPTIONS with Origin and Access-Control-Request-Method. */
export function isPreflight(req: IncomingMessage): boolean {
  return (
    req.method === "OPTIONS" &&
    req.headers.origin !== undefined &&
    req.headers["access-control-request-method"] !== undefined
  );
}

/**
 * Sets the CORS headers of an answer that is not a preflight's, before anything is written: every way the
 * front end answers (JSON, binary, compressed, errors) merges them into its own headers.
 */
export function setCorsResponseHeaders(policy: CorsPolicy, req: IncomingMessage, res: ServerResponse): void {
  if (!policy.anyOrigin) res.setHeader("Vary", "Origin");
  const allowOrigin = allowedOrigin(policy, req.headers.origin);
  if (allowOrigin === undefined) return;
  res.setHeader("Access-Control-Allow-Origin", allowOrigin);
  if (policy.allowCredentials) res.setHeader("Access-Control-Allow-Credentials", "true");
  res.setHeader("Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
}

/**
 * Answers the preflight `req` for `route` (undefined: no endpoint at its path) with 204 and the
 * Access-Control-Allow-* headers, or returns the error to answer instead, with none of them.
 */
export function answerPreflight(
  policy: CorsPolicy,
  route: Route | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): HttpError | undefined {
  if (!policy.anyOrigin) res.setHeader("Vary", "Origin");
  const methods = route === undefined ? undefined : methodsOf(route);
  const decision = decidePreflight(
    policy,
    {
      origin: req.headers.origin ?? "",
      method: String(req.headers["access-control-request-method"]),
      headers: req.headers["access-control-request-headers"],
    },
    methods,
  );
  if (!decision.allow) return new HttpError(decision.status, decision.message);
  const headers: OutgoingHttpHeaders = {
    "Access-Control-Allow-Origin": decision.allowOrigin,
    "Access-Control-Allow-Methods": methods!.join(", "),
    "Access-Control-Allow-Headers": policy.allowHeaders,
    "Access-Control-Max-Age": policy.maxAge,
  };
  if (policy.allowCredentials) headers["Access-Control-Allow-Credentials"] = "true";
  res.writeHead(204, headers);
  res.end();
  return undefined;
}

const RESPONSE_HEADERS = [
  "Vary",
  "Access-Control-Allow-Origin",
  "Access-Control-Allow-Credentials",
  "Access-Control-Expose-Headers",
] as const;

/**
 * The CORS header lines set on `res` (setCorsResponseHeaders), for an answer written straight to its socket
 * (the 408 of a body that does not arrive). Their values are the policy's own or a configured origin.
 */
export function corsHeaderLines(res: ServerResponse): string {
  let lines = "";
  for (const name of RESPONSE_HEADERS) {
    const value = res.getHeader(name);
    if (typeof value === "string") lines += `${name}: ${value}\r\n`;
  }
  return lines;
}
