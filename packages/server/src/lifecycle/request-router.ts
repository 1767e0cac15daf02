/**
 * The one path from a front end (or an ensemble step) to a scheduler: finds the READY version a request
 * names, with Triton's lookup codes and messages, validates the request against that version's config,
 * and hands it to the version's scheduler. Everything the core answers about one model version (ready,
 * metadata, config, statistics) looks the version up here too, so all of them agree on which one serves.
 */
import type { Clock } from "../core/clock.js";
import { DecoupledModelError, ServerError } from "../core/server-error.js";
import type { InferenceRequest, InferenceResponse, ResponseSink } from "../core/types.js";
import type { SecondaryStats, ValidatedRequest } from "../scheduler/scheduler.js";
import type { ModelLifecycle } from "./model-lifecycle.js";
import { validateRequest } from "./request-validation.js";
import { readyVersionsOf, type ServedVersion, type VersionEntry } from "./version-state.js";

/** A READY version and what serves it. */
export interface ReadyVersion {
  readonly entry: VersionEntry;
  readonly served: ServedVersion;
}

export interface RequestRouter {
  /** The READY version `version` of `model` (none, "" or "-1": the highest READY one); throws Triton's errors. */
  resolve(model: string, version?: string): ReadyVersion;
  /** The READY versions of `model`, or of every model in name order; none for a name not held. */
  readyVersions(model?: string): VersionEntry[];
  /** Resolves, validates and runs one request; `secondary` also sees its success (an ensemble step). */
  run(request: InferenceRequest, secondary?: SecondaryStats): Promise<InferenceResponse>;
  /** Resolves, validates and runs one request whose responses go to `sink` (any model, decoupled or not). */
  runStream(request: InferenceRequest, sink: ResponseSink): void;
}

export interface RequestRouterOptions {
  readonly lifecycle: Pick<ModelLifecycle, "get" | "entries">;
  readonly clock: Clock;
  /** Most elements one BYTES input may have (--max-bytes-tensor-elements; undefined: the default). */
  readonly maxBytesTensorElements?: number | undefined;
}

/**
 * A failed model lookup, with Triton's code and message (ModelLifeCycle::GetModel; model namespacing off,
 * Triton's default): a name it does not know, or a known model without the asked or any ready version, is
 * NOT_FOUND; an asked version that exists but is not ready is UNAVAILABLE.
 */
function unknownModel(status: "NOT_FOUND" | "UNAVAILABLE", message: string): ServerError {
  return new ServerError(status, `Request for unknown model: ${message}`);
}

export function createRequestRouter(options: RequestRouterOptions): RequestRouter {
  const { lifecycle, clock } = options;

  const resolve = (model: string, version?: string): ReadyVersion => {
    const entry = lifecycle.get(model);
    if (!entry) throw unknownModel("NOT_FOUND", `'${model}' is not found`);
    const versions = entry.kind === "loaded" ? entry.versions : new Map<string, VersionEntry>();
    if (version !== undefined && version !== "" && version !== "-1") {
      const found = versions.get(version);
      if (!found) throw unknownModel("NOT_FOUND", `'${model}' version ${version} is not found`);
      if (found.state.name !== "READY") {
        throw unknownModel("UNAVAILABLE", `'${model}' version ${version} is not at ready state`);
      }
      return { entry: found, served: found.state.served };
    }
    // The highest READY version; a loop, not a sort, as every unversioned infer comes through here.
    let current: ReadyVersion | undefined;
    for (const v of versions.values()) {
      if (v.state.name === "READY" && (!current || Number(v.version) > Number(current.entry.version))) {
        current = { entry: v, served: v.state.served };
      }
    }
    if (!current) throw unknownModel("NOT_FOUND", `'${model}' has no available versions`);
    return current;
  };

  /** The request checked against the version's config; a failure counts in the version's statistics. */
  const validate = (
    entry: VersionEntry,
    served: ServedVersion,
    request: InferenceRequest,
    startNs: number,
  ): ValidatedRequest => {
    try {
      return validateRequest(served.spec, request, options.maxBytesTensorElements);
    } catch (error) {
      entry.stats.requestFailed(clock.nowNs() - startNs, "OTHER", clock.epochMs());
      throw error;
    }
  };

  return {
    resolve,
    readyVersions(model) {
      if (model !== undefined) {
        const entry = lifecycle.get(model);
        return entry ? readyVersionsOf(entry) : [];
      }
      return lifecycle
        .entries()
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .flatMap(readyVersionsOf);
    },
    run(request, secondary) {
      const startNs = clock.nowNs();
      const { entry, served } = resolve(request.model, request.version);
      if (served.decoupled === true) throw new DecoupledModelError(request.model);
      return served.scheduler.submit(validate(entry, served, request, startNs), startNs, secondary);
    },
    runStream(request, sink) {
      const startNs = clock.nowNs();
      let validated: ValidatedRequest;
      let scheduler: ServedVersion["scheduler"];
      try {
        const { entry, served } = resolve(request.model, request.version);
        validated = validate(entry, served, request, startNs);
        scheduler = served.scheduler;
      } catch (error) {
        sink.error(error);
        return;
      }
      if (scheduler.submitStream !== undefined) {
        scheduler.submitStream(validated, startNs, sink);
        return;
      }
      scheduler.submit(validated, startNs).then(
        (response) => sink.response(response, true),
        (error: unknown) => sink.error(error),
      );
    },
  };
}
