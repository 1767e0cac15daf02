import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConnectionError, errorFromGrpcStatus, errorFromHttpStatus, UnknownError } from "@tbench/client";
import { GRPC_STATUS, TRITON_STATUS } from "@tbench/proto";
import { ValidationMismatchError } from "./infer-sender.js";
import { classifyError } from "./request-sender.js";

/** A gRPC failure as grpc-js reports it (ServiceError / StatusObject), kept as the client error's cause. */
function withGrpcCause<E extends Error>(error: E, code: number): E {
  Object.defineProperty(error, "cause", { value: { code, details: error.message, metadata: {} } });
  return error;
}

describe("classifyError", () => {
  it("HTTP: the client's code and the status number, as before", () => {
    assert.equal(classifyError(errorFromHttpStatus(503, "Exceeds maximum queue size")), "UNAVAILABLE (503)");
    assert.equal(classifyError(errorFromHttpStatus(400, "unexpected shape")), "INVALID_ARGUMENT (400)");
  });

  it("gRPC: the same first word for each of Triton's codes, then the gRPC status name", () => {
    for (const row of Object.values(TRITON_STATUS)) {
      const message = `a ${row.triton} failure`;
      const http = classifyError(errorFromHttpStatus(row.http, message));
      const grpcCode = GRPC_STATUS[row.grpc];
      const grpc = classifyError(withGrpcCause(errorFromGrpcStatus(grpcCode, message), grpcCode));
      assert.equal(grpc, `${row.clientFromGrpc} (grpc ${row.grpc})`, row.triton);
      assert.equal(http, `${row.clientFromHttp} (${row.http})`, row.triton);
      // HTTP folds ALREADY_EXISTS, CANCELLED and UNKNOWN into 400: only there may the kinds differ.
      if (row.http !== 400 || row.triton === "INVALID_ARG") {
        assert.equal(http.split(" ")[0], grpc.split(" ")[0], `${row.triton}: the same word both ways`);
      }
    }
    // A status carried on the error itself (number or name) is read too.
    assert.equal(
      classifyError(new UnknownError("x", { grpcStatus: GRPC_STATUS.DATA_LOSS })),
      "UNKNOWN (grpc DATA_LOSS)",
    );
  });

  it("no status: the code alone (a stream's error answer, client-side failures); else the name", () => {
    assert.equal(
      classifyError(new UnknownError("unexpected shape", { serverMessage: "unexpected shape" })),
      "UNKNOWN",
    );
    assert.equal(
      classifyError(new ConnectionError("refused", { cause: new Error("ECONNREFUSED") })),
      "CONNECTION",
    );
    // Node's errors have string codes: not mistaken for a gRPC status.
    assert.equal(
      classifyError(
        new ConnectionError("reset", { cause: Object.assign(new Error("x"), { code: "ECONNRESET" }) }),
      ),
      "CONNECTION",
    );
    assert.equal(classifyError(new ValidationMismatchError("output OUTPUT0[0]")), "VALIDATION");
    assert.equal(classifyError(new TypeError("boom")), "TypeError");
    assert.equal(classifyError("text"), "UNKNOWN");
  });
});
