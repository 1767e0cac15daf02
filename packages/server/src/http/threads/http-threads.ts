/**
 * `--http-thread-count N`: the HTTP front end in N threads feeding one core, as Triton serves HTTP from
 * several threads. The main thread runs its front end as with one thread; each of the N-1 others runs the
 * same createHttpFrontEnd (router, codecs, limits, timeouts, restricted APIs, TLS) on its own dup of the
 * listening socket, and the kernel hands each new connection to whichever thread accepts first. Their core
 * is the main thread's, reached by message (core-bridge.ts): one scheduler, one set of statistics and
 * metrics. One thread (the default) is exactly the single front end, with no thread and no cost.
 */
import type { Logger } from "../../core/logger.js";
import type { InferenceCore } from "../../core/types.js";
import { createBufferCounter } from "../buffer-budget.js";
import {
  CLOSE_GRACE_MS,
  createHttpFrontEnd,
  type HttpFrontEnd,
  type HttpFrontEndOptions,
} from "../http-server.js";
import { type FrontEndThread, startFrontEndThread } from "./front-end-thread.js";

/** Most front-end threads: a bound well past any gain (each one is a V8 isolate and a message hop). */
export const MAX_HTTP_THREAD_COUNT = 64;

/** Options of startHttpFrontEnd. */
export interface HttpFrontEndsOptions extends HttpFrontEndOptions {
  readonly core: InferenceCore;
  readonly logger: Logger;
  /**
   * Threads serving HTTP, 1 to 64. Default 1. The other threads use the system clock, and each applies
   * maxConnections to its own connections.
   */
  readonly threadCount?: number;
}

/** Starts the HTTP front end in `threadCount` threads; resolves once every thread listens. */
export async function startHttpFrontEnd(options: HttpFrontEndsOptions): Promise<HttpFrontEnd> {
  const threadCount = options.threadCount ?? 1;
  if (!Number.isInteger(threadCount) || threadCount < 1 || threadCount > MAX_HTTP_THREAD_COUNT)
    throw new RangeError(
      `threadCount must be a whole number from 1 to ${MAX_HTTP_THREAD_COUNT}, got ${String(threadCount)}`,
    );
  // One count for the whole server: every thread draws on the same --http-max-buffered-bytes.
  const bufferCounter = options.bufferCounter ?? createBufferCounter();
  const main = await createHttpFrontEnd({ ...options, bufferCounter });
  if (threadCount === 1) return main;
  const fd = main.listeningFd;
  if (fd === undefined) {
    await main.close();
    throw new Error("the HTTP listening socket has no file descriptor to share with front-end threads");
  }
  const { core, logger, clock: _clock, listenHandle: _handle, threadCount: _count, ...rest } = options;
  const settings = { ...rest, bufferCounter };
  const starting = Array.from({ length: threadCount - 1 }, (_, i) =>
    startFrontEndThread({
      init: { thread: i + 1, fd, options: settings },
      core,
      logger,
      closeLimitMs: (options.closeGraceMs ?? CLOSE_GRACE_MS) + 5_000,
    }),
  );
  const results = await Promise.allSettled(starting);
  const threads = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed !== undefined) {
    await Promise.all(threads.map((thread) => thread.destroy()));
    await main.close();
    throw failed.reason;
  }
  logger.verbose(`HTTP front end serving in ${threadCount} threads`);
  return withThreads(main, threads, logger);
}

function withThreads(
  main: Awaited<ReturnType<typeof createHttpFrontEnd>>,
  threads: readonly FrontEndThread[],
  logger: Logger,
): HttpFrontEnd {
  let closed: Promise<void> | undefined;
  return {
    url: main.url,
    port: main.port,
    // The main thread's connections only: the others' cannot be read synchronously, and nothing but the
    // front end's own tests reads this (slow clients are cut by each thread's send timeout).
    pendingResponseBytes: () => main.pendingResponseBytes(),
    // One count for every thread (the counter is shared).
    bufferedBytes: () => main.bufferedBytes(),
    close() {
      closed ??= (async () => {
        const [, ...served] = await Promise.all([main.close(), ...threads.map((thread) => thread.close())]);
        const counts = [main.requestsServed(), ...served];
        logger.verbose(`HTTP front-end threads closed; requests served by each: ${counts.join(", ")}`);
      })();
      return closed;
    },
  };
}
