import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CLIENT_ERROR_CLASS,
  type ClientErrorKind,
  clientKindFromGrpcStatus,
  clientKindFromHttpStatus,
  GRPC_STATUS,
  GRPC_STATUS_NAMES,
  grpcStatusFromTriton,
  httpStatusFromTriton,
  TRITON_ERROR_CODES,
  TRITON_STATUS,
} from "./status-codes.js";

// Written out from Triton's sources, independently of the table: code, HttpCodeFromError (http_server.cc),
// GrpcStatusUtil::CodeToStatus (grpc/grpc_utils.cc) as a number, client kind over HTTP, over gRPC.
const TRITON: [string, number, number, ClientErrorKind, ClientErrorKind][] = [
  ["UNKNOWN", 400, 2, "INVALID_ARGUMENT", "UNKNOWN"],
  ["INTERNAL", 500, 13, "INTERNAL", "INTERNAL"],
  ["NOT_FOUND", 404, 5, "NOT_FOUND", "NOT_FOUND"],
  ["INVALID_ARG", 400, 3, "INVALID_ARGUMENT", "INVALID_ARGUMENT"],
  ["UNAVAILABLE", 503, 14, "UNAVAILABLE", "UNAVAILABLE"],
  ["UNSUPPORTED", 501, 12, "UNSUPPORTED", "UNSUPPORTED"],
  ["ALREADY_EXISTS", 400, 6, "INVALID_ARGUMENT", "INVALID_ARGUMENT"],
  ["CANCELLED", 400, 1, "INVALID_ARGUMENT", "ABORTED"],
];

test("every Triton code has one row, in TRITONSERVER_Error_Code order, with Triton's HTTP and gRPC status", () => {
  assert.deepEqual(
    TRITON_ERROR_CODES.map((c) => c),
    TRITON.map(([c]) => c),
  );
  assert.deepEqual(Object.keys(TRITON_STATUS), [...TRITON_ERROR_CODES]);
  for (const [code, http, grpc, fromHttp, fromGrpc] of TRITON) {
    const row = TRITON_STATUS[code as (typeof TRITON_ERROR_CODES)[number]];
    assert.equal(row.triton, code);
    assert.equal(httpStatusFromTriton(row.triton), http, `${code} over HTTP`);
    assert.equal(grpcStatusFromTriton(row.triton), grpc, `${code} over gRPC`);
    assert.equal(GRPC_STATUS[row.grpc], grpc);
    assert.equal(row.clientFromHttp, fromHttp, `client kind of ${code} over HTTP`);
    assert.equal(row.clientFromGrpc, fromGrpc, `client kind of ${code} over gRPC`);
    assert.equal(clientKindFromHttpStatus(http), fromHttp);
    assert.equal(clientKindFromGrpcStatus(grpc), fromGrpc);
  }
});

test("gRPC names and numbers are grpc/status.h's and invert each other", () => {
  assert.equal(GRPC_STATUS_NAMES.length, 17);
  assert.equal(GRPC_STATUS.OK, 0);
  assert.equal(GRPC_STATUS.UNIMPLEMENTED, 12);
  assert.equal(GRPC_STATUS.UNAUTHENTICATED, 16);
  for (const [code, name] of GRPC_STATUS_NAMES.entries()) assert.equal(GRPC_STATUS[name], code);
});

test("every gRPC status and every HTTP error status maps to a kind with a client class", () => {
  const kinds = new Set<ClientErrorKind>();
  for (let code = 0; code < GRPC_STATUS_NAMES.length; code++) kinds.add(clientKindFromGrpcStatus(code));
  for (let status = 400; status < 600; status++) kinds.add(clientKindFromHttpStatus(status));
  for (const kind of kinds) assert.ok(CLIENT_ERROR_CLASS[kind], `class for ${kind}`);
  assert.deepEqual([...kinds].sort(), Object.keys(CLIENT_ERROR_CLASS).sort());
  assert.equal(clientKindFromGrpcStatus(17), "UNKNOWN");
  assert.equal(clientKindFromGrpcStatus(-1), "UNKNOWN");
  assert.equal(clientKindFromHttpStatus(418), "INVALID_ARGUMENT");
  assert.equal(clientKindFromHttpStatus(599), "UNKNOWN");
  // Only 4xx statuses default to the caller's mistake; a redirect or a success code is not one.
  assert.equal(clientKindFromHttpStatus(302), "UNKNOWN");
  assert.equal(clientKindFromHttpStatus(399), "UNKNOWN");
  assert.equal(clientKindFromHttpStatus(499), "ABORTED");
});
