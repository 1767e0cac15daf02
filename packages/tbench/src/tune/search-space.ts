/**
 * The tune's search space: the lists given on the command line (or derived from the model's own config),
 * expanded into candidate configs. Pure functions; the config is Triton's JSON form of `ModelConfig` (the
 * repository API's `config` and what `GET /v2/models/<m>/config` answers: 64-bit integers as strings).
 */
import { UsageError } from "../run/usage-error.js";

/** A model config as Triton prints it in JSON (`inference.ModelConfig`, proto field names). */
export type ModelConfigJson = Record<string, unknown>;

/** Preferred batch sizes of the dynamic batcher: none, powers of two up to the max ("auto"), or a list. */
export type PreferredChoice = "none" | "auto" | readonly number[];

/** The lists to combine; every list has at least one value. */
export interface SearchSpace {
  readonly batching: readonly ("off" | "on")[];
  readonly maxQueueDelayUs: readonly number[];
  readonly preferredBatchSize: readonly PreferredChoice[];
  readonly maxBatchSize: readonly number[];
  readonly instanceCount: readonly number[];
}

/** One config to measure. */
export interface Candidate {
  /** Short, unique: `off inst=1`, `on delay=1000us pref=auto inst=2` (names it in the table and JSON). */
  readonly label: string;
  /** The label without the instance count: candidates in one group differ only in instances (pruning). */
  readonly group: string;
  readonly batching: "off" | "on";
  readonly maxQueueDelayUs: number;
  /** Preferred sizes as sent; empty for none. */
  readonly preferredBatchSize: readonly number[];
  readonly maxBatchSize: number;
  readonly instanceCount: number;
}

/** The search-space flags as commander hands them over (comma-separated strings). */
export interface SearchFlags {
  batching?: string | undefined;
  maxQueueDelayUs?: string | undefined;
  preferredBatchSize?: string | undefined;
  maxBatchSize?: string | undefined;
  instanceCount?: string | undefined;
}

interface Current {
  maxBatchSize: number;
  batching: boolean;
  delayUs: number;
  preferred: number[];
  instances: number;
}

/** The settings the tune varies, as the model's config has them now. */
function current(config: ModelConfigJson): Current {
  const dynamic = config["dynamic_batching"] as { max_queue_delay_microseconds?: unknown } | undefined;
  const preferred = (dynamic as { preferred_batch_size?: unknown } | undefined)?.preferred_batch_size;
  const groups = (config["instance_group"] as { count?: unknown }[] | undefined) ?? [];
  const maxBatchSize = Number(config["max_batch_size"] ?? 0);
  const sizes = Array.isArray(preferred) ? preferred.map(Number) : [];
  return {
    maxBatchSize,
    batching: dynamic !== undefined && dynamic !== null,
    delayUs: Number(dynamic?.max_queue_delay_microseconds ?? 0),
    // Triton fills in [max_batch_size] when no preferred size is given (NormalizeModelConfig): that is none.
    preferred: sizes.length === 1 && sizes[0] === maxBatchSize ? [] : sizes,
    // Triton's completed config always has a group; its count defaults to 1.
    instances: Number(groups[0]?.count ?? 1) || 1,
  };
}

const unique = <T>(values: readonly T[]): T[] => [...new Set(values)];

/**
 * The space when no flag is given, from the model's config: batching off and on (on only when the model
 * batches, max_batch_size > 0), queue delays 0, the configured delay (500 us when none) and 4x it,
 * the configured preferred sizes (none when unset), the configured max_batch_size, and the configured
 * instance count and twice it.
 */
export function defaultSearchSpace(config: ModelConfigJson): SearchSpace {
  const now = current(config);
  const delay = now.delayUs > 0 ? now.delayUs : 500;
  return {
    batching: now.maxBatchSize > 0 ? ["off", "on"] : ["off"],
    maxQueueDelayUs: unique([0, delay, 4 * delay]).sort((a, b) => a - b),
    preferredBatchSize: [now.preferred.length > 0 ? now.preferred : "none"],
    maxBatchSize: [now.maxBatchSize],
    instanceCount: unique([now.instances, 2 * now.instances]),
  };
}

function items(flag: string, text: string): string[] {
  const parts = text.split(",").map((s) => s.trim());
  if (parts.some((p) => p === "")) {
    throw new UsageError(`${flag}: expected a comma-separated list with no empty items, got "${text}"`);
  }
  return parts;
}

function integers(flag: string, text: string, min: number, what: string): number[] {
  return unique(
    items(flag, text).map((item) => {
      const n = Number(item);
      if (!/^\d+$/.test(item) || !Number.isSafeInteger(n) || n < min) {
        throw new UsageError(`${flag}: expected a list of ${what} (whole numbers >= ${min}), got "${item}"`);
      }
      return n;
    }),
  );
}

function preferredChoices(text: string): PreferredChoice[] {
  const flag = "--preferred-batch-size";
  return items(flag, text).map((item): PreferredChoice => {
    if (item === "none" || item === "auto") return item;
    const sizes = item.split("+").map((s) => Number(s));
    if (!/^\d+(\+\d+)*$/.test(item) || sizes.some((n) => !Number.isSafeInteger(n) || n < 1)) {
      throw new UsageError(
        `${flag}: expected none, auto or sizes joined by + (e.g. none,auto,4+8), got "${item}"`,
      );
    }
    return unique(sizes).sort((a, b) => a - b);
  });
}

/** The space from the flags, each absent flag taking its default from the model's config. */
export function resolveSearchSpace(flags: SearchFlags, config: ModelConfigJson): SearchSpace {
  const defaults = defaultSearchSpace(config);
  let batching = defaults.batching;
  if (flags.batching !== undefined) {
    batching = unique(
      items("--batching", flags.batching).map((item) => {
        if (item !== "off" && item !== "on") {
          throw new UsageError(`--batching: expected a list of off|on, got "${item}"`);
        }
        return item;
      }),
    );
  }
  return {
    batching,
    maxQueueDelayUs:
      flags.maxQueueDelayUs === undefined
        ? defaults.maxQueueDelayUs
        : integers("--max-queue-delay-us", flags.maxQueueDelayUs, 0, "microseconds"),
    preferredBatchSize:
      flags.preferredBatchSize === undefined
        ? defaults.preferredBatchSize
        : preferredChoices(flags.preferredBatchSize),
    maxBatchSize:
      flags.maxBatchSize === undefined
        ? defaults.maxBatchSize
        : integers("--max-batch-size", flags.maxBatchSize, 0, "batch sizes"),
    instanceCount:
      flags.instanceCount === undefined
        ? defaults.instanceCount
        : integers("--instance-count", flags.instanceCount, 1, "instance counts"),
  };
}

/** "auto": the powers of two from 2 below max_batch_size, then max_batch_size itself (32 -> 2,4,8,16,32). */
export function autoPreferredSizes(maxBatchSize: number): number[] {
  const sizes: number[] = [];
  for (let n = 2; n < maxBatchSize; n *= 2) sizes.push(n);
  if (maxBatchSize >= 1) sizes.push(maxBatchSize);
  return sizes;
}

/**
 * Every combination, batching off once per max_batch_size and instance count (delays and preferred sizes
 * mean nothing without the batcher). Instance counts vary fastest, in the order given, so that the
 * candidates of one group run one after the other and the tune can stop a group that stops improving.
 */
export function expandSearchSpace(space: SearchSpace, config: ModelConfigJson): Candidate[] {
  const original = current(config);
  const showMbs = space.maxBatchSize.length > 1 || space.maxBatchSize[0] !== original.maxBatchSize;
  const candidates: Candidate[] = [];
  for (const maxBatchSize of space.maxBatchSize) {
    const mbs = showMbs ? `mbs=${maxBatchSize} ` : "";
    for (const batching of space.batching) {
      const settings: { delay: number; preferred: PreferredChoice }[] =
        batching === "off"
          ? [{ delay: 0, preferred: "none" }]
          : space.maxQueueDelayUs.flatMap((delay) =>
              space.preferredBatchSize.map((preferred) => ({ delay, preferred })),
            );
      for (const { delay, preferred } of settings) {
        const sizes =
          preferred === "none"
            ? []
            : preferred === "auto"
              ? autoPreferredSizes(maxBatchSize)
              : [...preferred];
        const pref =
          preferred === "none" ? "" : ` pref=${preferred === "auto" ? "auto" : preferred.join("+")}`;
        const group = batching === "off" ? `${mbs}off` : `${mbs}on delay=${delay}us${pref}`;
        for (const instanceCount of space.instanceCount) {
          candidates.push({
            label: `${group} inst=${instanceCount}`,
            group,
            batching,
            maxQueueDelayUs: delay,
            preferredBatchSize: sizes,
            maxBatchSize,
            instanceCount,
          });
        }
      }
    }
  }
  return candidates;
}

/**
 * The config to load for a candidate: the original with the tuned fields replaced. Other dynamic batching
 * fields (priorities, queue policy) are kept; every instance group gets the candidate's count.
 */
export function candidateConfig(original: ModelConfigJson, candidate: Candidate): ModelConfigJson {
  const config = structuredClone(original);
  config["max_batch_size"] = candidate.maxBatchSize;
  if (candidate.batching === "off") {
    delete config["dynamic_batching"];
  } else {
    const previous = (original["dynamic_batching"] as Record<string, unknown> | undefined) ?? {};
    config["dynamic_batching"] = {
      ...structuredClone(previous),
      // uint64 in the proto: a string in Triton's JSON.
      max_queue_delay_microseconds: String(candidate.maxQueueDelayUs),
      preferred_batch_size: [...candidate.preferredBatchSize],
    };
  }
  const groups = (original["instance_group"] as Record<string, unknown>[] | undefined) ?? [];
  config["instance_group"] = (groups.length > 0 ? groups : [{}]).map((group) => ({
    ...structuredClone(group),
    count: candidate.instanceCount,
  }));
  return config;
}

/** Whether the candidate's settings are the ones the model runs with now (marked "current" in the table). */
export function isCurrentSettings(original: ModelConfigJson, candidate: Candidate): boolean {
  const now = current(original);
  if (now.maxBatchSize !== candidate.maxBatchSize || now.instances !== candidate.instanceCount) return false;
  if (candidate.batching === "off") return !now.batching;
  return (
    now.batching &&
    now.delayUs === candidate.maxQueueDelayUs &&
    now.preferred.join(",") === candidate.preferredBatchSize.join(",")
  );
}
