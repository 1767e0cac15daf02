/**
 * Poll mode (Triton's --model-control-mode=poll): every interval the repository is scanned, and a model
 * whose directory appeared, changed (config.pbtxt, a version directory, a model file: any path's size or
 * modification time) or disappeared is loaded, reloaded or unloaded through the lifecycle. A directory's
 * fingerprint is taken before its load reads it (model-lifecycle.ts), so a change made while it loads is
 * seen at the next scan. A reload builds the new versions while the old ones serve, and a failed one keeps
 * them serving and is tried again at the next scan (Triton reverts the model's timestamp after a failed load for the same reason).
 */
import type { Logger } from "../core/logger.js";
import { listModelNames } from "../repository/confinement.js";
import type { ModelLifecycle } from "./model-lifecycle.js";

export interface RepositoryPoller {
  /**
   * Scans once now (after any scan in progress) and applies what changed. The first scan loads the whole
   * repository (the server's startup in poll mode) and starts the periodic scans.
   */
  poll(): Promise<void>;
  /** Stops scanning; resolves when a scan in progress has finished. Idempotent. */
  close(): Promise<void>;
}

export interface RepositoryPollerOptions {
  /** The repository's real path. */
  readonly repository: string;
  readonly lifecycle: ModelLifecycle;
  readonly logger: Logger;
  /** Time between the end of one scan and the start of the next; 0 or less: scan only when poll() is called. */
  readonly intervalMs: number;
}

export function createRepositoryPoller(options: RepositoryPollerOptions): RepositoryPoller {
  const { repository, lifecycle, logger } = options;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let closed = false;
  let started = false;

  const scan = async (): Promise<void> => {
    const names = await listModelNames(repository).catch((error: unknown) => {
      logger.error(`failed to poll model repository '${repository}': ${String(error)}`);
      return undefined;
    });
    if (names === undefined) return;
    const present = new Set(names);
    // The lifecycle reloads a model only when its directory changed since it loaded (or its last load
    // failed, which is then tried again, as Triton does), so each present model is simply asked for.
    const work: Promise<unknown>[] = names.map((name) =>
      lifecycle.load(name).catch((error: unknown) => {
        logger.error(`failed to poll model '${name}': ${(error as Error).message}`);
      }),
    );
    for (const entry of lifecycle.entries()) {
      if (!present.has(entry.name)) work.push(lifecycle.unload(entry.name, { forget: true }));
    }
    await Promise.all(work);
  };

  /** Runs a scan after the one in progress (scans never overlap). */
  const enqueue = (): Promise<void> => {
    running = running.then(scan, scan);
    return running;
  };

  const schedule = () => {
    if (closed || options.intervalMs <= 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      void enqueue().finally(schedule);
    }, options.intervalMs);
    timer.unref();
  };

  return {
    poll() {
      const scanned = enqueue();
      if (!started) {
        started = true;
        void scanned.finally(schedule);
      }
      return scanned;
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running.catch(() => undefined);
    },
  };
}
