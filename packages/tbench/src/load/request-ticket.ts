/**
 * Hands out request numbers: the input data is picked round-robin from the number, and an optional budget
 * (`--request-count`, warmup) stops the load after that many sends.
 */
export interface RequestTicket {
  /** The next request number, or -1 when the budget is spent. */
  take(): number;
  /** Sets how many more requests may be sent (`Infinity` for no limit). */
  setBudget(requests: number): void;
  /** Requests handed out so far. */
  readonly taken: number;
}

/** Creates a ticket counter starting at `firstIndex` (workers start at different offsets). */
export function createRequestTicket(firstIndex = 0, stride = 1): RequestTicket {
  let next = firstIndex;
  let taken = 0;
  let budget = Number.POSITIVE_INFINITY;
  return {
    take() {
      if (budget <= 0) return -1;
      budget -= 1;
      taken += 1;
      const index = next;
      next += stride;
      return index;
    },
    setBudget(requests) {
      budget = requests;
    },
    get taken() {
      return taken;
    },
  };
}
