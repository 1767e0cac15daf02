/**
 * What the core needs to load an ensemble in Triton's order: which models it depends on, whether those
 * dependencies loop back to it (core model_repository_manager.cc CircularDependencyCheck, with its
 * message), and the one-call validation of an ensemble config (its own checks, then against its members).
 */
import type { ModelConfig } from "@tbench/proto";
import { validateEnsembleScheduling } from "./ensemble-config-check.js";
import { type MemberInfo, validateEnsembleMembers } from "./ensemble-members-check.js";

/** The models an ensemble's steps name, each once, in step order (empty for a config that is no ensemble). */
export function ensembleMemberNames(config: ModelConfig): string[] {
  const names = new Set<string>();
  for (const step of config.ensemble_scheduling?.step ?? []) names.add(step.model_name ?? "");
  return [...names];
}

/**
 * Triton's circular dependency check from ensemble `start`: `membersOf(name)` gives the members of an
 * ensemble (undefined or empty for a model that is no ensemble or is unknown). Returns
 * `circular dependency between ensembles: start -> ... -> last -> start` when some chain of members leads
 * back to `start`, else undefined. Each ensemble is walked once, so loops that avoid `start` end too (they
 * are reported when their own ensembles are checked).
 */
export function findEnsembleCycle(
  start: string,
  membersOf: (model: string) => readonly string[] | undefined,
): string | undefined {
  const visited = new Set<string>();
  const walk = (current: string): string | undefined => {
    visited.add(current);
    for (const member of membersOf(current) ?? []) {
      if (member === start) {
        return `circular dependency between ensembles: ${start} -> ... -> ${current} -> ${start}`;
      }
      if (visited.has(member)) continue;
      const found = walk(member);
      if (found) return found;
    }
    return undefined;
  };
  return walk(start);
}

/**
 * Both phases of Triton's ensemble validation: the ensemble's own config (validateEnsembleScheduling), then
 * against its members (validateEnsembleMembers). Returns the first problem's message (Triton reports these
 * as INVALID_ARG), or undefined.
 */
export function validateEnsembleConfig(
  config: ModelConfig,
  members: ReadonlyMap<string, MemberInfo>,
): string | undefined {
  return validateEnsembleScheduling(config) ?? validateEnsembleMembers(config, members);
}
