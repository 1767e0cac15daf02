import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { HTTP_STATUS_BY_ERROR, ServerError, type ServerErrorStatus } from "../core/server-error.js";
import { badRequest, describeError, errorBody, HttpError } from "./http-error.js";

describe("describeError", () => {
  // Triton's HttpCodeFromError (server src/http_server.cc, 24.01 and later), used on every endpoint.
  const triton: [ServerErrorStatus, number][] = [
    ["INTERNAL", 500],
    ["NOT_FOUND", 404],
    ["UNAVAILABLE", 503],
    ["UNSUPPORTED", 501],
    ["INVALID_ARG", 400],
    ["ALREADY_EXISTS", 400],
    ["CANCELLED", 400],
  ];

  test("a core error gets HttpCodeFromError's status and keeps its message", () => {
    for (const [code, status] of triton) {
      assert.deepEqual(describeError(new ServerError(code, `${code} happened`)), {
        status,
        message: `${code} happened`,
      });
    }
    assert.deepEqual(Object.entries(HTTP_STATUS_BY_ERROR).sort(), triton.map(([c, s]) => [c, s]).sort());
  });

  test("a wire error keeps its own status; anything else is a 500 naming the cause", () => {
    assert.deepEqual(describeError(badRequest("bad")), { status: 400, message: "bad" });
    assert.deepEqual(describeError(new HttpError(405, "Method Not Allowed")), {
      status: 405,
      message: "Method Not Allowed",
    });
    assert.deepEqual(describeError(new TypeError("x is undefined")), {
      status: 500,
      message: "internal error: x is undefined",
    });
    assert.deepEqual(describeError("odd"), { status: 500, message: "internal error: odd" });
  });
});

describe("HttpError and the error body", () => {
  test("an HttpError names itself and keeps its cause; the body is Triton's JSON, escaped", () => {
    const cause = new Error("parse");
    const error = new HttpError(413, "too large", { cause });
    assert.equal(error.name, "HttpError");
    assert.equal(error.cause, cause);
    assert.equal(String(error), "HttpError: too large");
    assert.equal(errorBody('a "quoted" word'), '{"error":"a \\"quoted\\" word"}');
  });
});
