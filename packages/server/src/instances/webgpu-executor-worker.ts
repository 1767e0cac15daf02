/**
 * The body of the WebGPU executor thread: it owns every WebGPU session of the process and does one thing
 * at a time (create, run or release), in the order the messages came.
 *
 * Why one thread: onnxruntime's WebGPU provider keeps one device context per process (context 0; another
 * context needs a WebGPU instance and device made by the caller, which Node cannot make), so every WebGPU
 * session shares one Dawn device and its command encoder. Two sessions run from two threads at once broke
 * that context here (a segmentation fault in each of 11 tries); one after another they are fine. With
 * every session in this thread and every operation awaited before the next starts, no two operations can
 * reach the device at once. A sequence model's implicit states are kept here too, per session
 * (sequence-state-store.ts), and dropped with it.
 */
import { parentPort } from "node:worker_threads";
import type * as ort from "onnxruntime-node";
import { createSequenceStateStore, type SequenceStateStore } from "./sequence-state-store.js";
import { createSession, messageOf, runBatch, sessionIo } from "./session-runner.js";
import type { FromExecutor, ToExecutor } from "./worker-protocol.js";

const port = parentPort;
if (!port) throw new Error("webgpu-executor-worker must run in a worker thread");

const sessions = new Map<number, ort.InferenceSession>();
/** The implicit states of each sequence model's session, made with its first sequence batch. */
const stores = new Map<number, SequenceStateStore>();

function storeOf(sessionId: number): SequenceStateStore {
  let store = stores.get(sessionId);
  if (store === undefined) {
    store = createSequenceStateStore();
    stores.set(sessionId, store);
  }
  return store;
}

function post(message: FromExecutor, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

async function handle(message: ToExecutor): Promise<void> {
  switch (message.type) {
    case "open": {
      try {
        const session = await createSession({ ...message.init, provider: "webgpu" });
        sessions.set(message.sessionId, session);
        post({ type: "opened", sessionId: message.sessionId, ...sessionIo(session) });
      } catch (error) {
        post({ type: "open-error", sessionId: message.sessionId, message: messageOf(error) });
      }
      return;
    }
    case "run": {
      if (message.crash) process.exit(70);
      const session = sessions.get(message.sessionId);
      if (!session) {
        post({
          type: "run-error",
          id: message.id,
          message: `WebGPU session ${message.sessionId} is not open`,
        });
        return;
      }
      const states = message.sequence !== undefined ? storeOf(message.sessionId) : undefined;
      const { reply, transfer } = await runBatch(session, message, states);
      post(reply, transfer);
      return;
    }
    case "release": {
      const session = sessions.get(message.sessionId);
      sessions.delete(message.sessionId);
      stores.delete(message.sessionId);
      await session?.release().catch(() => {});
      post({ type: "released", sessionId: message.sessionId });
      return;
    }
    case "shutdown":
      port!.close();
      return;
  }
}

// The queue: each message starts only when the previous one has finished.
let queue: Promise<void> = Promise.resolve();
port.on("message", (message: ToExecutor) => {
  queue = queue.then(() => handle(message));
});
