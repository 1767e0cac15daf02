// Whether the model is a sequence model and what that changes in the run, as perf_analyzer decides it after
// reading the model (model_parser.cc DetermineSchedulerType, perf_analyzer.cc): a model whose config has
// `sequence_batching`, or an ensemble with such a model among its steps (at any depth), is a sequence
// model; its calls default to asynchronous (unless --sync), it takes no batch size above 1 and no open-ended
// concurrency sweep; and for every model the sequence id range must hold the load's sequences.
import type { InferenceClient } from "@tbench/client";
import { highestLevel, isOpenEnded, type SweepLevels } from "../measure/sweep.js";
import type { BenchConfig } from "./bench-config.js";
import { UsageError } from "./usage-error.js";

/** perf_analyzer's messages (printed on stderr before its GENERIC_ERROR exit); tbench's are usage errors. */
export const SEQUENCE_BATCH_SIZE_ERROR = "can not specify batch size > 1 when using a sequence model";
export const SEQUENCE_OPEN_CONCURRENCY_ERROR =
  "The 'end' concurrency can not be 0 for sequence models when using asynchronous API.";
export const SEQUENCE_ID_CONCURRENCY_ERROR =
  "sequence id range specified is smaller than the maximum possible concurrency, sequence id collision may occur.";
export const SEQUENCE_ID_SEQUENCES_ERROR =
  "sequence id range specified is smaller than the maximum possible number of sequences, sequence id collision may occur.";

type ModelConfigJson = Record<string, unknown>;

/** The models an ensemble's steps name, with their versions (`undefined`: the latest). */
function ensembleSteps(config: ModelConfigJson): { model: string; version: string | undefined }[] {
  const scheduling = config["ensemble_scheduling"] as { step?: unknown } | undefined;
  const steps = Array.isArray(scheduling?.step) ? (scheduling.step as Record<string, unknown>[]) : [];
  return steps
    .filter((step) => typeof step["model_name"] === "string")
    .map((step) => {
      const version = Number(step["model_version"] ?? -1);
      return {
        model: step["model_name"] as string,
        version: Number.isFinite(version) && version >= 0 ? String(version) : undefined,
      };
    });
}

/**
 * Whether the model is a sequence model: its config has `sequence_batching`, or (an ensemble) one of the
 * models its steps run has, read through `client` (composing models of composing models too).
 */
export async function isSequenceModel(
  client: Pick<InferenceClient, "modelConfig">,
  config: ModelConfigJson,
): Promise<boolean> {
  if (config["sequence_batching"] !== undefined && config["sequence_batching"] !== null) return true;
  const seen = new Set<string>();
  const pending = ensembleSteps(config);
  while (pending.length > 0) {
    const step = pending.shift()!;
    const key = `${step.model}:${step.version ?? ""}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const composing = (await client.modelConfig(step.model, step.version)) as ModelConfigJson;
    if (composing["sequence_batching"] !== undefined && composing["sequence_batching"] !== null) return true;
    pending.push(...ensembleSteps(composing));
  }
  return false;
}

/**
 * The run's config once the model is known: perf_analyzer's checks (usage errors with its messages) and
 * its async default for sequence models. The id-range checks hold for every model, as in perf_analyzer.
 */
export function sequenceRunConfig(
  config: BenchConfig,
  sequenceModel: boolean,
  levels: SweepLevels,
): BenchConfig {
  const async = config.async || (sequenceModel && !config.forcedSync);
  if (sequenceModel && config.batchSize > 1) throw new UsageError(SEQUENCE_BATCH_SIZE_ERROR);
  const { idRange, numOfSequences } = config.sequence;
  if (config.mode === "concurrency") {
    if (sequenceModel && isOpenEnded(levels) && async) throw new UsageError(SEQUENCE_OPEN_CONCURRENCY_ERROR);
    if (idRange < highestLevel(levels)) throw new UsageError(SEQUENCE_ID_CONCURRENCY_ERROR);
  } else {
    if (idRange < numOfSequences) throw new UsageError(SEQUENCE_ID_SEQUENCES_ERROR);
    // tbench's own: each load worker runs its share of the sequences.
    if (sequenceModel && config.workers > numOfSequences) {
      throw new UsageError(
        `--workers ${config.workers}: a sequence model in request-rate mode needs a sequence per worker ` +
          `(--num-of-sequences ${numOfSequences})`,
      );
    }
  }
  return async === config.async ? config : Object.freeze({ ...config, async });
}
