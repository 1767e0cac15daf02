/**
 * A model instance that owns its own worker thread and one onnxruntime-node session in it (CPU, or CUDA
 * on one device). Runs one batch at a time; when the worker dies (crash, process.exit in native code,
 * termination) every batch it held fails with INTERNAL and the exit handler tells the pool, which
 * replaces it.
 */
import { ServerError } from "../core/server-error.js";
import type { InstanceRun, ModelInstance, ModelInstanceOptions, StartedInstance } from "./instance-types.js";
import { spawnThread } from "./spawn-thread.js";
import type { FromWorker, InstanceRunResult, SessionInit, ToWorker } from "./worker-protocol.js";

/** Starts a worker on `provider`, waits until its session is created, returns it with the session's IO. */
export function startWorkerInstance(
  options: ModelInstanceOptions,
  provider: "cpu" | "cuda",
): Promise<StartedInstance> {
  const { init } = options;
  const sessionInit: SessionInit = { ...init, provider };
  const worker = spawnThread("instance-worker", sessionInit);
  const pending = new Map<number, { resolve: (r: InstanceRunResult) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let closing = false;
  let exited = false;
  let exitReason = "";
  let exitHandler = options.onExit;

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
    run({ inputs, outputNames, transfer, queuedAtMs, crash }: InstanceRun) {
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
        pending.set(id, { resolve, reject });
        const message: ToWorker = {
          type: "run",
          id,
          inputs,
          outputNames,
          ...(queuedAtMs !== undefined ? { queuedAtMs } : {}),
          ...(crash ? { crash: true } : {}),
        };
        try {
          worker.postMessage(message, [...transfer]);
        } catch (error) {
          pending.delete(id);
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
      worker.postMessage({ type: "close" } satisfies ToWorker);
      // A worker stuck in native code cannot read "close"; terminate it after a grace period.
      const timer = setTimeout(() => void worker.terminate(), 5000);
      await ended;
      clearTimeout(timer);
    },
  };

  return new Promise((resolve, reject) => {
    let ready = false;
    worker.on("message", (message: FromWorker) => {
      switch (message.type) {
        case "ready":
          ready = true;
          resolve({ instance, info: { inputs: message.inputs, outputs: message.outputs, provider } });
          return;
        case "load-error":
          closing = true;
          void worker.terminate();
          reject(new ServerError("INVALID_ARG", message.message));
          return;
        case "result": {
          const entry = pending.get(message.id);
          pending.delete(message.id);
          entry?.resolve(message);
          return;
        }
        case "run-error": {
          const entry = pending.get(message.id);
          pending.delete(message.id);
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
