/**
 * The exchanges in flight, so that destroy() can fail them: an intrusive doubly linked list through the
 * items' own fields. Adding and removing allocate nothing; a Set of exchanges cost about 1 us a call
 * (hashing and hash-table churn, mostly garbage collection), half the client's own time on a health probe.
 */

/** An item that carries its own list links (owned by the list it is in). */
export interface InflightLinks<T> {
  inflightPrev: T | null;
  inflightNext: T | null;
}

/** An intrusive doubly linked list of the items in flight. */
export class InflightList<T extends InflightLinks<T>> {
  #head: T | null = null;

  /** Adds `item` (which must not be in a list). */
  add(item: T): void {
    item.inflightNext = this.#head;
    item.inflightPrev = null;
    if (this.#head !== null) this.#head.inflightPrev = item;
    this.#head = item;
  }

  /** Removes `item`; a no-op when it is not in the list. */
  remove(item: T): void {
    const prev = item.inflightPrev;
    const next = item.inflightNext;
    if (prev !== null) prev.inflightNext = next;
    else if (this.#head === item) this.#head = next;
    else return;
    if (next !== null) next.inflightPrev = prev;
    item.inflightPrev = null;
    item.inflightNext = null;
  }

  /** The items in the list now, as an array (safe to remove items while iterating it). */
  toArray(): T[] {
    const all: T[] = [];
    for (let item = this.#head; item !== null; item = item.inflightNext) all.push(item);
    return all;
  }
}
