/**
 * Owns every model name's state. Loads and unloads of one name run one at a time; a load builds the new
 * versions while the loaded ones keep serving and swaps only when the new load fully succeeded, so a reload
 * drops no request and a failed reload leaves the loaded versions serving (Triton's ModelLifeCycle does the
 * same). Requests accepted by a replaced or unloaded version are answered before its workers close. As in
 * Triton, loading a fully loaded model whose directory has not changed since (and with no override) does
 * nothing: the directory's fingerprint is taken before each load reads it.
 */
import type { ModelConfig } from "@tbench/proto";
import type { Logger } from "../core/logger.js";
import { ServerError } from "../core/server-error.js";
import { resolveModelDirectory } from "../repository/confinement.js";
import { fingerprintModelDirectory } from "./directory-fingerprint.js";
import { createKeyedSerializer } from "./keyed-serializer.js";
import { type LoaderContext, loadModel } from "./model-loader.js";
import { writeOverrideDirectory } from "./override-files.js";
import { closeModelEntry, loadFailures, type ModelEntry, readyVersionsOf } from "./version-state.js";

/** What a load may replace: the config (JSON override) and the model's files (`file:` parameters). */
export interface LoadRequest {
  readonly config?: ModelConfig;
  /** Path inside the model directory -> content; the model then loads from these files alone. */
  readonly files?: Readonly<Record<string, Uint8Array>>;
  /** Reload even when the directory is unchanged (an ensemble whose member was reloaded). */
  readonly force?: boolean;
}

export interface ModelLifecycle {
  /** The entry of `name`; undefined while the name is UNKNOWN. */
  get(name: string): ModelEntry | undefined;
  /** Every entry, in no particular order. */
  entries(): ModelEntry[];
  /**
   * Loads or reloads `name` and resolves with this attempt's outcome (loadFailures() tells whether it
   * succeeded). A failed attempt replaces nothing that serves. Rejects only when the name cannot be polled.
   */
  load(name: string, request?: LoadRequest): Promise<ModelEntry>;
  /**
   * Unloads `name` (answering what its versions accepted); a name that is not loaded is left as it is.
   * `forget`: the name becomes UNKNOWN afterwards (its directory left the repository).
   */
  unload(name: string, options?: { readonly forget?: boolean }): Promise<void>;
  /** Waits for loads in progress, then closes every model. Idempotent. */
  close(): Promise<void>;
  /** As close(), but requests still queued fail at once (UNAVAILABLE) instead of being answered. */
  destroy(): Promise<void>;
}

export interface ModelLifecycleOptions {
  /** The repository's real path. */
  readonly repository: string;
  readonly loader: LoaderContext;
  readonly logger: Logger;
}

/** Triton's answer for a name it cannot find in the repository (ModelRepositoryManager::LoadUnloadModel). */
export function pollFailure(name: string): ServerError {
  return new ServerError("INTERNAL", `failed to load '${name}', failed to poll from model repository`);
}

export function createModelLifecycle(options: ModelLifecycleOptions): ModelLifecycle {
  const { repository, loader, logger } = options;
  const models = new Map<string, ModelEntry>();
  /** The fingerprint of the directory each fully loaded model was loaded from (no override). */
  const loadedFrom = new Map<string, string>();
  const serializer = createKeyedSerializer();
  let closed = false;

  /** Loads `name` anew; resolves with the attempt and the fingerprint it was loaded from (none for overrides). */
  const attempt = async (
    name: string,
    request: LoadRequest,
  ): Promise<{ entry: ModelEntry; fingerprint?: string }> => {
    if (request.files && Object.keys(request.files).length > 0) {
      const override = await writeOverrideDirectory(name, request.files);
      const entry = await loadModel(loader, name, {
        directory: override.directory,
        ...(request.config ? { config: request.config } : {}),
      });
      if (entry.kind === "failed") {
        await override.release();
        return { entry };
      }
      return { entry: { ...entry, release: override.release } };
    }
    const directory = await resolveModelDirectory(repository, name);
    if (directory === undefined) throw pollFailure(name);
    if (request.config)
      return { entry: await loadModel(loader, name, { directory, config: request.config }) };
    const fingerprint = await fingerprintModelDirectory(directory);
    const previous = models.get(name);
    const unchanged = loadedFrom.get(name) === fingerprint && request.force !== true;
    if (previous && loadFailures(previous).length === 0 && unchanged) {
      return { entry: previous, fingerprint };
    }
    return { entry: await loadModel(loader, name, { directory }), fingerprint };
  };

  /**
   * An ensemble keeps what it learned of its members when it loaded (their shapes and batch sizes), so a
   * reloaded member reloads the ensembles that use it, as Triton's dependency graph does. They reload after
   * this load has finished (an ensemble's load waits for its members' loads).
   */
  const reloadDependents = (member: string) => {
    for (const entry of models.values()) {
      const latest = readyVersionsOf(entry).at(-1);
      if (latest?.state.name !== "READY") continue;
      const steps = latest.state.served.config.ensemble_scheduling?.step ?? [];
      if (!steps.some((step) => step.model_name === member)) continue;
      setImmediate(() => {
        if (closed) return;
        lifecycle.load(entry.name, { force: true }).catch((error: unknown) => {
          logger.error(
            `failed to reload ensemble '${entry.name}' after '${member}': ${(error as Error).message}`,
          );
        });
      });
    }
  };

  const unloaded = (name: string) => (version: string) =>
    logger.info(`successfully unloaded '${name}' version ${version}`);

  const shutDown = async (now: boolean): Promise<void> => {
    closed = true;
    // Loads in progress finish first (and close what they built, as the server is stopping).
    await serializer.idle();
    // Every call closes every entry: schedulers are idempotent, and destroy() cuts a close() in progress short.
    await Promise.all([...models.values()].map((entry) => closeModelEntry(entry, unloaded(entry.name), now)));
  };

  const lifecycle: ModelLifecycle = {
    get: (name) => models.get(name),
    entries: () => [...models.values()],
    load(name, request = {}) {
      return serializer.run(name, async () => {
        if (closed) throw new ServerError("UNAVAILABLE", "Server is stopping");
        const previous = models.get(name);
        const { entry: next, fingerprint } = await attempt(name, request);
        if (next === previous) return next;
        if (closed) {
          await closeModelEntry(next);
          throw new ServerError("UNAVAILABLE", "Server is stopping");
        }
        const serving = previous !== undefined && readyVersionsOf(previous).length > 0;
        if (serving && loadFailures(next).length > 0) {
          await closeModelEntry(next);
          logger.warn(`failed to reload '${name}': the loaded versions keep serving`);
          return next;
        }
        models.set(name, next);
        if (fingerprint !== undefined && loadFailures(next).length === 0) loadedFrom.set(name, fingerprint);
        else loadedFrom.delete(name);
        if (previous) await closeModelEntry(previous, unloaded(name));
        if (previous && loadFailures(next).length === 0) reloadDependents(name);
        return next;
      });
    },
    unload(name, unloadOptions) {
      return serializer.run(name, async () => {
        const entry = models.get(name);
        loadedFrom.delete(name);
        if (entry) await closeModelEntry(entry, unloaded(name));
        if (unloadOptions?.forget) models.delete(name);
      });
    },
    close: () => shutDown(false),
    destroy: () => shutDown(true),
  };
  return lifecycle;
}
