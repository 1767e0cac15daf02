// Runs every client example's main() against tbench-server with the bundled models, so they cannot rot.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type RunningServer, silentLogger, startServer } from "@tbench/server";
import { main as bytes } from "./bytes.js";
import { main as cancellation } from "./cancellation.js";
import { main as errorHandling } from "./error-handling.js";
import { main as grpcSimple } from "./grpc-simple.js";
import { main as grpcStreaming } from "./grpc-streaming.js";
import { main as imageClassification } from "./image-classification.js";
import { main as sequence } from "./sequence.js";
import { main as simple } from "./simple.js";

let server: RunningServer;
const quiet = () => {};

before(async () => {
  server = await startServer({
    modelRepository: new URL("models", import.meta.url).pathname,
    httpPort: 0,
    httpAddress: "127.0.0.1",
    metricsPort: false,
    grpcPort: 0,
    modelControlMode: "explicit",
    loadModels: [
      "simple",
      "resnet_like",
      "label_head",
      "ensemble_pipeline",
      "identity_bytes",
      "sequence_accumulator",
    ],
    logger: silentLogger,
  });
});
after(() => server?.close());

test("simple: sums and differences", async () => {
  const { sum, difference } = await simple(server.httpUrl, quiet);
  assert.deepEqual(
    sum,
    Array.from({ length: 16 }, (_, i) => i + 1),
  );
  assert.deepEqual(
    difference,
    Array.from({ length: 16 }, (_, i) => i - 1),
  );
});

test("image classification: top 3 agree with the raw scores; the ensemble answers a label", async () => {
  const { top3, argmax, ensembleLabel } = await imageClassification(server.httpUrl, quiet);
  assert.equal(top3.length, 3);
  assert.equal(Number(top3[0]!.split(":")[1]), argmax);
  // tbench-server does not serve ensembles yet: the example then skips that step
  const ensembleReady = await fetch(`${server.httpUrl}/v2/models/ensemble_pipeline/ready`).then((r) => r.ok);
  assert.equal(typeof ensembleLabel, ensembleReady ? "bigint" : "undefined");
});

test("bytes: strings round trip, binary and JSON", async () => {
  const result = await bytes(server.httpUrl, quiet);
  assert.deepEqual(result.binary, ["hello", "wörld", "", "🚀 tensors"]);
  assert.deepEqual(result.json, ["raw", "bytes"]);
  assert.deepEqual(result.byteLengths, [5, 6, 0, 12]);
});

test("error handling: each failure has its code", async () => {
  assert.deepEqual(await errorHandling(server.httpUrl, quiet), {
    unknownModel: "NOT_FOUND",
    badShapeClientSide: "INVALID_ARGUMENT",
    missingInputServerSide: "INVALID_ARGUMENT",
    noServer: "CONNECTION",
  });
});

test("cancellation and deadlines", async () => {
  const result = await cancellation(server.httpUrl, quiet);
  assert.equal(result.aborted, "ABORTED");
  assert.equal((result.abortReason as Error).message, "user cancelled");
  assert.equal(result.deadline, "DEADLINE_EXCEEDED");
  assert.equal(result.inTime, "1000 scores");
});

test("grpc-simple: the quick start over gRPC gives the same sums and differences", async () => {
  assert.deepEqual(await grpcSimple(server.grpcAddress!, quiet), await simple(server.httpUrl, quiet));
});

test("grpc-streaming: answers matched by id, the error answer yielded for its request", async () => {
  const { answers, inferred } = await grpcStreaming(server.grpcAddress!, quiet);
  assert.deepEqual(answers, { "req-0": 1, "req-1": 2, "req-2": 3, "req-3": "UNKNOWN", "req-4": 5 });
  assert.deepEqual(inferred, [9, 19, 29]);
});

test("sequence: two interleaved sequences each keep their running sum", async () => {
  assert.deepEqual(await sequence(server.httpUrl, quiet), {
    "1001": [1, 3, 6, 10],
    "session-a": [10, 30, 60],
  });
});
