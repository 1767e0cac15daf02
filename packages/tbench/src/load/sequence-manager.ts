// perf_analyzer's sequence manager (src/sequence_manager.cc, infer_context.cc): the state of each sequence a
// sequence model's load runs, and what its next request carries. A slot ("sequence status") holds one
// sequence at a time: its correlation id, the requests it has left, its length and its data stream. The
// first request of a sequence has START, the last END (a length-1 sequence has both); when a slot's
// sequence is over, its next request starts a new one with a new id. Pure logic: the random source comes
// in through the options, and the load (sequence-load.ts) decides which slot each request uses.

/** perf_analyzer's sequence options (`--sequence-*`, `--num-of-sequences`, `--serial-sequences`). */
export interface SequenceOptions {
  /** `--sequence-length`: the base length (default 20). */
  readonly length: number;
  /** Whether `--sequence-length` was given (then JSON streams use the drawn length, not their step count). */
  readonly lengthSpecified: boolean;
  /** `--sequence-length-variation`: lengths are drawn within +- this percentage of the base (default 20). */
  readonly lengthVariationPercent: number;
  /** `--sequence-id-range` start: the first correlation id (default 1). */
  readonly idStart: number;
  /** How many ids from `idStart` are used (`end - start`; 2^32-1 when no end is given). */
  readonly idRange: number;
  /** `--num-of-sequences`: sequences in request-rate mode (default 4). */
  readonly numOfSequences: number;
  /** `--serial-sequences`: request-rate mode sends at most one request per sequence at a time. */
  readonly serial: boolean;
}

/** perf_analyzer's defaults (command_line_parser.h). */
export const DEFAULT_SEQUENCE_OPTIONS: SequenceOptions = Object.freeze({
  length: 20,
  lengthSpecified: false,
  lengthVariationPercent: 20,
  idStart: 1,
  idRange: 2 ** 32 - 1,
  numOfSequences: 4,
  serial: false,
});

/** What the manager needs: the length and id options, the data streams and a random source. */
export interface SequenceManagerOptions {
  readonly length: number;
  readonly lengthSpecified: boolean;
  readonly lengthVariationPercent: number;
  readonly idStart: number;
  readonly idRange: number;
  /**
   * The step count of each input-data stream (perf_analyzer's JSON `{"data": [[step, ...], ...]}`), in the
   * order their requests appear in the run's request list; `undefined` without JSON data (every request
   * then uses the first request of the list, and lengths are always drawn).
   */
  readonly streamSteps: readonly number[] | undefined;
  /** Uniform in [0, 1): draws lengths and picks streams. */
  readonly random: () => number;
}

/** One request of a sequence: its id and flags, and which of the run's requests holds its data. */
export interface SequenceStep {
  readonly id: number;
  readonly start: boolean;
  readonly end: boolean;
  /** Index in the run's request list. */
  readonly dataIndex: number;
}

/** The sequences of a load, by slot. */
export interface SequenceManager {
  /** Slots there are (they are only ever added). */
  readonly size: number;
  /** Makes sure slots 0..count-1 exist; new slots hold no sequence. */
  ensure(count: number): void;
  /** The slot's next request (starting a new sequence when it has none open), counted as sent. */
  next(slot: number): SequenceStep;
  /**
   * perf_analyzer's CompleteOngoingSequence: when the slot's sequence is unfinished, its one last request
   * (with END), counted as sent; `undefined` when nothing is open.
   */
  finish(slot: number): SequenceStep | undefined;
  /** Whether the slot's sequence has requests left. */
  isOpen(slot: number): boolean;
  /** The slot's current (or last) correlation id; 0 before its first sequence. */
  idOf(slot: number): number;
}

/**
 * perf_analyzer's GetRandomSequenceLength: `base + int((2u - 1) * variation / 100 * base)` for u uniform in
 * [0, 1] (the offset truncated toward zero), and 1 where that is <= 0. With the defaults: 16..24.
 */
export function drawSequenceLength(base: number, variationPercent: number, u: number): number {
  const offset = Math.trunc((2 * u - 1) * (variationPercent / 100) * base);
  return base + offset <= 0 ? 1 : base + offset;
}

interface Slot {
  id: number;
  remaining: number;
  length: number;
  stream: number;
}

/** Creates the manager (no slots until {@link SequenceManager.ensure}). */
export function createSequenceManager(options: SequenceManagerOptions): SequenceManager {
  const { streamSteps, random } = options;
  if (streamSteps !== undefined && (streamSteps.length === 0 || streamSteps.some((n) => !(n >= 1)))) {
    throw new Error("every input-data stream needs at least one step");
  }
  const offsets: number[] = [];
  let total = 0;
  for (const steps of streamSteps ?? []) {
    offsets.push(total);
    total += steps;
  }
  const slots: Slot[] = [];
  let counter = 0;

  function slotAt(index: number): Slot {
    const slot = slots[index];
    if (slot === undefined) throw new Error(`no sequence slot ${index} (there are ${slots.length})`);
    return slot;
  }

  function held(id: number): boolean {
    return slots.some((slot) => slot.id === id);
  }

  // perf_analyzer's GetNextSeqId: the next id of the range, or the slot's previous id when the next one is
  // still held by a slot. A slot that never had an id (perf_analyzer would send id 0 there) takes the next
  // id that no slot holds instead.
  function nextId(slot: Slot): number {
    if (!(options.idRange >= 1))
      throw new Error(`the sequence id range must be >= 1, got ${options.idRange}`);
    let id = (counter++ % options.idRange) + options.idStart;
    if (!held(id)) return id;
    if (slot.id !== 0) return slot.id;
    for (let tries = 1; tries < options.idRange && held(id); tries++) {
      id = (counter++ % options.idRange) + options.idStart;
    }
    return id;
  }

  function drawLength(): number {
    return drawSequenceLength(options.length, options.lengthVariationPercent, random());
  }

  // perf_analyzer's InitNewSequence.
  function startSequence(slot: Slot): void {
    slot.id = nextId(slot);
    if (streamSteps === undefined) {
      slot.length = drawLength();
    } else {
      slot.stream = Math.min(streamSteps.length - 1, Math.floor(random() * streamSteps.length));
      slot.length = options.lengthSpecified ? drawLength() : streamSteps[slot.stream]!;
    }
    slot.remaining = slot.length;
  }

  // perf_analyzer's SetInferSequenceOptions, UpdateSeqJsonData and DecrementRemainingQueries.
  function step(slot: Slot): SequenceStep {
    const start = slot.remaining === 0;
    if (start) startSequence(slot);
    const end = slot.remaining === 1;
    let dataIndex = 0;
    if (streamSteps !== undefined) {
      const steps = streamSteps[slot.stream]!;
      dataIndex = offsets[slot.stream]! + ((((slot.length - slot.remaining) % steps) + steps) % steps);
    }
    slot.remaining -= 1;
    return { id: slot.id, start, end, dataIndex };
  }

  return {
    get size() {
      return slots.length;
    },
    ensure(count) {
      while (slots.length < count) slots.push({ id: 0, remaining: 0, length: 0, stream: 0 });
    },
    next(index) {
      return step(slotAt(index));
    },
    finish(index) {
      const slot = slotAt(index);
      if (slot.remaining === 0) return undefined;
      slot.remaining = 1;
      return step(slot);
    },
    isOpen(index) {
      return slotAt(index).remaining > 0;
    },
    idOf(index) {
      return slotAt(index).id;
    },
  };
}
