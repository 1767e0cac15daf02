/**
 * The body of one model-instance worker thread (CPU or CUDA): owns one onnxruntime-node InferenceSession
 * (session creation and run() are synchronous native code that would block the main thread's event loop),
 * runs the batches the main thread sends and transfers the outputs back. WebGPU sessions never live here:
 * they all share one device context, owned by the WebGPU executor thread.
 */
import { parentPort, workerData } from "node:worker_threads";
import * as ort from "onnxruntime-node";
import { createSession, messageOf, runBatch, sessionIo } from "./session-runner.js";
import type { FromWorker, SessionInit, ToWorker } from "./worker-protocol.js";

const init = workerData as SessionInit;
const port = parentPort;
if (!port) throw new Error("instance-worker must run in a worker thread");

function post(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

async function main(): Promise<void> {
  if (init.crashOnLoad) process.exit(71);
  let session: ort.InferenceSession;
  try {
    // onnxruntime logs its own error when the CUDA provider is missing; the pool logs one clear line instead.
    if (init.provider === "cuda") ort.env.logLevel = "fatal";
    session = await createSession(init);
    post({ type: "ready", ...sessionIo(session) });
  } catch (error) {
    post({ type: "load-error", message: messageOf(error) });
    return;
  }
  port!.on("message", async (message: ToWorker) => {
    if (message.type === "close") {
      await session.release().catch(() => {});
      port!.close();
      return;
    }
    if (message.crash) process.exit(70);
    const { reply, transfer } = await runBatch(session, message);
    post(reply, transfer);
  });
}

void main();
