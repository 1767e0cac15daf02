/** Cumulative (or, after {@link diffServerStats}, per-window) statistics of one model version. */
export interface ServerSideStats {
  inferenceCount: number;
  executionCount: number;
  successCount: number;
  failCount: number;
  /** `inference_stats.success.ns`: total request time of successful requests. */
  cumulativeNs: number;
  queueCount: number;
  queueNs: number;
  computeInputCount: number;
  computeInputNs: number;
  computeInferCount: number;
  computeInferNs: number;
  computeOutputCount: number;
  computeOutputNs: number;
  /** Composing models of an ensemble, keyed `name` -> stats (one version each). */
  composing: Record<string, ServerSideStats & { version: string }>;
}

/** A statistics snapshot: stats keyed by `name\u0000version`. */
export type StatsSnapshot = Map<string, Omit<ServerSideStats, "composing">>;

/** The ensemble structure tbench reports: a model and, recursively, the models its steps call. */
export interface ModelTree {
  name: string;
  /** Requested version; "" (or "-1") means the highest version present in the statistics. */
  version: string;
  composing: ModelTree[];
}

/** Statistics of one model version as `@tbench/client`'s `modelStatistics()` returns them (fields read here). */
export interface ModelStatisticsLike {
  readonly name: string;
  readonly version: string;
  readonly inferenceCount: number;
  readonly executionCount: number;
  readonly inferenceStats: Readonly<
    Record<
      "success" | "fail" | "queue" | "computeInput" | "computeInfer" | "computeOutput",
      { count: number; ns: number }
    >
  >;
}

/** Builds a snapshot from the client's statistics (Triton's `model_stats`, camel-cased by the client). */
export function snapshotFromStatistics(stats: readonly ModelStatisticsLike[]): StatsSnapshot {
  const snapshot: StatsSnapshot = new Map();
  for (const entry of stats) {
    const s = entry.inferenceStats;
    snapshot.set(`${entry.name}\u0000${entry.version}`, {
      inferenceCount: Number(entry.inferenceCount),
      executionCount: Number(entry.executionCount),
      successCount: Number(s.success.count),
      failCount: Number(s.fail.count),
      cumulativeNs: Number(s.success.ns),
      queueCount: Number(s.queue.count),
      queueNs: Number(s.queue.ns),
      computeInputCount: Number(s.computeInput.count),
      computeInputNs: Number(s.computeInput.ns),
      computeInferCount: Number(s.computeInfer.count),
      computeInferNs: Number(s.computeInfer.ns),
      computeOutputCount: Number(s.computeOutput.count),
      computeOutputNs: Number(s.computeOutput.ns),
    });
  }
  return snapshot;
}

function resolveVersion(snapshot: StatsSnapshot, name: string, version: string): string | undefined {
  if (version !== "" && version !== "-1") return version;
  let best: string | undefined;
  for (const key of snapshot.keys()) {
    const [keyName, keyVersion] = key.split("\u0000");
    if (
      keyName === name &&
      keyVersion !== undefined &&
      (best === undefined || Number(keyVersion) > Number(best))
    ) {
      best = keyVersion;
    }
  }
  return best;
}

const FIELDS = [
  "inferenceCount",
  "executionCount",
  "successCount",
  "failCount",
  "cumulativeNs",
  "queueCount",
  "queueNs",
  "computeInputCount",
  "computeInputNs",
  "computeInferCount",
  "computeInferNs",
  "computeOutputCount",
  "computeOutputNs",
] as const;

/**
 * The statistics accumulated between two snapshots for a model and, recursively, its composing models.
 * Returns `undefined` when the model is missing from the later snapshot.
 */
export function diffServerStats(
  before: StatsSnapshot,
  after: StatsSnapshot,
  tree: ModelTree,
): (ServerSideStats & { version: string }) | undefined {
  const version = resolveVersion(after, tree.name, tree.version);
  if (version === undefined) return undefined;
  const end = after.get(`${tree.name}\u0000${version}`);
  if (end === undefined) return undefined;
  const start = before.get(`${tree.name}\u0000${version}`);
  const result = { version, composing: {} } as ServerSideStats & { version: string };
  for (const field of FIELDS) result[field] = end[field] - (start?.[field] ?? 0);
  for (const child of tree.composing) {
    const childStats = diffServerStats(before, after, child);
    if (childStats !== undefined) result.composing[child.name] = childStats;
  }
  return result;
}

/** Adds per-window server statistics (for merged windows). */
export function addServerStats(all: readonly ServerSideStats[]): ServerSideStats | undefined {
  const first = all[0];
  if (first === undefined) return undefined;
  const result = { composing: {} } as ServerSideStats;
  for (const field of FIELDS) result[field] = all.reduce((total, s) => total + s[field], 0);
  for (const name of Object.keys(first.composing)) {
    const children = all.map((s) => s.composing[name]).filter((c) => c !== undefined);
    const summed = addServerStats(children);
    if (summed !== undefined)
      result.composing[name] = { ...summed, version: first.composing[name]?.version ?? "" };
  }
  return result;
}

/** Averages in microseconds, as perf_analyzer prints them (integer division of totals by the success count). */
export interface ServerLatencyBreakdown {
  requestUs: number;
  overheadUs: number;
  queueUs: number;
  computeInputUs: number;
  computeInferUs: number;
  computeOutputUs: number;
  /** Inferences per execution: the average batch size the server ran. */
  avgBatchSize: number;
}

/** perf_analyzer's breakdown: averages per successful request; overhead = request - queue - compute (>= 0). */
export function serverBreakdown(stats: ServerSideStats): ServerLatencyBreakdown {
  const n = stats.successCount;
  const avg = (ns: number) => (n > 0 ? Math.floor(ns / n / 1000) : 0);
  const requestUs = avg(stats.cumulativeNs);
  const queueUs = avg(stats.queueNs);
  const computeInputUs = avg(stats.computeInputNs);
  const computeInferUs = avg(stats.computeInferNs);
  const computeOutputUs = avg(stats.computeOutputNs);
  const compute = computeInputUs + computeInferUs + computeOutputUs;
  return {
    requestUs,
    overheadUs: Math.max(0, requestUs - queueUs - compute),
    queueUs,
    computeInputUs,
    computeInferUs,
    computeOutputUs,
    avgBatchSize: stats.executionCount > 0 ? stats.inferenceCount / stats.executionCount : 0,
  };
}
