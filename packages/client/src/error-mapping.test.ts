import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CLIENT_ERROR_CLASS,
  GRPC_STATUS,
  GRPC_STATUS_NAMES,
  HTTP_STATUS_CLIENT_KIND,
  TRITON_ERROR_CODES,
  TRITON_STATUS,
} from "@tbench/proto";
import { errorFromGrpcStatus, errorFromHttpStatus } from "./error-mapping.js";
import { ERROR_CODES } from "./errors.js";

// A message no refinement rule matches, so the status alone decides.
const PLAIN = "something went wrong";

test("each Triton code, over HTTP and over gRPC, raises the class and code @tbench/proto's table names", () => {
  for (const code of TRITON_ERROR_CODES) {
    const row = TRITON_STATUS[code];
    const overHttp = errorFromHttpStatus(row.http, PLAIN);
    assert.equal(overHttp.code, row.clientFromHttp, `${code} over HTTP`);
    assert.equal(overHttp.name, CLIENT_ERROR_CLASS[row.clientFromHttp]);
    assert.equal(overHttp.status, row.http);
    const overGrpc = errorFromGrpcStatus(GRPC_STATUS[row.grpc], PLAIN);
    assert.equal(overGrpc.code, row.clientFromGrpc, `${code} over gRPC`);
    assert.equal(overGrpc.name, CLIENT_ERROR_CLASS[row.clientFromGrpc]);
    assert.equal(overGrpc.serverMessage, PLAIN);
  }
});

test("every gRPC status and every listed HTTP status raises the table's class", () => {
  GRPC_STATUS_NAMES.forEach((_name, code) => {
    const error = errorFromGrpcStatus(code, PLAIN);
    assert.ok(ERROR_CODES.includes(error.code));
    assert.equal(error.name, CLIENT_ERROR_CLASS[error.code as keyof typeof CLIENT_ERROR_CLASS]);
  });
  for (const [status, kind] of Object.entries(HTTP_STATUS_CLIENT_KIND)) {
    const error = errorFromHttpStatus(Number(status), PLAIN);
    assert.equal(error.code, kind, `HTTP ${status}`);
    assert.equal(error.name, CLIENT_ERROR_CLASS[kind]);
  }
});
