import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConnectionError, InvalidArgumentError, UnavailableError } from "./errors.js";
import { DEFAULT_BACKOFF, isRetryable, parseRetryAfterMs, retryDelayMs } from "./retry-policy.js";

describe("isRetryable", () => {
  test("connection failures before sending: always; after sending: idempotent calls only", () => {
    assert.equal(isRetryable(new ConnectionError("x", { requestSent: false }), false), true);
    assert.equal(isRetryable(new ConnectionError("x", { requestSent: true }), false), false);
    assert.equal(isRetryable(new ConnectionError("x", { requestSent: true }), true), true);
  });
  test("UNAVAILABLE: idempotent calls only; other errors never", () => {
    assert.equal(isRetryable(new UnavailableError("busy"), true), true);
    assert.equal(isRetryable(new UnavailableError("busy"), false), false);
    assert.equal(isRetryable(new InvalidArgumentError("bad"), true), false);
    assert.equal(isRetryable(new Error("other"), true), false);
  });
});

describe("retryDelayMs", () => {
  test("exponential, capped, with jitter taking up to `jitter` of the wait", () => {
    const none = () => 0;
    const most = () => 1;
    assert.deepEqual(
      [0, 1, 2, 3].map((r) => retryDelayMs(r, DEFAULT_BACKOFF, undefined, none)),
      [100, 200, 400, 800],
    );
    assert.equal(retryDelayMs(10, DEFAULT_BACKOFF, undefined, none), 5000);
    assert.equal(retryDelayMs(1, DEFAULT_BACKOFF, undefined, most), 160);
  });
  test("retry-after wins over backoff, capped at maxDelayMs", () => {
    assert.equal(retryDelayMs(0, DEFAULT_BACKOFF, new UnavailableError("x", { retryAfterMs: 2000 })), 2000);
    assert.equal(retryDelayMs(0, DEFAULT_BACKOFF, new UnavailableError("x", { retryAfterMs: 60_000 })), 5000);
  });
});

describe("parseRetryAfterMs", () => {
  test("delay-seconds, HTTP-date, junk", () => {
    assert.equal(parseRetryAfterMs("3"), 3000);
    assert.equal(parseRetryAfterMs("0.5"), 500);
    const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
    assert.equal(parseRetryAfterMs("Wed, 21 Oct 2015 07:28:02 GMT", now), 2000);
    assert.equal(parseRetryAfterMs("Wed, 21 Oct 2015 07:27:00 GMT", now), 0);
    assert.equal(parseRetryAfterMs("soon"), undefined);
    assert.equal(parseRetryAfterMs(undefined), undefined);
    assert.equal(parseRetryAfterMs(["4", "5"]), 4000);
    // Whole numbers of any length and decimals of any length, spaces around them trimmed; a number inside
    // other text is junk, not a delay (nor a date).
    assert.equal(parseRetryAfterMs("12"), 12000);
    assert.equal(parseRetryAfterMs("1.25"), 1250);
    assert.equal(parseRetryAfterMs(" 5 "), 5000);
    assert.equal(parseRetryAfterMs("x5"), undefined);
    assert.equal(parseRetryAfterMs("5 apples"), undefined);
  });
});
