// Where a run reads the server's side of each window (queue, compute, batch sizes): the model's statistics
// and, for an ensemble, those of every composing model, found from the model configs. A server without a
// statistics endpoint is not an error: the run reports client-side figures only, and says so once.
import type { InferenceClient } from "@tbench/client";
import { type ModelTree, type StatsSnapshot, snapshotFromStatistics } from "../measure/server-stats.js";

/** The models whose statistics a window reads, and how to read them. */
export interface ServerStatsSource {
  tree: ModelTree;
  /** Reads every model's statistics at once; `undefined` when the server has none. */
  read: (() => Promise<StatsSnapshot>) | undefined;
}

/** Configs deeper than this are not followed (an ensemble of ensembles of ...). */
const MAX_ENSEMBLE_DEPTH = 8;

/** Reads the model's composing models (ensembles), recursively, from the model configs. */
async function readModelTree(
  client: InferenceClient,
  name: string,
  version: string,
  depth = 0,
): Promise<ModelTree> {
  const tree: ModelTree = { name, version, composing: [] };
  if (depth > MAX_ENSEMBLE_DEPTH) return tree;
  const config = (await client.modelConfig(name, version === "" ? undefined : version)) as {
    platform?: string;
    ensemble_scheduling?: { step?: { model_name?: string; model_version?: number | string }[] };
  };
  if (config.platform !== "ensemble") return tree;
  for (const step of config.ensemble_scheduling?.step ?? []) {
    if (step.model_name === undefined || tree.composing.some((c) => c.name === step.model_name)) continue;
    const stepVersion =
      step.model_version === undefined || Number(step.model_version) < 0 ? "" : String(step.model_version);
    tree.composing.push(await readModelTree(client, step.model_name, stepVersion, depth + 1));
  }
  return tree;
}

/**
 * Finds the models to read and reads their statistics once, to learn whether the server has any; `warn`
 * says so when it has not.
 */
export async function openServerStats(
  client: InferenceClient,
  model: string,
  modelVersion: string | undefined,
  warn: (text: string) => void,
): Promise<ServerStatsSource> {
  const tree = await readModelTree(client, model, modelVersion ?? "");
  // An ensemble's statistics span several models: read them all.
  const ensemble = tree.composing.length > 0;
  const read = async () =>
    snapshotFromStatistics(
      await client.modelStatistics(ensemble ? undefined : model, ensemble ? undefined : modelVersion),
    );
  try {
    await read();
  } catch {
    warn("Server statistics are not available: the report has client-side figures only.");
    return { tree, read: undefined };
  }
  return { tree, read };
}
