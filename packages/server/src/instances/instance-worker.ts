/**
 * The body of one model-instance worker thread (CPU or CUDA): owns one onnxruntime-node InferenceSession
 * (session creation and run() are synchronous native code that would block the main thread's event loop),
 * runs the batches the main thread queues (instance-queue.ts; small ones written into the instance's slots,
 * batch-slots.ts) and sends the outputs back (into the slot, or transferred). A sequence model's implicit
 * states live here too, per slot of the instance's batcher (sequence-state-store.ts), and never go back.
 * WebGPU sessions never live here: they all share one device context, owned by the WebGPU executor thread.
 */
import { parentPort, receiveMessageOnPort, workerData } from "node:worker_threads";
import * as ort from "onnxruntime-node";
import { type SlotIo, slotIo } from "./batch-slot-codec.js";
import { slotRegion } from "./batch-slots.js";
import { instanceQueueReceiver, MESSAGE } from "./instance-queue.js";
import { createSequenceStateStore } from "./sequence-state-store.js";
import { createSession, messageOf, runBatch, runSlotBatch, sessionIo } from "./session-runner.js";
import type { FromWorker, InstanceWorkerData, ToWorker } from "./worker-protocol.js";

const init = workerData as InstanceWorkerData;
const port = parentPort;
if (!port) throw new Error("instance-worker must run in a worker thread");

function post(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

async function main(): Promise<void> {
  if (init.crashOnLoad) process.exit(71);
  let session: ort.InferenceSession;
  let io: SlotIo;
  try {
    // onnxruntime logs its own error when the CUDA provider is missing; the pool logs one clear line instead.
    if (init.provider === "cuda") ort.env.logLevel = "fatal";
    session = await createSession(init);
    const declared = sessionIo(session);
    io = slotIo(declared);
    post({ type: "ready", ...declared });
  } catch (error) {
    post({ type: "load-error", message: messageOf(error) });
    return;
  }
  // The thread takes its work from the instance's queue (instance-queue.ts), one batch at a time, and
  // sleeps in Atomics.wait between batches: nothing else runs on this thread's event loop while it sleeps.
  const queue = instanceQueueReceiver(init.queue);
  const states = createSequenceStateStore();
  for (;;) {
    const entry = queue.next();
    if (entry !== MESSAGE) {
      const region = slotRegion(init.batchSlots, entry);
      const { reply, transfer } = await runSlotBatch(session, region, io, entry, states);
      post(reply, transfer);
      continue;
    }
    const message = receiveMessageOnPort(port!)?.message as ToWorker | undefined;
    if (message === undefined) throw new Error("the instance's queue named a message that never came");
    if (message.type === "close") {
      states.clear();
      await session.release().catch(() => {});
      port!.close();
      return;
    }
    if (message.crash) process.exit(70);
    const { reply, transfer } = await runBatch(session, message, states);
    post(reply, transfer);
  }
}

void main();
