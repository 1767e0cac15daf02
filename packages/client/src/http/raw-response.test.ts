import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decimalOf, isHeader, RawResponse } from "./raw-response.js";

const raw = (...pairs: string[]) => pairs.map((s) => Buffer.from(s, "latin1"));

describe("raw response headers", () => {
  test("looked up by lower-case name in any case, repeated values joined, absent is undefined", () => {
    const response = new RawResponse(
      503,
      raw(
        "Retry-After",
        "2",
        "X-Request-ID",
        "r1",
        "content-encoding",
        "gzip",
        "CONTENT-ENCODING",
        "deflate",
      ),
      Buffer.alloc(0),
    );
    assert.equal(response.header("retry-after"), "2");
    assert.equal(response.header("x-request-id"), "r1");
    assert.equal(response.header("content-encoding"), "gzip, deflate");
    assert.equal(response.header("content-length"), undefined);
    assert.equal(new RawResponse(200, ["X-A", "b"], Buffer.alloc(0)).header("x-a"), "b");
  });
  test("isHeader compares whole names, case-insensitively, Buffer or string", () => {
    assert.equal(isHeader(Buffer.from("Content-Length"), "content-length"), true);
    assert.equal(isHeader("CONTENT-LENGTH", "content-length"), true);
    assert.equal(isHeader(Buffer.from("content-lengtx"), "content-length"), false);
    assert.equal(isHeader(Buffer.from("content-type"), "content-length"), false);
    assert.equal(isHeader(Buffer.from("content_length"), "content-length"), false);
  });
  test("decimalOf reads digits and nothing else", () => {
    assert.equal(decimalOf(Buffer.from("0")), 0);
    assert.equal(decimalOf(Buffer.from("1048576")), 1048576);
    assert.ok(Number.isNaN(decimalOf(Buffer.from("12a"))));
    assert.ok(Number.isNaN(decimalOf(Buffer.from("-1"))));
    assert.ok(Number.isNaN(decimalOf(Buffer.alloc(0))));
    assert.equal(decimalOf("42"), 42);
  });
});
