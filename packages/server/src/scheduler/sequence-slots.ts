/**
 * What the sequence batcher keeps per instance (sequence-batch-scheduler.ts): a batcher per instance, its
 * slots (one sequence each: its queued requests, whether the instance's thread holds its state, the
 * state's shape where dims vary), the backlog of sequences waiting for a slot, where each sequence is,
 * and those whose state died with their instance. Also the padding row's request and the answer to a
 * request of a sequence whose state was lost.
 */
import { ServerError } from "../core/server-error.js";
import type { InferenceResponse } from "../core/types.js";
import type { InstanceLoss } from "../instances/instance-pool.js";
import type { BatchableEntry } from "./dynamic-batcher.js";
import type { SecondaryStats, ValidatedRequest } from "./scheduler.js";
import { type RowFlags, zeroData } from "./sequence-tensors.js";

export interface Request extends BatchableEntry {
  readonly kind: "request";
  readonly validated: ValidatedRequest;
  readonly startNs: number;
  readonly secondary: SecondaryStats | undefined;
  readonly flags: RowFlags;
  readonly resolve: (response: InferenceResponse) => void;
  readonly reject: (error: unknown) => void;
}

/** What the idle reaper leaves in a slot's queue: the sequence ends there, its slot is released. */
export interface Release {
  readonly kind: "release";
}

export type Entry = Request | Release;

export interface Slot {
  readonly batcher: Batcher;
  readonly index: number;
  readonly queue: Entry[];
  /** The sequence that holds the slot, until its END runs or the reaper releases it. */
  held: boolean;
  /** A request of the slot's sequence is running (oldest: one in flight per sequence). */
  inFlight: boolean;
  /** A request of the slot's sequence went to the instance: its thread keeps the sequence's state. */
  stateful: boolean;
  /** The shape key of the sequence's states, where states have variable dims and a batch reported them. */
  stateKey: string | undefined;
}

export interface Batcher {
  /** Its instance's index in the pool: its batches run there and nowhere else. */
  readonly index: number;
  readonly slots: Slot[];
  running: boolean;
  /** Slots freed without END since its last batch: their states are dropped with the next one. */
  released: number[];
  /** Its instance died and was not replaced: it takes no sequence again. */
  retired: boolean;
}

/** A START that found no free slot, and the requests of its sequence that followed it. */
export interface Backlog {
  /** The sequence's key (its id). */
  readonly key: string;
  readonly entries: Request[];
  /** The earliest arrival + `timeout` of its requests (infinite: none has a timeout). */
  deadlineNs: number;
}

/** A sequence's place: the slot it holds, or the backlog it waits in. */
export type Place = { readonly slot: Slot } | { readonly backlog: Backlog };

/** A sequence whose state died with its instance: its requests fail until a START, or until it idles out. */
export interface LostSequence {
  readonly loss: InstanceLoss;
  readonly untilNs: number;
}

/** The answer to a request of a sequence whose state died with its instance. */
export function lostStateError(id: bigint | string, model: string, loss: InstanceLoss): ServerError {
  return new ServerError(
    "INTERNAL",
    `inference request for sequence ${String(id)} to model '${model}' cannot continue: its state was lost ` +
      `when model instance '${loss.name}' died (${loss.reason}); start the sequence again with the START flag`,
  );
}

export function keyOf(id: bigint | string): string {
  return typeof id === "string" ? `s:${id}` : `n:${id}`;
}

export function shapeKeyOf(validated: ValidatedRequest): string {
  return validated.inputs.map((input) => input.tensor.shape.join(",")).join(";");
}

/** A padding row's request: the representative's inputs as zeros. */
export function paddingOf(representative: ValidatedRequest): ValidatedRequest {
  return {
    ...representative,
    inputs: representative.inputs.map((input) => ({
      ...input,
      tensor: {
        ...input.tensor,
        data: zeroData(
          input.tensor.datatype,
          input.tensor.shape.reduce((a, b) => a * b, 1),
        ),
      },
    })),
  };
}

export const PADDING: RowFlags = { ready: false, start: false, end: false, id: 0n };

/** `count` batchers (at least one) of `slots` free slots each. */
export function createBatchers(count: number, slots: number): Batcher[] {
  return Array.from({ length: Math.max(1, count) }, (_, index) => {
    const batcher: Batcher = { index, slots: [], running: false, released: [], retired: false };
    for (let i = 0; i < slots; i++) {
      batcher.slots.push({
        batcher,
        index: i,
        queue: [],
        held: false,
        inFlight: false,
        stateful: false,
        stateKey: undefined,
      });
    }
    return batcher;
  });
}
