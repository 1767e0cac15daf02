import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { errorFromGrpcStatus, errorFromHttpStatus } from "./error-mapping.js";
import {
  AbortedError,
  ClientClosedError,
  ConnectionError,
  DeadlineExceededError,
  ERROR_CODES,
  InferenceError,
  InternalServerError,
  InvalidArgumentError,
  MalformedResponseError,
  ModelNotFoundError,
  PermissionDeniedError,
  UnauthenticatedError,
  UnavailableError,
  UnknownError,
  UnsupportedError,
} from "./errors.js";

describe("error codes", () => {
  test("every code is documented in the README's error table", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const rows = new Set([...readme.matchAll(/^\|\s*`([A-Z_]+)`\s*\|/gm)].map((m) => m[1]));
    const undocumented = ERROR_CODES.filter((code) => !rows.has(code));
    assert.deepEqual(undocumented, [], `undocumented error codes: ${undocumented.join(", ")}`);
  });

  test("each class carries its code, keeps cause, status, request id and the server's message", () => {
    const cause = new Error("root");
    const cases: [InferenceError, string][] = [
      [new ModelNotFoundError("m", { cause }), "NOT_FOUND"],
      [new UnavailableError("m", { cause }), "UNAVAILABLE"],
      [new InvalidArgumentError("m", { cause }), "INVALID_ARGUMENT"],
      [new UnsupportedError("m", { cause }), "UNSUPPORTED"],
      [new InternalServerError("m", { cause }), "INTERNAL"],
      [new DeadlineExceededError("m", { cause }), "DEADLINE_EXCEEDED"],
      [new AbortedError("m", { cause }), "ABORTED"],
      [new ConnectionError("m", { cause }), "CONNECTION"],
      [new ClientClosedError("m", { cause }), "CLIENT_CLOSED"],
      [new MalformedResponseError("m", { cause }), "MALFORMED_RESPONSE"],
      [new UnauthenticatedError("m", { cause }), "UNAUTHENTICATED"],
      [new PermissionDeniedError("m", { cause }), "PERMISSION_DENIED"],
      [new UnknownError("m", { cause }), "UNKNOWN"],
    ];
    assert.deepEqual(cases.map(([, code]) => code).sort(), [...ERROR_CODES].sort());
    for (const [error, code] of cases) {
      assert.equal(error.code, code);
      assert.equal(error.cause, cause);
      assert.ok(error instanceof InferenceError && error instanceof Error);
      assert.equal(error.name, error.constructor.name);
    }
    const e = errorFromHttpStatus(500, "boom", { requestId: "r1" });
    assert.equal(e.status, 500);
    assert.equal(e.requestId, "r1");
    assert.equal(e.serverMessage, "boom");
    assert.equal(e.message, "boom");
  });
});

describe("HTTP status and message mapping", () => {
  const cases: [number, string, new (...args: never[]) => InferenceError][] = [
    [400, "Request for unknown model: 'nope' is not found", ModelNotFoundError],
    [404, "Request for unknown model: 'nope' has no available versions", ModelNotFoundError],
    [400, "Request for unknown model: 'nope' has no available versions", ModelNotFoundError],
    [404, "Request for unknown model: 'nope' version 3 is not found", ModelNotFoundError],
    [404, "no such region", ModelNotFoundError],
    [
      400,
      "unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16], got [1,8]",
      InvalidArgumentError,
    ],
    [400, "model 'simple' version 1 is not at ready state", UnavailableError],
    [503, "Exceeds maximum queue size", UnavailableError],
    [503, "Request timeout expired", DeadlineExceededError],
    [429, "slow down", UnavailableError],
    [409, "already exists", InvalidArgumentError],
    [499, "cancelled", AbortedError],
    [500, "onnxruntime failed", InternalServerError],
    [501, "cuda shared memory is not supported", UnsupportedError],
    [401, "who are you", UnauthenticatedError],
    [403, "not you", PermissionDeniedError],
    [504, "gateway timeout", DeadlineExceededError],
    [418, "teapot", InvalidArgumentError],
    [599, "odd", UnknownError],
    // Refinement by message (error-mapping.ts refineKind), each rule where it applies and where it must not:
    // Triton's other unknown-model words, names with spaces, multi-digit versions;
    [400, "model 'my model' version 12 is not found", ModelNotFoundError],
    [400, "model 'resnet50' is not found", ModelNotFoundError],
    // authentication answers stay what they are whatever the message says;
    [401, "Request for unknown model: 'x' is not found", UnauthenticatedError],
    [403, "Request for unknown model: 'x' is not found", PermissionDeniedError],
    // INTERNAL and UNSUPPORTED keep their kind against the timeout and not-ready words;
    [500, "Request timeout expired", InternalServerError],
    [501, "model 'simple' version 1 is not at ready state", UnsupportedError],
    // "does not support" makes a 503 (a feature built out) UNSUPPORTED, and nothing else;
    [503, "this build does not support tracing", UnsupportedError],
    [400, "the backend does not support this input", InvalidArgumentError],
    // a 404 whose words say "unavailable" is still a missing model, not a busy one.
    [404, "model version is unavailable", ModelNotFoundError],
  ];
  for (const [status, message, Class] of cases) {
    test(`${status} "${message}" -> ${Class.name}`, () => {
      const error = errorFromHttpStatus(status, message, { retryAfterMs: 1000 });
      assert.ok(error instanceof Class, `got ${error.constructor.name}`);
      assert.equal(error.status, status);
      assert.equal(error.serverMessage, message);
      if (error instanceof UnavailableError) assert.equal(error.retryAfterMs, 1000);
    });
  }
});

describe("gRPC status mapping (for the gRPC transport)", () => {
  test("codes map into the same classes as HTTP", () => {
    assert.ok(errorFromGrpcStatus(5, "x") instanceof ModelNotFoundError);
    assert.ok(
      errorFromGrpcStatus(3, "Request for unknown model: 'x' is not found") instanceof ModelNotFoundError,
    );
    assert.ok(
      errorFromGrpcStatus(14, "Request for unknown model: 'x' is not found") instanceof ModelNotFoundError,
    );
    assert.ok(errorFromGrpcStatus(14, "Exceeds maximum queue size") instanceof UnavailableError);
    assert.ok(errorFromGrpcStatus(8, "resource exhausted") instanceof UnavailableError);
    assert.ok(errorFromGrpcStatus(3, "bad shape") instanceof InvalidArgumentError);
    assert.ok(errorFromGrpcStatus(4, "deadline") instanceof DeadlineExceededError);
    assert.ok(errorFromGrpcStatus(1, "cancelled") instanceof AbortedError);
    assert.ok(errorFromGrpcStatus(12, "unimplemented") instanceof UnsupportedError);
    assert.ok(errorFromGrpcStatus(13, "internal") instanceof InternalServerError);
    assert.ok(errorFromGrpcStatus(16, "who") instanceof UnauthenticatedError);
    assert.ok(errorFromGrpcStatus(7, "no") instanceof PermissionDeniedError);
    assert.ok(errorFromGrpcStatus(2, "unknown") instanceof UnknownError);
    assert.equal(errorFromGrpcStatus(13, "x").status, undefined);
    assert.equal(errorFromGrpcStatus(13, "x").grpcStatus, 13);
    assert.equal(errorFromGrpcStatus(3, "Request for unknown model: 'x' is not found").grpcStatus, 3);
    assert.equal(errorFromHttpStatus(503, "x").grpcStatus, undefined);
  });
});
