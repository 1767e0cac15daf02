/**
 * Large JSON infer bodies decoded off the front end's thread (issue 36, item 6): JSON.parse and the
 * exact-integer reading of a 30 MiB body held the event loop for 3.9 s, stalling every other client on the
 * server. A body whose JSON is at least `minJsonBytes` is decoded by the same decodeInferRequest in one of a
 * few worker threads, so its request (and so its answer) is the one the front end's thread would have
 * decoded; smaller ones stay where they are, since the hop costs more than their parse. Threads start when
 * first needed; one that ends (a crash) fails its request with 500 and is replaced by the next request.
 */
import type { Worker } from "node:worker_threads";
import { spawnThread } from "../../core/spawn-thread.js";
import type { InferenceRequest } from "../../core/types.js";
import type { DecodedInferRequest, DecodeInferOptions, OutputEncoding } from "../infer-request-decoder.js";
import { fromPortableError, type PortableError, type PortableRequest } from "./portable-values.js";

/** Default smallest JSON decoded in a thread: a 1 MiB JSON.parse takes about a hundred ms or less. */
export const DEFAULT_JSON_DECODE_MIN_BYTES = 1024 * 1024;
/** Decode threads per front end: a few large bodies at once decode side by side, not one after another. */
export const JSON_DECODE_THREADS = 2;

/** What a decode thread starts with. */
export interface DecodeThreadInit {
  /**
   * Tests only: two Int32 cells, [arrivals, open]. Each decode adds one arrival, then waits in its thread
   * until `open` is not 0, so a test can hold a decode as long as it likes.
   */
  readonly gate: SharedArrayBuffer | undefined;
}

/** One body to decode: its bytes (transferred) and the options but the signal. */
export interface DecodeJob {
  readonly buffer: ArrayBuffer;
  readonly byteOffset: number;
  readonly byteLength: number;
  readonly options: Omit<DecodeInferOptions, "signal">;
}

/** What a decode thread answers. */
export type DecodeOutcome =
  | {
      readonly ok: true;
      readonly request: PortableRequest;
      readonly defaultBinary: boolean;
      readonly outputs: ReadonlyMap<string, OutputEncoding> | undefined;
    }
  | { readonly ok: false; readonly error: PortableError };

/** Options of createJsonDecodePool. */
export interface JsonDecodePoolOptions {
  /** Most threads. Default JSON_DECODE_THREADS. */
  readonly threadCount?: number;
  /** See DecodeThreadInit. */
  readonly gate?: SharedArrayBuffer;
}

/** The decode threads of one front end. */
export interface JsonDecodePool {
  /**
   * Decodes `body` in a thread. The body's memory is transferred: the caller must not use `body` after
   * (it is an unpooled buffer of its own, body-reader.ts).
   */
  decode(body: Buffer, options: DecodeInferOptions): Promise<DecodedInferRequest>;
  /** Ends the threads; decodes still pending fail. Idempotent. */
  close(): Promise<void>;
}

interface Job {
  readonly message: DecodeJob;
  readonly signal: DecodeInferOptions["signal"];
  resolve(decoded: DecodedInferRequest): void;
  reject(error: Error): void;
}

interface Slot {
  readonly worker: Worker;
  job: Job | undefined;
}

/** Creates the pool; no thread starts until the first decode. */
export function createJsonDecodePool(options: JsonDecodePoolOptions = {}): JsonDecodePool {
  const threadCount = options.threadCount ?? JSON_DECODE_THREADS;
  const init: DecodeThreadInit = { gate: options.gate };
  const slots = new Set<Slot>();
  const queue: Job[] = [];
  let closed = false;

  const run = (slot: Slot, job: Job) => {
    slot.job = job;
    slot.worker.postMessage(job.message, [job.message.buffer]);
  };
  const next = (slot: Slot) => {
    slot.job = undefined;
    const job = queue.shift();
    if (job !== undefined) run(slot, job);
  };
  const spawn = (): Slot => {
    const slot: Slot = { worker: spawnThread("../http/threads/json-decode-worker", init), job: undefined };
    let failure: string | undefined;
    slot.worker.on("message", (outcome: DecodeOutcome) => {
      const job = slot.job;
      next(slot);
      if (job === undefined) return;
      if (!outcome.ok) job.reject(fromPortableError(outcome.error));
      else
        job.resolve({
          request: {
            ...(outcome.request as InferenceRequest),
            ...(job.signal !== undefined ? { signal: job.signal } : {}),
          },
          defaultBinary: outcome.defaultBinary,
          outputs: outcome.outputs,
        });
    });
    slot.worker.on("error", (error) => {
      failure = error.message;
    });
    slot.worker.once("exit", (code) => {
      slots.delete(slot);
      slot.job?.reject(new Error(`the JSON decode thread ended (${failure ?? `exit code ${code}`})`));
      slot.job = undefined;
      // What waited for this thread goes to a new one.
      const waiting = queue.shift();
      if (waiting !== undefined && !closed) dispatch(waiting);
      else if (waiting !== undefined) waiting.reject(new Error("the HTTP front end is closed"));
    });
    slots.add(slot);
    return slot;
  };
  const dispatch = (job: Job) => {
    for (const slot of slots)
      if (slot.job === undefined) {
        run(slot, job);
        return;
      }
    if (slots.size < threadCount) run(spawn(), job);
    else queue.push(job);
  };

  let closing: Promise<void> | undefined;
  return {
    decode(body, { signal, ...rest }) {
      if (closed) return Promise.reject(new Error("the HTTP front end is closed"));
      return new Promise<DecodedInferRequest>((resolve, reject) =>
        dispatch({
          message: {
            buffer: body.buffer as ArrayBuffer,
            byteOffset: body.byteOffset,
            byteLength: body.byteLength,
            options: rest,
          },
          signal,
          resolve,
          reject,
        }),
      );
    },
    close() {
      closing ??= (async () => {
        closed = true;
        for (const job of queue.splice(0)) job.reject(new Error("the HTTP front end is closed"));
        await Promise.all([...slots].map((slot) => slot.worker.terminate()));
      })();
      return closing;
    },
  };
}
