/**
 * Triton's model control (--model-control-mode) and model repository API: which models load at startup
 * (none and poll: every model in the repository; explicit: --load-model's), the poller that follows the
 * repository in poll mode, the repository index, and load/unload, which only explicit mode allows. Names
 * given to load are checked as Triton checks them before anything on disk is looked at.
 */
import type { Logger } from "../core/logger.js";
import { ServerError } from "../core/server-error.js";
import type { InferenceCore, RepositoryIndexEntry } from "../core/types.js";
import { ensembleMemberNames } from "../ensemble/ensemble-dependencies.js";
import { isPlainModelName, listModelNames } from "../repository/confinement.js";
import { type ModelLifecycle, pollFailure } from "./model-lifecycle.js";
import { parseConfigOverride } from "./model-loader.js";
import { createRepositoryPoller, type RepositoryPoller } from "./repository-poller.js";
import { loadFailures, type ModelEntry, readyVersionsOf, versionsOf } from "./version-state.js";

/**
 * How models are loaded (Triton's --model-control-mode): none loads every model at startup, poll also
 * follows the repository's changes, explicit loads what --load-model names and then what the API asks.
 */
export type ModelControlMode = "none" | "poll" | "explicit";

/**
 * The repository API of the core: the index (every model directory, with the state of those the server
 * holds), load and unload (explicit mode only; rejected with Triton's errors, a load's reasons included).
 */
export interface ModelControl extends Pick<InferenceCore, "repositoryIndex" | "loadModel" | "unloadModel"> {
  /** True when every model loaded at startup loaded with all of its versions READY. */
  startupModelsReady(): boolean;
  /** Stops the poller (poll mode). Idempotent. */
  close(): Promise<void>;
}

export interface ModelControlOptions {
  /** The repository's real path. */
  readonly repository: string;
  readonly lifecycle: ModelLifecycle;
  readonly logger: Logger;
  readonly mode: ModelControlMode;
  /** Explicit mode: the models loaded at startup (--load-model); "*" loads all. */
  readonly loadModels?: readonly string[] | undefined;
  /** Poll mode: seconds between scans (--repository-poll-secs). */
  readonly repositoryPollSecs: number;
  /** Startup fails (rejects) when a startup model does not fully load (--exit-on-error). */
  readonly exitOnError: boolean;
  /** True once the server is stopping: loads are refused. */
  isStopping(): boolean;
}

/** Triton's refusal of repository load/unload outside explicit mode (its message says "polling" for none too). */
const MODEL_CONTROL_DISABLED = "explicit model load / unload is not allowed if polling is enabled";

/**
 * Triton's check of a name given to the load API (ModelRepositoryManager, ValidateModelName): INVALID_ARG
 * for an empty or blank name or one holding ".." or "/". It looks at the name alone, so its answer says
 * nothing about what exists on disk.
 */
function checkLoadName(name: string): void {
  if (name === "") throw new ServerError("INVALID_ARG", "model name must not be empty");
  if (name.trim() === "") {
    throw new ServerError("INVALID_ARG", "model name must not contain only whitespace characters");
  }
  if (name.includes("..") || name.includes("/")) {
    throw new ServerError(
      "INVALID_ARG",
      `invalid model name '${name}', model name must not contain path traversal characters`,
    );
  }
}

/** True when the model loaded and every one of its versions is READY. */
function fullyReady(entry: ModelEntry | undefined): boolean {
  return entry !== undefined && entry.kind === "loaded" && loadFailures(entry).length === 0;
}

/** Loads the startup models as the mode says (poll mode: the poller's first scan), then serves the API. */
export async function startModelControl(options: ModelControlOptions): Promise<ModelControl> {
  const { repository, lifecycle, logger, mode } = options;
  const listRepository = (): Promise<string[]> =>
    listModelNames(repository).catch((error: unknown) => {
      throw new ServerError(
        "INVALID_ARG",
        `failed to read model repository '${repository}': ${String(error)}`,
      );
    });

  const all = await listRepository();
  let startupModels: string[] = all;
  if (mode === "explicit") {
    const wanted = options.loadModels ?? [];
    startupModels = wanted.includes("*") ? all : [...new Set(wanted)];
  }
  let poller: RepositoryPoller | undefined;
  if (mode === "poll") {
    // The poller's first scan is the startup load: it fingerprints each directory before loading it.
    poller = createRepositoryPoller({
      repository,
      lifecycle,
      logger,
      intervalMs: options.repositoryPollSecs * 1000,
    });
    await poller.poll();
  } else {
    await Promise.all(
      startupModels.map((name) =>
        lifecycle.load(name).catch((error: unknown) => {
          logger.error(`failed to load '${name}': ${(error as Error).message}`);
        }),
      ),
    );
  }
  if (options.exitOnError) {
    const failed = startupModels.filter((name) => !fullyReady(lifecycle.get(name)));
    if (failed.length > 0) {
      await poller?.close();
      throw new ServerError(
        "INTERNAL",
        `failed to load all models: ${failed.map((n) => `'${n}'`).join(", ")}`,
      );
    }
  }

  return {
    startupModelsReady: () => startupModels.every((name) => fullyReady(lifecycle.get(name))),
    async repositoryIndex(indexOptions) {
      const rows: RepositoryIndexEntry[] = [];
      for (const name of await listRepository()) {
        const entry = lifecycle.get(name);
        if (!entry) {
          if (!indexOptions?.readyOnly) rows.push({ name });
          continue;
        }
        if (entry.kind === "failed") {
          if (!indexOptions?.readyOnly) rows.push({ name, state: "UNAVAILABLE", reason: entry.reason });
          continue;
        }
        for (const v of versionsOf(entry)) {
          if (indexOptions?.readyOnly && v.state.name !== "READY") continue;
          const reason = v.state.name === "UNAVAILABLE" ? v.state.reason : "";
          rows.push({ name, version: v.version, state: v.state.name, reason });
        }
      }
      return rows;
    },
    async loadModel(model, loadOptions) {
      if (mode !== "explicit") throw new ServerError("UNAVAILABLE", MODEL_CONTROL_DISABLED);
      if (options.isStopping()) throw new ServerError("UNAVAILABLE", "Server is stopping");
      checkLoadName(model);
      const files = loadOptions?.files ?? {};
      const hasFiles = Object.keys(files).length > 0;
      if (hasFiles && loadOptions?.config === undefined) {
        throw new ServerError(
          "INVALID_ARG",
          "Load parameter 'config' must be specified for model file override",
        );
      }
      // Any other name that is not a directory directly inside the repository (a backslash, NUL, a hidden
      // name, a symlink out) fails Triton's poll as an absent name does, whatever exists on disk.
      if (!hasFiles && !isPlainModelName(model)) throw pollFailure(model);
      const config =
        loadOptions?.config !== undefined ? parseConfigOverride(model, loadOptions.config) : undefined;
      const entry = await lifecycle.load(model, {
        ...(config ? { config } : {}),
        ...(hasFiles ? { files } : {}),
      });
      const failures = loadFailures(entry);
      if (failures.length > 0) {
        throw new ServerError("INVALID_ARG", `load failed for model '${model}': ${failures.join("\n")}`);
      }
    },
    async unloadModel(model, unloadOptions) {
      if (mode !== "explicit") throw new ServerError("UNAVAILABLE", MODEL_CONTROL_DISABLED);
      // With unload_dependents, an ensemble's members are unloaded with it.
      const entry = lifecycle.get(model);
      const latest = entry ? readyVersionsOf(entry).at(-1) : undefined;
      const members =
        unloadOptions?.unloadDependents && latest?.state.name === "READY"
          ? ensembleMemberNames(latest.state.served.config)
          : [];
      // Triton answers success for a name that is not loaded: there is nothing to unload.
      await lifecycle.unload(model);
      await Promise.all(members.map((member) => lifecycle.unload(member)));
    },
    close: async () => {
      await poller?.close();
    },
  };
}
