/**
 * The states of a model and its versions, as Triton names them (LOADING, READY, UNLOADING, UNAVAILABLE), as
 * discriminated unions: what serves a version exists exactly while the version can take requests, so no
 * caller unwraps an optional scheduler. A name the lifecycle does not hold is UNKNOWN.
 */
import type { ModelConfig } from "@tbench/proto";
import type { ModelSpec } from "../repository/model-spec.js";
import type { Scheduler } from "../scheduler/scheduler.js";
import type { ModelStatsCollector } from "../stats/model-stats.js";

/** A loaded version: its resolved config and the scheduler that runs its requests. */
export interface ServedVersion {
  readonly config: ModelConfig;
  readonly spec: ModelSpec;
  readonly scheduler: Scheduler;
  /** `model_transaction_policy { decoupled: true }`: answered through streams only. */
  readonly decoupled?: boolean;
}

export type VersionState =
  | { readonly name: "LOADING" }
  | { readonly name: "READY"; readonly served: ServedVersion }
  | { readonly name: "UNLOADING"; readonly served: ServedVersion }
  /** `leftover`: what served the version before it failed (every instance died), still to be closed. */
  | { readonly name: "UNAVAILABLE"; readonly reason: string; readonly leftover?: ServedVersion };

/** One version of a model. */
export interface VersionEntry {
  readonly version: string;
  readonly stats: ModelStatsCollector;
  state: VersionState;
}

/** A model the lifecycle holds: one that failed before any version could load, or its versions. */
export type ModelEntry =
  | { readonly kind: "failed"; readonly name: string; readonly reason: string }
  | {
      readonly kind: "loaded";
      readonly name: string;
      readonly versions: ReadonlyMap<string, VersionEntry>;
      /** Removes what the load made for this entry alone (the directory of `file:` overrides). */
      readonly release?: () => Promise<void>;
    };

/** The versions of `entry`, ascending by number (none for a failed model). */
export function versionsOf(entry: ModelEntry): VersionEntry[] {
  if (entry.kind === "failed") return [];
  return [...entry.versions.values()].sort((a, b) => Number(a.version) - Number(b.version));
}

/** The READY versions of `entry`, ascending. */
export function readyVersionsOf(entry: ModelEntry): VersionEntry[] {
  return versionsOf(entry).filter((v) => v.state.name === "READY");
}

/** Why a load left the model or versions unavailable, in Triton's words; empty when it fully succeeded. */
export function loadFailures(entry: ModelEntry): string[] {
  if (entry.kind === "failed") return [entry.reason];
  return versionsOf(entry)
    .filter((v) => v.state.name !== "READY")
    .map(
      (v) =>
        `version ${v.version} is at UNAVAILABLE state: ${v.state.name === "UNAVAILABLE" ? v.state.reason : v.state.name};`,
    );
}

/**
 * Closes every version of `entry` that holds instances (gracefully: accepted requests are answered first;
 * with `now`, queued requests fail at once) and releases the entry's own files; READY versions end
 * UNAVAILABLE "unloaded".
 */
export async function closeModelEntry(
  entry: ModelEntry,
  onUnloaded?: (version: string) => void,
  now = false,
): Promise<void> {
  const end = (served: ServedVersion) => (now ? served.scheduler.destroy() : served.scheduler.close());
  if (entry.kind === "failed") return;
  await Promise.all(
    [...entry.versions.values()].map(async (v) => {
      const state = v.state;
      if (state.name === "READY") {
        v.state = { name: "UNLOADING", served: state.served };
        await end(state.served);
        v.state = { name: "UNAVAILABLE", reason: "unloaded" };
        onUnloaded?.(v.version);
      } else if (state.name === "UNLOADING" && now) {
        // A graceful close in progress, cut short.
        await state.served.scheduler.destroy();
      } else if (state.name === "UNAVAILABLE" && state.leftover) {
        await end(state.leftover);
        v.state = { name: "UNAVAILABLE", reason: state.reason };
      }
    }),
  );
  await entry.release?.();
}
