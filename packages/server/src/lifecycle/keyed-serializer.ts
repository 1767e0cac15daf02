/**
 * Runs tasks one at a time per key, in call order, and lets a caller wait until every task has settled.
 * Loads and unloads of one model name go through it, as Triton's model lifecycle serializes them: two
 * concurrent loads of a name would otherwise both start instances and one set would never be closed.
 */
export interface KeyedSerializer {
  /** Runs `task` after every earlier task of `key` has settled; resolves or rejects as `task` does. */
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
  /** Resolves when every task started so far has settled. */
  idle(): Promise<void>;
}

export function createKeyedSerializer(): KeyedSerializer {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      const previous = tails.get(key) ?? Promise.resolve();
      const result = previous.then(task, task);
      const tail = result.then(
        () => undefined,
        () => undefined,
      );
      tails.set(key, tail);
      // The map holds only keys with work pending: the last task of a key removes it.
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
    async idle(): Promise<void> {
      while (tails.size > 0) await Promise.all(tails.values());
    },
  };
}
