/**
 * The CORS settings and decisions on their own (cors.ts): origins normalized as browsers send them,
 * hostile values refused with one line naming the setting, the form and the value, and what a preflight
 * is told for each origin, method and header. The answers on real sockets are cors-http.test.ts's.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  allowedOrigin,
  CorsConfigError,
  createCorsPolicy,
  DEFAULT_CORS_MAX_AGE_SECS,
  decidePreflight,
  normalizeCorsOptions,
  normalizeOrigin,
} from "./cors.js";

const refuses = (run: () => unknown, message: string) =>
  assert.throws(run, (e: unknown) => e instanceof CorsConfigError && e.message === message);

const EXPECTED_ORIGIN =
  "expected scheme://host[:port] with scheme http or https and no path, query, fragment or user name, or a lone '*'";

describe("origins", () => {
  test("serialized as a browser sends Origin: lower case, no default port, punycode, IPv6 in brackets", () => {
    assert.equal(normalizeOrigin("https://app.example:8443"), "https://app.example:8443");
    assert.equal(normalizeOrigin("HTTPS://App.Example:443"), "https://app.example");
    assert.equal(normalizeOrigin("http://localhost:80"), "http://localhost");
    assert.equal(normalizeOrigin("http://127.0.0.1:5173"), "http://127.0.0.1:5173");
    assert.equal(normalizeOrigin("https://bücher.example"), "https://xn--bcher-kva.example");
    assert.equal(normalizeOrigin("http://[::1]:8080"), "http://[::1]:8080");
    assert.equal(normalizeOrigin("*"), "*");
  });

  test("anything else is refused, naming the setting, the form and the value", () => {
    for (const bad of [
      "https://app.example/",
      "https://app.example/path",
      "https://app.example?x=1",
      "https://app.example#top",
      "https://user@app.example",
      "https://app.example\\x",
      "app.example",
      "//app.example",
      "https://",
      "https://app.example:99999",
      "https://app .example",
      "",
      " https://app.example",
    ])
      refuses(() => normalizeOrigin(bad, "--flag"), `invalid --flag '${bad}': ${EXPECTED_ORIGIN}`);
    refuses(
      () => normalizeOrigin("https://*.example.com", "--flag"),
      "invalid --flag 'https://*.example.com': expected an exact origin: no wildcard other than a lone '*'",
    );
    refuses(
      () => normalizeOrigin("**", "--flag"),
      "invalid --flag '**': expected an exact origin: no wildcard other than a lone '*'",
    );
    refuses(
      () => normalizeOrigin("null", "--flag"),
      "invalid --flag 'null': the opaque origin 'null' (sandboxed and file: pages) cannot be allowed: any page " +
        "can take it",
    );
    refuses(
      () => normalizeOrigin("chrome-extension://abc", "--flag"),
      "invalid --flag 'chrome-extension://abc': expected an http or https origin, not chrome-extension:",
    );
    // A value with a line break is echoed on one line, and a long one cut.
    refuses(
      () => normalizeOrigin("https://a.example\r\nX-Evil: 1", "--flag"),
      `invalid --flag 'https://a.example\\u000d\\u000aX-Evil: 1': ${EXPECTED_ORIGIN}`,
    );
    refuses(
      () => normalizeOrigin(`https://${"a".repeat(600)}.example`, "--flag"),
      `invalid --flag 'https://${"a".repeat(192)}… (616 characters)': expected an origin of at most 512 characters`,
    );
  });
});

describe("settings", () => {
  test("normalized, deduplicated and frozen; defaults filled in", () => {
    const options = normalizeCorsOptions({
      allowOrigins: ["https://a.example", "https://A.example:443", "http://b.example:8080"],
      allowHeaders: ["X-Request-Id", "x-request-id"],
    });
    assert.deepEqual(options, {
      allowOrigins: ["https://a.example", "http://b.example:8080"],
      allowHeaders: ["X-Request-Id"],
      maxAgeSecs: DEFAULT_CORS_MAX_AGE_SECS,
      allowCredentials: false,
    });
    assert.ok(Object.isFrozen(options) && Object.isFrozen(options.allowOrigins));
  });

  test("'*' stands alone, never with credentials; header names are tokens; max-age is bounded", () => {
    refuses(
      () => normalizeCorsOptions({ allowOrigins: [] }),
      "cors.allowOrigins: expected at least one origin, or '*'",
    );
    refuses(
      () => normalizeCorsOptions({ allowOrigins: ["*", "https://a.example"] }),
      "invalid cors.allowOrigins '*': it allows every origin, give it alone (also given: 'https://a.example')",
    );
    refuses(
      () => normalizeCorsOptions({ allowOrigins: ["*"], allowCredentials: true }),
      "cors.allowCredentials cannot be used with cors.allowOrigins '*': browsers refuse a credentialed answer " +
        "to a wildcard origin; list the exact origins instead",
    );
    const header =
      "expected a header name (an RFC 7230 token: letters, digits and !#$%&'+-.^_`|~; '*' is not accepted)";
    for (const bad of ["X Foo", "X-Foo:", "", "*", "Ünicode", "x\r\ny"])
      refuses(
        () => normalizeCorsOptions({ allowOrigins: ["*"], allowHeaders: [bad] }),
        `invalid cors.allowHeaders '${bad.replace("\r\n", "\\u000d\\u000a")}': ${header}`,
      );
    refuses(
      () =>
        normalizeCorsOptions({
          allowOrigins: ["*"],
          allowHeaders: Array.from({ length: 65 }, (_, i) => `h${i}`),
        }),
      "cors.allowHeaders: expected at most 64 header names, got 65",
    );
    for (const bad of [-1, 1.5, 86_401, Number.NaN])
      refuses(
        () => normalizeCorsOptions({ allowOrigins: ["*"], maxAgeSecs: bad }),
        `invalid cors.maxAgeSecs '${bad}': expected whole seconds from 0 to 86400`,
      );
    assert.equal(normalizeCorsOptions({ allowOrigins: ["*"], maxAgeSecs: 0 }).maxAgeSecs, 0);
    assert.equal(normalizeCorsOptions({ allowOrigins: ["*"], maxAgeSecs: 86_400 }).maxAgeSecs, 86_400);
  });
});

describe("decisions", () => {
  const exact = createCorsPolicy(
    { allowOrigins: ["https://app.example:8443"], allowHeaders: ["X-Request-Id"] },
    { "model-repository": { key: "admin-key", value: "s3cret" }, health: { key: "bad key", value: "v" } },
  );
  const any = createCorsPolicy({ allowOrigins: ["*"] });
  const INFER = ["POST"];

  test("the allowed headers: the defaults, the flag's, the restricted APIs' keys that are header names", () => {
    assert.equal(
      exact.allowHeaders,
      "Content-Type, Inference-Header-Content-Length, Content-Encoding, Accept-Encoding, traceparent, " +
        "tracestate, X-Request-Id, admin-key",
    );
    assert.equal(exact.maxAge, "600");
  });

  test("Access-Control-Allow-Origin: the exact origin echoed, or '*' for every request", () => {
    assert.equal(allowedOrigin(exact, "https://app.example:8443"), "https://app.example:8443");
    for (const other of [
      undefined,
      "https://app.example",
      "https://APP.example:8443",
      "https://app.example:8443, https://evil.example",
      "null",
    ])
      assert.equal(allowedOrigin(exact, other), undefined, String(other));
    assert.equal(allowedOrigin(any, "https://anything.example"), "*");
    assert.equal(allowedOrigin(any, "null"), "*");
    assert.equal(allowedOrigin(any, undefined), "*");
  });

  test("a preflight is allowed only for an allowed origin, a method of the endpoint and allowed headers", () => {
    const ask = (origin: string, method: string, headers: string | undefined, methods = INFER) =>
      decidePreflight(exact, { origin, method, headers }, methods);
    const origin = "https://app.example:8443";
    assert.deepEqual(ask(origin, "POST", "content-type,inference-header-content-length,traceparent"), {
      allow: true,
      allowOrigin: origin,
    });
    assert.deepEqual(ask(origin, "POST", "Admin-Key, X-REQUEST-ID"), { allow: true, allowOrigin: origin });
    assert.deepEqual(ask(origin, "POST", undefined), { allow: true, allowOrigin: origin });
    assert.deepEqual(ask("https://evil.example", "POST", undefined), {
      allow: false,
      status: 403,
      message:
        "CORS preflight refused: origin 'https://evil.example' is not allowed (--http-cors-allow-origin)",
    });
    assert.deepEqual(ask(origin, "PUT", undefined), {
      allow: false,
      status: 403,
      message: "CORS preflight refused: method 'PUT' is not allowed on this endpoint",
    });
    assert.deepEqual(ask(origin, "POST", "content-type, authorization"), {
      allow: false,
      status: 403,
      message:
        "CORS preflight refused: request header 'authorization' is not allowed (--http-cors-allow-headers)",
    });
    assert.deepEqual(decidePreflight(exact, { origin, method: "GET", headers: undefined }, undefined), {
      allow: false,
      status: 404,
      message: "Not Found",
    });
    // An origin not allowed learns nothing about paths.
    assert.equal(
      (
        decidePreflight(
          exact,
          { origin: "https://evil.example", method: "GET", headers: undefined },
          undefined,
        ) as {
          status: number;
        }
      ).status,
      403,
    );
  });
});
