/**
 * The body of one JSON decode thread (json-decode-pool.ts): decodes each infer body it is handed with the
 * same decodeInferRequest the front end uses, and posts the request back with its tensors transferred, or
 * the error as it crosses threads (thread-protocol.ts).
 */
import { parentPort, workerData } from "node:worker_threads";
import { decodeInferRequest } from "../infer-request-decoder.js";
import type { DecodeJob, DecodeOutcome, DecodeThreadInit } from "./json-decode-pool.js";
import { portableRequest, toPortableError } from "./portable-values.js";

const port = parentPort!;
const { gate } = workerData as DecodeThreadInit;

/** Tests hold each decode here (an arrival count, then wait until the gate opens). */
function passGate(): void {
  if (gate === undefined) return;
  const cells = new Int32Array(gate);
  Atomics.add(cells, 0, 1);
  while (Atomics.load(cells, 1) === 0) Atomics.wait(cells, 1, 0);
}

port.on("message", (job: DecodeJob) => {
  passGate();
  let outcome: DecodeOutcome;
  const transfer: ArrayBuffer[] = [];
  try {
    const body = Buffer.from(job.buffer, job.byteOffset, job.byteLength);
    const decoded = decodeInferRequest(body, { ...job.options, signal: undefined });
    outcome = {
      ok: true,
      request: portableRequest(decoded.request, transfer),
      defaultBinary: decoded.defaultBinary,
      outputs: decoded.outputs,
    };
  } catch (error) {
    outcome = { ok: false, error: toPortableError(error) };
  }
  port.postMessage(outcome, transfer);
});
