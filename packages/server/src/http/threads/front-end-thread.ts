/**
 * One extra front-end thread of `--http-thread-count`, seen from the main thread: starts it, serves its
 * core calls (core-bridge.ts), and closes it. A thread that ends on its own (a crash) is logged and not
 * replaced: the main thread's front end and the other threads keep serving on the same socket, and the
 * requests the thread had in the core are cancelled.
 */
import type { Logger } from "../../core/logger.js";
import { spawnThread } from "../../core/spawn-thread.js";
import type { InferenceCore } from "../../core/types.js";
import { createCoreBridge } from "./core-bridge.js";
import type { FromFrontEndThread, FrontEndThreadInit, ToFrontEndThread } from "./thread-protocol.js";

/** Options of startFrontEndThread. */
export interface FrontEndThreadOptions {
  readonly init: FrontEndThreadInit;
  readonly core: InferenceCore;
  readonly logger: Logger;
  /** How long close() waits for the thread's graceful close before terminating it. */
  readonly closeLimitMs: number;
}

/** A started front-end thread. */
export interface FrontEndThread {
  /** Closes the thread's front end gracefully, then waits for the thread to end; the requests it served. */
  close(): Promise<number>;
  /** Ends the thread at once (startup failures). */
  destroy(): Promise<void>;
}

/** Starts one front-end thread; resolves once it listens, rejects (the thread ended) when it cannot. */
export async function startFrontEndThread(options: FrontEndThreadOptions): Promise<FrontEndThread> {
  const { init, logger } = options;
  const name = `HTTP front-end thread ${init.thread}`;
  const worker = spawnThread("../http/threads/http-thread-worker", init);
  const post = (message: ToFrontEndThread, transfer: ArrayBuffer[] = []) =>
    worker.postMessage(message, transfer);
  const bridge = createCoreBridge({ core: options.core, logger, post });
  let closing = false;
  let served = 0;
  let failure: string | undefined;
  const exited = new Promise<number>((resolve) => worker.once("exit", resolve));
  const started = new Promise<void>((resolve, reject) => {
    worker.on("message", (message: FromFrontEndThread) => {
      if (bridge.receive(message)) return;
      if (message.type === "started") resolve();
      else if (message.type === "failed") reject(new Error(`${name} could not start: ${message.message}`));
      else if (message.type === "closed") served = message.served;
    });
    worker.on("error", (error) => {
      failure = error.message;
      reject(new Error(`${name} could not start: ${error.message}`));
    });
    void exited.then((code) => reject(new Error(`${name} could not start: it exited with code ${code}`)));
  });
  void exited.then((code) => {
    bridge.abandon();
    if (!closing)
      logger.error(
        `${name} ended unexpectedly (${failure ?? `exit code ${code}`}); the other threads go on serving`,
      );
  });

  const destroy = async () => {
    closing = true;
    await worker.terminate();
    await exited;
  };
  try {
    await started;
  } catch (error) {
    await destroy();
    throw error;
  }

  let closed: Promise<number> | undefined;
  return {
    destroy,
    close() {
      closed ??= (async () => {
        closing = true;
        post({ type: "close" });
        // The thread's own close has the same grace period as the main thread's; past a margin, end it.
        const limit = setTimeout(() => void worker.terminate(), options.closeLimitMs);
        limit.unref();
        await exited;
        clearTimeout(limit);
        return served;
      })();
      return closed;
    },
  };
}
