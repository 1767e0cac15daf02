/**
 * The main thread's handle on one model instance: a worker thread that owns one onnxruntime-node session.
 * Runs one batch at a time; when the worker dies (crash, process.exit in native code, termination) every
 * batch it held fails with INTERNAL and `onExit` tells the pool, which replaces it.
 */
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { ServerError } from "../core/server-error.js";
import type {
  FromWorker,
  InstanceRunResult,
  ToWorker,
  WireTensor,
  WireTensorInfo,
  WorkerInit,
} from "./worker-protocol.js";

export type { InstanceRunResult };

/** One batch for an instance. */
export interface InstanceRun {
  readonly inputs: readonly WireTensor[];
  readonly outputNames: readonly string[];
  /** The input buffers to hand over (the caller must own them). */
  readonly transfer: readonly ArrayBuffer[];
  /** Test hook: the worker exits instead of running (a native crash). */
  readonly crash?: boolean;
}

/** What the session declares, reported when the worker is ready. */
export interface InstanceReadyInfo {
  readonly inputs: readonly WireTensorInfo[];
  readonly outputs: readonly WireTensorInfo[];
  readonly cudaFallback?: string;
}

/** One running model instance. */
export interface ModelInstance {
  /** Instance name as Triton names them: `<group>_<index>`. */
  readonly name: string;
  /** Runs one batch. */
  run(batch: InstanceRun): Promise<InstanceRunResult>;
  /** Releases the session and ends the worker (graceful); idempotent. */
  close(): Promise<void>;
  /** Replaces the handler called when the worker ends without close(). */
  setExitHandler(handler: (reason: string) => void): void;
}

export interface ModelInstanceOptions {
  readonly init: WorkerInit;
  /** Called once when the worker ends without close() having been called. */
  readonly onExit?: (reason: string) => void;
}

// The worker runs this package's own file: `.ts` under tsx (tests, dev), `.js` in dist.
const ownExtension = extname(fileURLToPath(import.meta.url));
const workerUrl = new URL(`./instance-worker${ownExtension}`, import.meta.url);

/**
 * Node 20 does not apply the parent's `--import tsx` loader hooks to a worker's entry module, so under tsx
 * a tiny bootstrap registers tsx inside the worker first, then imports the TypeScript worker.
 */
function spawnWorker(init: WorkerInit): Worker {
  if (ownExtension !== ".ts") return new Worker(workerUrl, { workerData: init });
  const tsxApi = import.meta.resolve("tsx/esm/api");
  const bootstrap =
    `import(${JSON.stringify(tsxApi)}).then((api) => { api.register(); ` +
    `return import(${JSON.stringify(workerUrl.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: init });
}

/** Starts a worker, waits until its session is created, and returns the instance with the session's IO. */
export function startModelInstance(
  options: ModelInstanceOptions,
): Promise<{ instance: ModelInstance; info: InstanceReadyInfo }> {
  const { init } = options;
  const worker = spawnWorker(init);
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
    run({ inputs, outputNames, transfer, crash }) {
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
          resolve({
            instance,
            info: {
              inputs: message.inputs,
              outputs: message.outputs,
              ...(message.cudaFallback !== undefined ? { cudaFallback: message.cudaFallback } : {}),
            },
          });
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
