/**
 * Loads one version of an ensemble in Triton's order: its own scheduling config is checked, its members
 * are loaded (in explicit mode this is what loads them; elsewhere they are already loading and the load
 * finds them done), then the ensemble is checked against the members' complete configs and served by the
 * ensemble scheduler, whose steps go through each member's own scheduler.
 */
import type { ModelConfig } from "@tbench/proto";
import type { Clock } from "../core/clock.js";
import { ServerError } from "../core/server-error.js";
import { validateEnsembleScheduling } from "../ensemble/ensemble-config-check.js";
import { ensembleMemberNames, findEnsembleCycle } from "../ensemble/ensemble-dependencies.js";
import { type MemberInfo, validateEnsembleMembers } from "../ensemble/ensemble-members-check.js";
import { createEnsembleScheduler, type InferMember } from "../ensemble/ensemble-scheduler.js";
import { normalizeModelConfig } from "../repository/config-normalize.js";
import { validateIoConfig } from "../repository/config-validate.js";
import { modelSpecFromConfig } from "../repository/model-spec.js";
import type { ModelStatsCollector } from "../stats/model-stats.js";
import { type ModelEntry, readyVersionsOf, type ServedVersion, versionsOf } from "./version-state.js";

/** What an ensemble needs from the core. */
export interface EnsembleDependencies {
  readonly clock: Clock;
  /** The entry the lifecycle holds for `name` (undefined: unknown). */
  get(name: string): ModelEntry | undefined;
  /** True when the repository has a model directory `name`. */
  inRepository(name: string): Promise<boolean>;
  /** Loads `name` unless it is loaded and unchanged; rejects when it cannot even be polled. */
  loadMember(name: string): Promise<unknown>;
  /** Runs a member request through the member's own scheduler. */
  readonly inferMember: InferMember;
  /** The ensembles whose load is in progress, with their members (a member among them is a cycle). */
  readonly loadingEnsembles: Map<string, readonly string[]>;
}

/** What the core knows of a member model, in the form the ensemble checks take. */
function memberInfo(entry: ModelEntry): MemberInfo {
  if (entry.kind === "failed") return { state: "invalid", error: entry.reason };
  const ready = readyVersionsOf(entry);
  const latest = ready.at(-1);
  if (latest === undefined || latest.state.name !== "READY") {
    const failed = versionsOf(entry).find((v) => v.state.name === "UNAVAILABLE");
    const error = failed?.state.name === "UNAVAILABLE" ? failed.state.reason : undefined;
    return { state: "unavailable", ...(error !== undefined ? { error } : {}) };
  }
  return { state: "ready", config: latest.state.served.config, versions: ready.map((v) => v.version) };
}

export async function loadEnsembleVersion(
  deps: EnsembleDependencies,
  baseConfig: ModelConfig,
  version: string,
  stats: ModelStatsCollector,
): Promise<ServedVersion> {
  const config = structuredClone(baseConfig);
  const name = config.name ?? "";
  const invalid = (message: string) => new ServerError("INVALID_ARG", message);
  const own = validateEnsembleScheduling(config);
  if (own) throw invalid(own);
  const memberNames = ensembleMemberNames(config);
  const loading = deps.loadingEnsembles;
  const membersOf = (model: string) => (model === name ? memberNames : loading.get(model));
  const cycle = memberNames.some((m) => m === name || loading.has(m))
    ? findEnsembleCycle(name, membersOf)
    : undefined;
  if (cycle) throw invalid(cycle);
  loading.set(name, memberNames);
  try {
    await Promise.all(memberNames.map((m) => deps.loadMember(m).catch(() => undefined)));
  } finally {
    loading.delete(name);
  }
  const infos = new Map<string, MemberInfo>();
  for (const member of memberNames) {
    const entry = deps.get(member);
    if (entry) infos.set(member, memberInfo(entry));
    else if (await deps.inRepository(member)) infos.set(member, { state: "unavailable" });
  }
  const problem = validateEnsembleMembers(config, infos);
  if (problem) throw invalid(problem);
  normalizeModelConfig(config);
  const io = validateIoConfig(config);
  if (io) throw invalid(io);
  const members = new Map<string, ModelConfig>();
  for (const [member, info] of infos) if (info.state === "ready") members.set(member, info.config);
  const scheduler = createEnsembleScheduler({
    config,
    version,
    members,
    inferMember: deps.inferMember,
    clock: deps.clock,
    stats,
  });
  return { config, spec: modelSpecFromConfig(config), scheduler };
}
