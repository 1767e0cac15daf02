/**
 * Runs ensemble requests as Triton's EnsembleScheduler does (core ensemble_scheduler.cc): a step starts as
 * soon as every tensor it reads exists, so independent steps run at the same time; each step is one request
 * to its member model through `inferMember`, which goes through that member's own scheduler (its dynamic
 * batcher batches ensemble traffic with everything else). Tensors pass from step to step by reference: a
 * member request's input is a new Tensor object (member name, shape fitted to the member's batching) over the
 * same data object, never a copy.
 *
 * Member requests carry the ensemble request's id, priority, timeout, parameters, sequence fields (a stateful
 * member sees the ensemble request's correlation id and START/END, as in Triton) and abort signal, and ask
 * for every output their step maps. Only the steps needed for the requested outputs run. A failed step fails
 * the ensemble request with Triton's `in ensemble '<name>', <member's message>` and the member's status; no
 * step starts after a failure or an abort, and the answer comes once the steps already running have
 * finished (as Triton answers when its last in-flight step returns).
 */
import type { ModelConfig } from "@tbench/proto";
import type { Clock } from "../core/clock.js";
import { markFailedAfterIssue } from "../core/failed-after-issue.js";
import { logRequest } from "../core/log-request.js";
import { ServerError } from "../core/server-error.js";
import type { InferenceRequest, InferenceResponse, Tensor } from "../core/types.js";
import { classify } from "../scheduler/classification.js";
import type { Scheduler, ValidatedRequest } from "../scheduler/scheduler.js";
import {
  createEnsemblePlan,
  type EnsemblePlan,
  neededSteps,
  type StepPlan,
  shapeFor,
} from "./ensemble-plan.js";
import { createComputeTotals, type EnsembleStatsSink, type MemberStatsSink } from "./ensemble-stats.js";

/**
 * Runs one member request through the member's scheduler (validated against the member's config, like any
 * request) and resolves with its response; rejects with the member's ServerError. When it succeeds, the
 * member scheduler must call `stats.requestSucceeded` with the member request's durations before resolving.
 */
export type InferMember = (request: InferenceRequest, stats: MemberStatsSink) => Promise<InferenceResponse>;

export interface EnsembleSchedulerOptions {
  /** The ensemble's config, validated with validateEnsembleConfig. */
  readonly config: ModelConfig;
  /** The ensemble version this scheduler serves (the response's `version`). */
  readonly version: string;
  /** Each member model's complete config, as given to validateEnsembleMembers (the version its step runs). */
  readonly members: ReadonlyMap<string, ModelConfig>;
  readonly inferMember: InferMember;
  readonly clock: Pick<Clock, "nowNs" | "epochMs">;
  readonly stats: EnsembleStatsSink;
  /** Labels per ensemble output name, for outputs requested with `classification`. */
  readonly labels?: ReadonlyMap<string, readonly string[]>;
}

/**
 * An ensemble version's scheduler. close() stops accepting requests and resolves once every accepted one
 * is answered; destroy() does the same, as the steps in flight fail when their members are destroyed.
 * Members are never closed: they are models of their own.
 */
export interface EnsembleScheduler extends Scheduler {
  /** Ensemble requests accepted and not yet answered. */
  inFlight(): number;
}

/** An ensemble tensor's value in one request; `tensor` undefined: absent (optional input, output not made). */
interface Value {
  readonly tensor: Tensor | undefined;
  /** The batch size of the request that made it (0: made without a batch dimension). */
  readonly batchSize: number;
}

/** Triton's wrapping of a step's error: the member's status, its message after the ensemble's name. */
function stepError(plan: EnsemblePlan, error: unknown): ServerError {
  const status = error instanceof ServerError ? error.status : "INTERNAL";
  const message = error instanceof Error ? error.message : String(error);
  return new ServerError(status, `in ensemble '${plan.name}', ${message}`, { cause: error });
}

function renamed(tensor: Tensor, name: string, shape: readonly number[] = tensor.shape): Tensor {
  return { name, datatype: tensor.datatype, shape, data: tensor.data };
}

/** The member request of `step`, its inputs taken from `values`. */
function memberRequest(step: StepPlan, request: InferenceRequest, values: ReadonlyMap<string, Value>) {
  const inputs: Tensor[] = [];
  for (const mapping of step.inputs) {
    const value = values.get(mapping.tensor);
    if (!value?.tensor) continue; // an optional input left out
    const dims = step.memberInputDims.get(mapping.member) ?? [];
    inputs.push(
      renamed(
        value.tensor,
        mapping.member,
        shapeFor(dims, step.memberBatching, value.batchSize, value.tensor.shape),
      ),
    );
  }
  const member: InferenceRequest = {
    model: step.model,
    ...(step.version !== undefined ? { version: step.version } : {}),
    ...(request.id !== undefined ? { id: request.id } : {}),
    inputs,
    outputs: step.outputs.map((o) => ({ name: o.member })),
    ...(request.priority !== undefined ? { priority: request.priority } : {}),
    ...(request.timeoutUs !== undefined ? { timeoutUs: request.timeoutUs } : {}),
    ...(request.parameters !== undefined ? { parameters: request.parameters } : {}),
    ...(request.sequence !== undefined ? { sequence: request.sequence } : {}),
    ...(request.signal !== undefined ? { signal: request.signal } : {}),
  };
  // The member's batch size (Triton's BatchSize()): what its outputs are made with.
  const batchSize = step.memberBatching ? (inputs[0]?.shape[0] ?? 0) : 0;
  return { member, batchSize };
}

/** Creates the scheduler of one ensemble version. */
export function createEnsembleScheduler(options: EnsembleSchedulerOptions): EnsembleScheduler {
  const { clock, stats, version } = options;
  const plan = createEnsemblePlan(options.config, options.members);
  let inFlight = 0;
  let stopping = false;
  const drainWaiters: (() => void)[] = [];
  const checkDrained = () => {
    if (inFlight === 0) for (const waiter of drainWaiters.splice(0)) waiter();
  };

  const run = (
    validated: ValidatedRequest,
    startNs: number,
    resolve: (response: InferenceResponse) => void,
    reject: (error: unknown) => void,
  ) => {
    const request = validated.request;
    const queueStartNs = clock.nowNs();
    const values = new Map<string, Value>();
    for (const input of validated.inputs) {
      // As Triton: the shape after the input's reshape, with the request's batch dimension in front.
      const shape = plan.batching ? [validated.batchSize, ...input.shape] : input.shape;
      values.set(input.spec.name, {
        tensor: renamed(input.tensor, input.spec.name, shape),
        batchSize: validated.batchSize,
      });
    }
    for (const name of plan.optionalInputs) {
      if (!values.has(name)) values.set(name, { tensor: undefined, batchSize: validated.batchSize });
    }
    const requested = validated.outputs.map((o) => o.name);
    const needed = neededSteps(plan, requested);
    const totals = createComputeTotals();
    const launched = new Set<number>();
    let running = 0;
    let failure: ServerError | undefined;
    let settled = false;
    const computeStartNs = clock.nowNs();

    const respond = () => {
      const outputs: Tensor[] = [];
      for (const spec of validated.outputs) {
        const value = values.get(spec.name);
        if (!value?.tensor) continue; // Triton leaves out an output no member made
        const dims = plan.outputDims.get(spec.name) ?? [];
        const shape = shapeFor(dims, validated.batchSize !== 0, value.batchSize, value.tensor.shape);
        let tensor = renamed(value.tensor, spec.name, shape);
        const k = request.outputs?.find((o) => o.name === spec.name)?.classification ?? 0;
        if (k > 0) tensor = classify(tensor, k, plan.batching, options.labels?.get(spec.name));
        outputs.push(tensor);
      }
      const times = totals.totals();
      stats.requestSucceeded(clock.nowNs() - startNs, computeStartNs - queueStartNs, times, clock.epochMs());
      stats.executed(Math.max(1, validated.batchSize), times);
      resolve({
        model: plan.name,
        version,
        ...(request.id !== undefined && request.id !== "" ? { id: request.id } : {}),
        outputs,
      });
    };

    const finish = () => {
      if (running > 0 || settled) return;
      settled = true;
      if (!failure && requested.some((name) => !values.has(name))) {
        failure = new ServerError(
          "INVALID_ARG",
          `in ensemble '${plan.name}', ${logRequest(request)}unexpected deadlock, at least one output is not set ` +
            "while no more ensemble steps can be made",
        );
      }
      try {
        if (failure) throw failure;
        respond();
      } catch (error) {
        stats.requestFailed(clock.nowNs() - startNs, "OTHER", clock.epochMs());
        // The ensemble had accepted the request: whatever failed, failed after issue.
        reject(markFailedAfterIssue(error));
      }
    };

    const launch = (step: StepPlan) => {
      launched.add(step.index);
      running++;
      const { member, batchSize } = memberRequest(step, request, values);
      let pending: Promise<InferenceResponse>;
      try {
        pending = options.inferMember(member, totals);
      } catch (error) {
        pending = Promise.reject(error);
      }
      pending.then(
        (response) => {
          running--;
          if (!failure) {
            for (const mapping of step.outputs) {
              const made = response.outputs.find((t) => t.name === mapping.member);
              values.set(mapping.tensor, { tensor: made && renamed(made, mapping.tensor), batchSize });
            }
            launchReady();
          }
          finish();
        },
        (error: unknown) => {
          running--;
          failure ??= stepError(plan, error);
          finish();
        },
      );
    };

    const launchReady = () => {
      try {
        launchReadySteps();
      } catch (error) {
        // A step whose member request cannot be built fails the request like a failed member.
        failure ??= stepError(plan, error);
      }
    };

    const launchReadySteps = () => {
      for (const step of plan.steps) {
        if (!needed.has(step.index) || launched.has(step.index)) continue;
        if (!step.inputs.every((input) => values.has(input.tensor))) continue;
        if (request.signal?.aborted) {
          failure ??= stepError(
            plan,
            new ServerError("CANCELLED", `${logRequest(request)}request was cancelled`),
          );
          return;
        }
        launch(step);
      }
    };

    launchReady();
    finish();
  };

  function close(): Promise<void> {
    stopping = true;
    return new Promise<void>((resolve) => {
      drainWaiters.push(resolve);
      checkDrained();
    });
  }

  return {
    submit(validated, startNs) {
      if (stopping) {
        return Promise.reject(
          new ServerError(
            "UNAVAILABLE",
            `${logRequest(validated.request)}Server is stopping, scheduler for model has stopped accepting new inference requests`,
          ),
        );
      }
      inFlight++;
      return new Promise<InferenceResponse>((resolve, reject) =>
        run(validated, startNs, resolve, reject),
      ).finally(() => {
        inFlight--;
        checkDrained();
      });
    },
    inFlight: () => inFlight,
    close,
    destroy: close,
  };
}
