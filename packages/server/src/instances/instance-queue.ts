/**
 * How the main thread hands work to a model instance's thread without waking it when it is busy: a ring of
 * entries in a small SharedArrayBuffer. An entry is a batch slot's number (batch-slots.ts) or MESSAGE: take
 * the next message from the port (a RunMessage, or close), which the main thread posted just before. The
 * thread drains the ring before it sleeps in Atomics.wait, and the main thread calls Atomics.notify only
 * when it sees the thread asleep; so a batch sent while another runs costs a few stores, where postMessage
 * wakes the thread's event loop through the kernel each time (the wake-up was a small request's largest
 * single cost on the main thread, bench-results/server-profile.md; bench/instance-wake-probe.mjs measures
 * the difference). Replies still come back by postMessage: only a message wakes the main thread's loop.
 *
 * Ordering: the main thread writes the entry, then stores the tail; the thread loads the tail, then reads
 * the entry (sequentially consistent atomics, so the batch written into its slot before is seen too). The
 * sleep check is the usual pair: the thread stores ASLEEP then loads the tail, the main thread stores the
 * tail then loads ASLEEP, so at least one of them sees the other's store and no entry is left unseen.
 */

/**
 * Entries the ring holds (a power of two: the counters wrap at 2^32 and index by mask): an instance has at
 * most 2 batches and a close in flight.
 */
const RING_SIZE = 8;
const TAIL = 0; // entries written (main thread)
const HEAD = 1; // entries taken (instance thread)
const ASLEEP = 2; // 1 while the instance thread waits
const RING = 4;

/** The ring entry that says: the next message on the port is yours. */
export const MESSAGE = -1;

/** The main thread's side. */
export interface InstanceQueueSender {
  /** What the instance's thread is given. */
  readonly buffer: SharedArrayBuffer;
  /** Whether the ring holds RING_SIZE entries not yet taken (then push and pushMessage throw). */
  full(): boolean;
  /** Queues `entry` (a slot's number, or MESSAGE) and wakes the thread if it sleeps. */
  push(entry: number): void;
  /**
   * Posts a message (`post` posts it) and queues its MESSAGE entry; a full ring throws before `post` runs,
   * since a message posted without its entry would be read in place of a later one.
   */
  pushMessage(post: () => void): void;
}

export function createInstanceQueue(): InstanceQueueSender {
  const buffer = new SharedArrayBuffer((RING + RING_SIZE) * Int32Array.BYTES_PER_ELEMENT);
  const ctrl = new Int32Array(buffer);
  const full = () => ((ctrl[TAIL]! - Atomics.load(ctrl, HEAD)) | 0) >= RING_SIZE;
  const refuseWhenFull = () => {
    if (full()) throw new Error(`the instance's queue is full (${RING_SIZE} entries not yet taken)`);
  };
  const push = (entry: number) => {
    refuseWhenFull();
    const tail = ctrl[TAIL]!;
    ctrl[RING + (tail & (RING_SIZE - 1))] = entry;
    Atomics.store(ctrl, TAIL, (tail + 1) | 0);
    if (Atomics.load(ctrl, ASLEEP) === 1) Atomics.notify(ctrl, TAIL);
  };
  return {
    buffer,
    full,
    push,
    pushMessage(post) {
      refuseWhenFull();
      post();
      push(MESSAGE);
    },
  };
}

/** The instance thread's side: the next entry, sleeping (blocking the thread) until there is one. */
export function instanceQueueReceiver(buffer: SharedArrayBuffer): { next(): number } {
  const ctrl = new Int32Array(buffer);
  let head = Atomics.load(ctrl, HEAD);
  return {
    next() {
      while (Atomics.load(ctrl, TAIL) === head) {
        Atomics.store(ctrl, ASLEEP, 1);
        if (Atomics.load(ctrl, TAIL) === head) Atomics.wait(ctrl, TAIL, head);
        Atomics.store(ctrl, ASLEEP, 0);
      }
      const entry = ctrl[RING + (head & (RING_SIZE - 1))]!;
      head = (head + 1) | 0;
      Atomics.store(ctrl, HEAD, head);
      return entry;
    },
  };
}
