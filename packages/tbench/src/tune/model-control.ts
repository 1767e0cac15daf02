/**
 * The tune's use of the repository API: load a candidate config as a JSON override and wait until the
 * model is ready; restore the original config afterwards, retrying for a bounded time; and, when that is
 * impossible, the exact request that restores it by hand.
 */
import { isDeepStrictEqual } from "node:util";
import { ConnectionError, type InferenceClient, InferenceError } from "@tbench/client";
import type { ModelConfigJson } from "./search-space.js";

/** Triton's answer to a load outside explicit mode (core `LoadUnloadModel`, TRITON-FACTS.md). */
const NOT_EXPLICIT = /explicit model load \/ unload is not allowed/i;

/** Whether a load failed because the server does not run in explicit model control mode. */
export function isNotExplicitMode(error: unknown): boolean {
  return error instanceof Error && NOT_EXPLICIT.test(error.message);
}

/** Whether an error means the server could not be reached (down, restarting), not that it said no. */
export function isUnreachable(error: unknown): boolean {
  return (
    error instanceof ConnectionError || (error instanceof Error && error.cause instanceof ConnectionError)
  );
}

/** How to start a server in explicit mode, for the error a non-explicit server gets. */
export function explicitModeHelp(model: string): string {
  return (
    `start it with --model-control-mode=explicit --load-model=${model} ` +
    `(tritonserver --model-repository=DIR --model-control-mode=explicit --load-model=${model}, or ` +
    `tbench-server --model-repository DIR --model-control-mode explicit --load-model ${model})`
  );
}

/** The server's own words from a refused load (the client's message without its `HTTP 400:` prefix). */
export function serverMessage(error: unknown): string {
  if (error instanceof InferenceError && error.serverMessage !== undefined) return error.serverMessage;
  return error instanceof Error ? error.message.replace(/\s*\n\s*/g, " ") : String(error);
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface ModelControlOptions {
  readonly client: InferenceClient;
  readonly model: string;
  /** How long a loaded model may take to report ready. Default 60 s. */
  readonly readyTimeoutMs?: number;
  /** Waits between readiness polls and restore attempts (tests pass their own). */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

/** What a restore did. */
export interface RestoreOutcome {
  readonly restored: boolean;
  /** How: reloaded from the repository, or loaded with the original config as override. */
  readonly how: "repository" | "override" | undefined;
  /** The last error when not restored. */
  readonly error: string | undefined;
}

export interface ModelControl {
  readConfig(): Promise<ModelConfigJson>;
  /** Loads `config` as an override and waits for readiness; rejects with the server's error. */
  loadConfig(config: ModelConfigJson): Promise<void>;
  /** Puts `original` back, retrying for `timeoutMs` while the server is unreachable or busy. */
  restore(original: ModelConfigJson, timeoutMs: number): Promise<RestoreOutcome>;
}

export function createModelControl(options: ModelControlOptions): ModelControl {
  const { client, model } = options;
  const sleep = options.sleep ?? delay;
  const now = options.now ?? Date.now;
  const readConfig = async () => (await client.modelConfig(model)) as unknown as ModelConfigJson;

  const waitReady = async () => {
    const deadline = now() + (options.readyTimeoutMs ?? 60_000);
    while (!(await client.isModelReady(model))) {
      if (now() > deadline) throw new Error(`model '${model}' was loaded but did not become ready in time`);
      await sleep(100);
    }
  };

  const loadConfig = async (config: ModelConfigJson) => {
    await client.loadModel(model, { config: JSON.stringify(config) });
    await waitReady();
  };

  /**
   * One restore attempt. First a load without a config: Triton then reloads the model from the repository
   * (an override marks the model's config as modified precisely so that the next plain load undoes it:
   * core `ModelRepositoryManager::InitializeModelInfo`), which puts the model back in the state it was
   * in when it was loaded from its config.pbtxt, not merely an override that happens to look the same.
   * If what the repository holds differs from what was serving before the tune (the file was edited since,
   * or the model was itself running an override), the original config JSON is loaded as an override,
   * which reproduces exactly the config that was serving. Either way the result is compared with the
   * original before it counts as restored.
   */
  const attempt = async (original: ModelConfigJson): Promise<RestoreOutcome> => {
    await client.loadModel(model);
    await waitReady();
    if (isDeepStrictEqual(await readConfig(), original)) {
      return { restored: true, how: "repository", error: undefined };
    }
    await loadConfig(original);
    if (isDeepStrictEqual(await readConfig(), original)) {
      return { restored: true, how: "override", error: undefined };
    }
    return {
      restored: false,
      how: undefined,
      error: "the server's config still differs from the original after loading it as an override",
    };
  };

  return {
    readConfig,
    loadConfig,
    async restore(original, timeoutMs) {
      const deadline = now() + timeoutMs;
      let lastError = "";
      for (;;) {
        try {
          const outcome = await attempt(original);
          if (outcome.restored) return outcome;
          lastError = outcome.error ?? lastError;
        } catch (error) {
          lastError = serverMessage(error);
        }
        if (now() >= deadline) return { restored: false, how: undefined, error: lastError };
        await sleep(500);
      }
    },
  };
}

/**
 * The request that restores the config by hand (HTTP repository API; with gRPC the same config goes in
 * RepositoryModelLoad's `config` parameter), with the config JSON itself.
 */
export function restoreInstructions(httpBase: string, model: string, original: ModelConfigJson): string {
  const body = JSON.stringify({ parameters: { config: JSON.stringify(original) } });
  const quoted = `'${body.replace(/'/g, "'\\''")}'`;
  return (
    `Restore it when the server is back (a restarted server loads config.pbtxt from its repository), ` +
    `with:\n  curl -X POST ${httpBase}/v2/repository/models/${encodeURIComponent(model)}/load -d ${quoted}\n` +
    `The original config (JSON):\n${JSON.stringify(original)}\n`
  );
}
