/**
 * The slots of one model instance: a SharedArrayBuffer, made by the main thread when it starts the
 * instance and handed to its thread once, cut into SLOT_COUNT regions of SLOT_BYTES. A small batch is
 * written into a free slot (batch-slot-codec.ts) and what crosses is the slot's number, queued in the
 * instance's queue (instance-queue.ts); the thread reads the batch, runs it and writes the result into the
 * same slot, and answers with the number by message (or with the object path's reply, when the result does
 * not fit). Measured on the 2-core development machine, 20,000 sequential batches of `simple` through one
 * instance (two INT32 [1,16] inputs, two outputs): 68-70 µs of process CPU per batch instead of 74-80 as
 * object graphs, of which the main thread's 23.5-25.5 instead of 28-30.5.
 *
 * Lifetime: a slot is claimed by one run when it is sent and freed when that run's reply (of either form)
 * arrives, after which the thread no longer touches it; a batch finds no free slot only when more than
 * SLOT_COUNT are in flight, and takes the object path. The slots die with their instance: a replacement
 * gets new ones. Ordering: the slot's writes come before the queue's atomic store of its entry, which the
 * thread loads before reading the slot; the thread's writes of the result come before its postMessage,
 * whose receipt they are seen by (a port's queue is handed over under a lock).
 */

import { TRANSFER_MIN_BYTES } from "../core/thread-transfer.js";
import { encodeRun, type SlotIo, type SlotRun } from "./batch-slot-codec.js";

/**
 * Bytes per slot, heads included: from TRANSFER_MIN_BYTES up the object path transfers tensors instead of
 * copying them, so a slot would only add copies; below it the object path copies the data too (structured
 * clone writes it out and reads it back), as the slot does (written in, copied out). Two slots cost an
 * instance 128 KiB.
 */
export const SLOT_BYTES = TRANSFER_MIN_BYTES;

/** An instance holds at most two batches at once (instance-pool `depth`). */
export const SLOT_COUNT = 2;

/** The region of slot `slot` in `buffer`. */
export function slotRegion(buffer: SharedArrayBuffer, slot: number): Uint8Array {
  return new Uint8Array(buffer, slot * SLOT_BYTES, SLOT_BYTES);
}

/** The main thread's side: which slot holds which run. */
export interface BatchSlots {
  /** What the instance's thread is given. */
  readonly buffer: SharedArrayBuffer;
  /** Writes `run` into a free slot and returns the slot's number; undefined when none is free or it does not fit. */
  claim(run: SlotRun, io: SlotIo): number | undefined;
  /** The region of `slot`. */
  region(slot: number): Uint8Array;
  /** The id of the run that holds `slot`, if any. */
  holder(slot: number): number | undefined;
  /** Frees `slot` (its run was answered). */
  release(slot: number): void;
}

export function createBatchSlots(): BatchSlots {
  const buffer = new SharedArrayBuffer(SLOT_COUNT * SLOT_BYTES);
  const regions = Array.from({ length: SLOT_COUNT }, (_, slot) => slotRegion(buffer, slot));
  const holders: (number | undefined)[] = regions.map(() => undefined);
  return {
    buffer,
    claim(run, io) {
      const slot = holders.indexOf(undefined);
      if (slot < 0 || !encodeRun(regions[slot]!, run, io)) return undefined;
      holders[slot] = run.id;
      return slot;
    },
    region: (slot) => regions[slot]!,
    holder: (slot) => holders[slot],
    release(slot) {
      holders[slot] = undefined;
    },
  };
}
