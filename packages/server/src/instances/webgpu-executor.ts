/**
 * The main thread's side of the WebGPU executor: one worker thread for the whole process that owns every
 * WebGPU session and runs their operations one at a time (see webgpu-executor-worker for why). Each
 * KIND_GPU instance on WebGPU is a ModelInstance whose session lives in that thread; the pool and the
 * batcher see no difference from a worker instance.
 *
 * The thread starts with the first WebGPU session and ends when the last one is released, so a server
 * without WebGPU models runs no such thread. When the thread dies (a native crash), every WebGPU instance
 * dies with it: their batches fail with INTERNAL and their pools replace them on a new thread.
 */
import type { Worker } from "node:worker_threads";
import { ServerError } from "../core/server-error.js";
import { spawnThread } from "../core/spawn-thread.js";
import {
  type InstanceRun,
  type ModelInstance,
  type ModelInstanceOptions,
  type StartedInstance,
  sequenceRun,
} from "./instance-types.js";
import { keepOnnxRuntimeTelemetryOff } from "./onnxruntime-telemetry.js";
import type {
  FromExecutor,
  InstanceRunResult,
  SequenceStateSetup,
  SessionIo,
  ToExecutor,
} from "./worker-protocol.js";

interface PendingRun {
  readonly sessionId: number;
  readonly resolve: (result: InstanceRunResult) => void;
  readonly reject: (error: Error) => void;
}

interface SessionEntry {
  readonly name: string;
  /** Set while the session is being created. */
  opening?: { resolve: (io: SessionIo) => void; reject: (error: Error) => void } | undefined;
  /** Set while its release is under way. */
  released?: () => void;
  exitHandler?: ((reason: string) => void) | undefined;
}

interface ExecutorThread {
  readonly worker: Worker;
  /** Every session created or being created on the thread, by id. */
  readonly sessions: Map<number, SessionEntry>;
  readonly runs: Map<number, PendingRun>;
  /** Set once the thread ended or was asked to end. */
  ended: boolean;
  exitReason: string;
  /** Called when the thread has exited. */
  readonly afterExit: (() => void)[];
}

let current: ExecutorThread | undefined;
let nextSessionId = 1;
let nextRunId = 1;

/** How many WebGPU executor threads are running (tests check that none is left behind). */
let running = 0;
export function webGpuExecutorThreads(): number {
  return running;
}

function onMessage(thread: ExecutorThread, message: FromExecutor): void {
  switch (message.type) {
    case "opened":
    case "open-error": {
      const entry = thread.sessions.get(message.sessionId);
      const opening = entry?.opening;
      if (!entry || !opening) return;
      entry.opening = undefined;
      if (message.type === "opened") {
        opening.resolve({ inputs: message.inputs, outputs: message.outputs });
        return;
      }
      thread.sessions.delete(message.sessionId);
      const error = new ServerError("INVALID_ARG", message.message);
      // A thread left without sessions ends before the caller goes on (to its CPU fallback).
      if (retireIfIdle(thread)) thread.afterExit.push(() => opening.reject(error));
      else opening.reject(error);
      return;
    }
    case "released": {
      const entry = thread.sessions.get(message.sessionId);
      thread.sessions.delete(message.sessionId);
      // The last session's close ends when the thread has ended, so a closed server leaves no thread.
      if (retireIfIdle(thread)) thread.afterExit.push(() => entry?.released?.());
      else entry?.released?.();
      return;
    }
    case "result":
    case "run-error": {
      const run = thread.runs.get(message.id);
      thread.runs.delete(message.id);
      if (!run) return;
      if (message.type === "result") run.resolve(message);
      else run.reject(new ServerError("INTERNAL", message.message));
      return;
    }
  }
}

/**
 * Ends the thread once no session is left on it (true when it asked it to end); a later session starts a
 * new one.
 */
function retireIfIdle(thread: ExecutorThread): boolean {
  if (thread.ended || thread.sessions.size > 0) return false;
  thread.ended = true;
  if (current === thread) current = undefined;
  thread.worker.postMessage({ type: "shutdown" } satisfies ToExecutor);
  return true;
}

function onExit(thread: ExecutorThread, code: number): void {
  running--;
  if (current === thread) current = undefined;
  thread.ended = true;
  if (!thread.exitReason) thread.exitReason = `the WebGPU executor thread exited with code ${code}`;
  const reason = thread.exitReason;
  for (const run of thread.runs.values()) {
    const name = thread.sessions.get(run.sessionId)?.name ?? "?";
    run.reject(
      new ServerError("INTERNAL", `model instance '${name}' died while running the request: ${reason}`),
    );
  }
  thread.runs.clear();
  const sessions = [...thread.sessions.values()];
  thread.sessions.clear();
  for (const entry of sessions) {
    if (entry.opening) {
      entry.opening.reject(
        new ServerError("INTERNAL", `model instance '${entry.name}' failed to start: ${reason}`),
      );
    } else if (entry.released) {
      entry.released();
    } else {
      entry.exitHandler?.(reason);
    }
  }
  for (const callback of thread.afterExit.splice(0)) callback();
}

function executorThread(): ExecutorThread {
  if (current && !current.ended) return current;
  keepOnnxRuntimeTelemetryOff(); // as worker-instance.ts does, before the thread loads onnxruntime-node
  const worker = spawnThread("../instances/webgpu-executor-worker");
  running++;
  const thread: ExecutorThread = {
    worker,
    sessions: new Map(),
    runs: new Map(),
    ended: false,
    exitReason: "",
    afterExit: [],
  };
  worker.on("message", (message: FromExecutor) => onMessage(thread, message));
  worker.on("error", (error) => {
    thread.exitReason = error.message;
  });
  worker.on("exit", (code) => onExit(thread, code));
  current = thread;
  return thread;
}

/** Creates the instance's session on the WebGPU executor; rejects with onnxruntime's reason if it cannot. */
export async function startWebGpuInstance(options: ModelInstanceOptions): Promise<StartedInstance> {
  const { init } = options;
  const thread = executorThread();
  const sessionId = nextSessionId++;
  const entry: SessionEntry = { name: init.instanceName, exitHandler: options.onExit };
  thread.sessions.set(sessionId, entry);
  const io = await new Promise<SessionIo>((resolve, reject) => {
    entry.opening = { resolve, reject };
    thread.worker.postMessage({
      type: "open",
      sessionId,
      init: { ...init, provider: "webgpu" },
    } satisfies ToExecutor);
  });
  let closing: Promise<void> | undefined;
  /** The sequence states' setup the thread has for this session (it keeps the states: sent once). */
  let sentSetup: SequenceStateSetup | undefined;

  const instance: ModelInstance = {
    name: init.instanceName,
    setExitHandler(handler) {
      entry.exitHandler = handler;
    },
    run({ inputs, outputNames, transfer, queuedAtMs, crash, sequence }: InstanceRun) {
      if (closing || !thread.sessions.has(sessionId) || thread.ended) {
        const why = thread.exitReason ? `: ${thread.exitReason}` : "";
        return Promise.reject(
          new ServerError("INTERNAL", `model instance '${init.instanceName}' is not running${why}`),
        );
      }
      const id = nextRunId++;
      return new Promise<InstanceRunResult>((resolve, reject) => {
        thread.runs.set(id, { sessionId, resolve, reject });
        const setup = sequence !== undefined && sequence.setup !== sentSetup ? sequence.setup : undefined;
        const message: ToExecutor = {
          type: "run",
          sessionId,
          id,
          inputs,
          outputNames,
          ...(queuedAtMs !== undefined ? { queuedAtMs } : {}),
          ...(crash ? { crash: true } : {}),
          ...(sequence !== undefined ? { sequence: sequenceRun(sequence, setup) } : {}),
        };
        try {
          thread.worker.postMessage(message, [...transfer]);
          if (setup !== undefined) sentSetup = setup;
        } catch (error) {
          thread.runs.delete(id);
          reject(
            new ServerError(
              "INTERNAL",
              `failed to send the batch to '${init.instanceName}': ${String(error)}`,
            ),
          );
        }
      });
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const [id, run] of thread.runs) {
          if (run.sessionId !== sessionId) continue;
          thread.runs.delete(id);
          run.reject(
            new ServerError(
              "INTERNAL",
              `model instance '${init.instanceName}' died while running the request: ` +
                "the instance is being unloaded",
            ),
          );
        }
        if (!thread.sessions.has(sessionId)) return resolve();
        entry.released = resolve;
        thread.worker.postMessage({ type: "release", sessionId } satisfies ToExecutor);
      });
      return closing;
    },
  };
  return { instance, info: { ...io, provider: "webgpu" } };
}
