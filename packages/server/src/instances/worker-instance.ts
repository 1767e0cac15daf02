/**
 * A model instance that owns its own worker thread and one onnxruntime-node session in it (CPU, or CUDA
 * on one device), and a sequence model's states in that thread. Runs one batch at a time; when the worker
 * dies (crash, process.exit in native code, termination) every batch it held fails with INTERNAL and the
 * exit handler tells the pool, which replaces it.
 */
import { ServerError } from "../core/server-error.js";
import { spawnThread } from "../core/spawn-thread.js";
import { decodeResult, type SlotIo, slotIo } from "./batch-slot-codec.js";
import { createBatchSlots } from "./batch-slots.js";
import { createInstanceQueue } from "./instance-queue.js";
import {
  type InstanceRun,
  type ModelInstance,
  type ModelInstanceOptions,
  type StartedInstance,
  sequenceRun,
} from "./instance-types.js";
import { keepOnnxRuntimeTelemetryOff } from "./onnxruntime-telemetry.js";
import type {
  FromWorker,
  InstanceRunResult,
  InstanceWorkerData,
  SequenceStateSetup,
  SessionInit,
  ToWorker,
} from "./worker-protocol.js";

interface PendingRun {
  readonly resolve: (result: InstanceRunResult) => void;
  readonly reject: (error: Error) => void;
  /** The slot the batch was written into; undefined when it went as a RunMessage. */
  readonly slot: number | undefined;
}

/** Starts a worker on `provider`, waits until its session is created, returns it with the session's IO. */
export function startWorkerInstance(
  options: ModelInstanceOptions,
  provider: "cpu" | "cuda",
): Promise<StartedInstance> {
  const { init } = options;
  const sessionInit: SessionInit = { ...init, provider };
  const slots = createBatchSlots();
  const queue = createInstanceQueue();
  // Threads that load onnxruntime-node read the setting from the main thread's environment only.
  keepOnnxRuntimeTelemetryOff();
  const worker = spawnThread("../instances/instance-worker", {
    ...sessionInit,
    batchSlots: slots.buffer,
    queue: queue.buffer,
  } satisfies InstanceWorkerData);
  const sendMessage = (message: ToWorker, transfer: ArrayBuffer[] = []) =>
    queue.pushMessage(() => worker.postMessage(message, transfer));
  const pending = new Map<number, PendingRun>();
  /** The session's inputs and outputs by index, once it is ready: until then no batch is sent. */
  let io: SlotIo | undefined;
  let nextId = 1;
  let closing = false;
  let exited = false;
  let exitReason = "";
  let exitHandler = options.onExit;
  /** The sequence states' setup this thread has been sent (it keeps the states: sent once). */
  let sentSetup: SequenceStateSetup | undefined;

  const failPending = (reason: string) => {
    for (const { reject } of pending.values()) {
      reject(
        new ServerError(
          "INTERNAL",
          `model instance '${init.instanceName}' died while running the request: ${reason}`,
        ),
      );
    }
    pending.clear();
  };

  const instance: ModelInstance = {
    name: init.instanceName,
    setExitHandler(handler) {
      exitHandler = handler;
    },
    run({ inputs, outputNames, transfer, queuedAtMs, crash, sequence }: InstanceRun) {
      if (exited || closing) {
        return Promise.reject(
          new ServerError(
            "INTERNAL",
            `model instance '${init.instanceName}' is not running${exitReason ? `: ${exitReason}` : ""}`,
          ),
        );
      }
      const id = nextId++;
      return new Promise<InstanceRunResult>((resolve, reject) => {
        const queued = queuedAtMs !== undefined ? { queuedAtMs } : {};
        const setup = sequence !== undefined && sequence.setup !== sentSetup ? sequence.setup : undefined;
        const rows = sequence === undefined ? {} : { sequence: sequenceRun(sequence, setup) };
        let slot: number | undefined;
        try {
          // Small numeric batches cross as a slot's number; the rest (the crash hook, a states' setup) as a
          // RunMessage.
          if (!crash && transfer.length === 0 && io !== undefined && setup === undefined) {
            slot = slots.claim({ id, inputs, outputNames, ...queued, ...rows }, io);
          }
          pending.set(id, { resolve, reject, slot });
          if (slot !== undefined) {
            queue.push(slot);
          } else {
            const message: ToWorker = {
              type: "run",
              id,
              inputs,
              outputNames,
              ...queued,
              ...(crash ? { crash: true } : {}),
              ...rows,
            };
            sendMessage(message, [...transfer]);
            if (setup !== undefined) sentSetup = setup;
          }
        } catch (error) {
          pending.delete(id);
          if (slot !== undefined) slots.release(slot);
          reject(
            new ServerError(
              "INTERNAL",
              `failed to send the batch to '${init.instanceName}': ${String(error)}`,
            ),
          );
        }
      });
    },
    async close() {
      if (closing || exited) return;
      closing = true;
      failPending("the instance is being unloaded");
      const ended = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
      try {
        sendMessage({ type: "close" });
      } catch {
        // The queue is full only if the thread stopped taking work: the timer below ends it.
      }
      // A worker stuck in native code cannot read "close"; terminate it after a grace period.
      const timer = setTimeout(() => void worker.terminate(), 5000);
      await ended;
      clearTimeout(timer);
    },
  };

  /** The pending run `id`, no longer pending, its slot (if it had one) free again. */
  const take = (id: number): PendingRun | undefined => {
    const entry = pending.get(id);
    pending.delete(id);
    if (entry?.slot !== undefined) slots.release(entry.slot);
    return entry;
  };

  /** The result of the batch in `slot` is written there: read it out (copied), then free the slot. */
  const settleSlot = (slot: number) => {
    const id = slots.holder(slot);
    if (id === undefined || io === undefined) return;
    const entry = pending.get(id);
    // Its caller was failed already (the instance is closing): nothing to read.
    if (entry === undefined) return void take(id);
    let settled: ReturnType<typeof decodeResult> | Error;
    try {
      settled = decodeResult(slots.region(slot), io);
      if (settled.id !== id) throw new Error(`slot ${slot} holds the result of run ${settled.id}, not ${id}`);
    } catch (error) {
      settled = error as Error;
    }
    take(id);
    if (settled instanceof Error) {
      entry.reject(
        new ServerError(
          "INTERNAL",
          `model instance '${init.instanceName}' sent a result that cannot be read: ${settled.message}`,
        ),
      );
    } else {
      entry.resolve(settled.result);
    }
  };

  return new Promise((resolve, reject) => {
    let ready = false;
    worker.on("message", (message: FromWorker) => {
      if (typeof message === "number") {
        settleSlot(message);
        return;
      }
      switch (message.type) {
        case "ready":
          ready = true;
          io = slotIo(message);
          resolve({ instance, info: { inputs: message.inputs, outputs: message.outputs, provider } });
          return;
        case "load-error":
          closing = true;
          void worker.terminate();
          reject(new ServerError("INVALID_ARG", message.message));
          return;
        case "result": {
          const entry = take(message.id);
          entry?.resolve(message);
          return;
        }
        case "run-error": {
          const entry = take(message.id);
          entry?.reject(new ServerError("INTERNAL", message.message));
          return;
        }
      }
    });
    worker.on("error", (error) => {
      exitReason = error.message;
    });
    worker.on("exit", (code) => {
      exited = true;
      if (!exitReason) exitReason = `worker exited with code ${code}`;
      failPending(exitReason);
      if (!ready) {
        reject(
          new ServerError("INTERNAL", `model instance '${init.instanceName}' failed to start: ${exitReason}`),
        );
      } else if (!closing) {
        exitHandler?.(exitReason);
      }
    });
  });
}
