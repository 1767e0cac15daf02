import { Worker } from "node:worker_threads";
import type { LoadDriver, LoadLevel, RateSettings } from "./load-driver.js";
import type { SequenceSettings } from "./sequence-load.js";
import { decodeWindowPart, type EncodedWindowPart, mergeWindowParts } from "./window-part.js";
import type { WorkerCommand, WorkerInit, WorkerMessage } from "./worker-protocol.js";

/** Options of {@link createWorkerLoadDriver}. */
export interface WorkerLoadDriverOptions {
  workers: number;
  senderModule: string;
  senderSpec: unknown;
  rate: Omit<RateSettings, "rateShare" | "phase">;
  mode: LoadLevel["mode"];
  keepRequests: boolean;
  /** A sequence model's load, split between the workers (see {@link splitSequenceSettings}). */
  sequences?: SequenceSettings | undefined;
}

// Built, the entry is worker-entry.js next to this file. Run from source, it is a .ts file, and a worker
// thread does not get the parent's loader hooks, so the worker registers a TypeScript loader before
// importing it: the test runner's own (scripts/testing/ts-loader names itself in TBENCH_TS_LOADER_API),
// else tsx.
const fromSource = import.meta.url.endsWith(".ts");
const WORKER_ENTRY = new URL(`./worker-entry${fromSource ? ".ts" : ".js"}`, import.meta.url);

function startWorker(): Worker {
  if (!fromSource) return new Worker(WORKER_ENTRY);
  const loaderApi = process.env["TBENCH_TS_LOADER_API"] ?? "tsx/esm/api";
  const bootstrap = `import(${JSON.stringify(loaderApi)}).then(({ register }) => { register(); return import(${JSON.stringify(WORKER_ENTRY.href)}); })`;
  return new Worker(bootstrap, { eval: true });
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

interface WorkerHandle {
  worker: Worker;
  completed: number;
  pending: Map<number, { resolve(value: unknown): void; reject(error: Error): void }>;
}

/** Splits `total` into `parts` integers that differ by at most one (earlier parts get the remainder). */
export function splitEvenly(total: number, parts: number): number[] {
  const base = Math.floor(total / parts);
  const extra = total - base * parts;
  return Array.from({ length: parts }, (_, i) => base + (i < extra ? 1 : 0));
}

/**
 * A sequence model's settings for each of `parts` workers: each gets a share of `--num-of-sequences` and a
 * contiguous share of the id range (so no two workers ever use the same id; a range at least as large as
 * the concurrency, or the number of sequences, leaves each worker a range at least as large as its share),
 * and a seed of its own.
 */
export function splitSequenceSettings(settings: SequenceSettings, parts: number): SequenceSettings[] {
  const sequences = splitEvenly(settings.options.numOfSequences, parts);
  const ranges = splitEvenly(settings.options.idRange, parts);
  let idStart = settings.options.idStart;
  return ranges.map((idRange, i) => {
    const share: SequenceSettings = {
      ...settings,
      options: { ...settings.options, idStart, idRange, numOfSequences: sequences[i] ?? 0 },
      seed: settings.seed + i,
    };
    idStart += idRange;
    return share;
  });
}

/**
 * Spreads load over N worker threads, each with its own client and event loop: concurrency is split
 * evenly, a request rate is split into N schedules of rate/N (Poisson schedules with different seeds,
 * constant ones phase-shifted so the sum stays even). Windows are collected from every worker and merged.
 */
export async function createWorkerLoadDriver(options: WorkerLoadDriverOptions): Promise<LoadDriver> {
  const { workers: count } = options;
  const handles: WorkerHandle[] = [];
  const sequenceShares =
    options.sequences === undefined ? undefined : splitSequenceSettings(options.sequences, count);
  let nextId = 1;
  let closed = false;

  function call(handle: WorkerHandle, command: DistributiveOmit<WorkerCommand, "id">): Promise<unknown> {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      handle.pending.set(id, { resolve, reject });
      handle.worker.postMessage({ ...command, id });
    });
  }

  for (let i = 0; i < count; i++) {
    const worker = startWorker();
    const handle: WorkerHandle = { worker, completed: 0, pending: new Map() };
    worker.on("message", (message: WorkerMessage) => {
      if (message.type === "progress") {
        handle.completed = message.completed;
        return;
      }
      const waiter = handle.pending.get(message.id);
      if (waiter === undefined) return;
      handle.pending.delete(message.id);
      if (message.error !== undefined) waiter.reject(new Error(`load worker ${i}: ${message.error}`));
      else waiter.resolve(message.result);
    });
    const failAll = (error: Error) => {
      for (const waiter of handle.pending.values()) waiter.reject(error);
      handle.pending.clear();
    };
    worker.on("error", failAll);
    worker.on("exit", (code) => failAll(new Error(`load worker ${i} exited (code ${code})`)));
    handles.push(handle);
  }

  const all = (make: (handle: WorkerHandle, index: number) => Promise<unknown>) =>
    Promise.all(handles.map((handle, index) => make(handle, index)));

  try {
    await all((handle, index) => {
      const init: WorkerInit = {
        senderModule: options.senderModule,
        senderSpec: options.senderSpec,
        rate: {
          ...options.rate,
          seed: options.rate.seed + index,
          rateShare: 1 / count,
          phase: index / count,
        },
        mode: options.mode,
        keepRequests: options.keepRequests,
        firstIndex: index,
        indexStride: count,
        sequences: sequenceShares?.[index],
      };
      return call(handle, { type: "init", init });
    });
  } catch (error) {
    await Promise.all(handles.map((h) => h.worker.terminate()));
    throw error;
  }

  return {
    async apply(level) {
      if (level.mode === "concurrency") {
        const shares = splitEvenly(level.value, count);
        await all((handle, i) => call(handle, { type: "apply", level: { ...level, value: shares[i] ?? 0 } }));
      } else {
        await all((handle) => call(handle, { type: "apply", level }));
      }
    },
    async setBudget(requests) {
      const shares = Number.isFinite(requests) ? splitEvenly(requests, count) : handles.map(() => requests);
      await all((handle, i) => call(handle, { type: "budget", requests: shares[i] ?? 0 }));
    },
    async collect() {
      const parts = (await all((handle) => call(handle, { type: "collect" }))) as EncodedWindowPart[];
      for (const handle of handles) handle.completed = 0;
      return mergeWindowParts(parts.map(decodeWindowPart));
    },
    completedCount() {
      return handles.reduce((total, h) => total + h.completed, 0);
    },
    async stop() {
      await all((handle) => call(handle, { type: "stop" }));
    },
    async close() {
      if (closed) return;
      closed = true;
      await all((handle) => call(handle, { type: "close" }).catch(() => undefined));
      await Promise.all(handles.map((h) => h.worker.terminate()));
    },
  };
}
