/**
 * The seeded choices the HTTP fuzz generators share: a Mulberry32 stream, small pickers over it, and random
 * JSON values whose strings and object keys come from each generator's own vocabulary.
 */
import { createMulberry32 } from "@tbench/model-builder/prng";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** What a generator draws from; the same seed gives the same draws. */
export interface FuzzRandom {
  random(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
  /** True with probability p. */
  chance(p: number): boolean;
  /** A JSON value, nested at most three levels for arrays and objects. */
  randomJson(depth?: number): Json;
}

/** The words random JSON uses: string values, and the keys of its objects. */
export interface JsonVocabulary {
  readonly strings: readonly string[];
  readonly keys: readonly string[];
}

export function createFuzzRandom(seed: number, vocabulary: JsonVocabulary): FuzzRandom {
  const random = createMulberry32(seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const chance = (p: number) => random() < p;
  const randomJson = (depth = 0): Json => {
    switch (int(depth > 2 ? 5 : 7)) {
      case 0:
        return null;
      case 1:
        return chance(0.5);
      case 2:
        return pick([0, -1, 1, 2 ** 31, 2 ** 53 + 2, -(2 ** 63), 1.5, 1e308, 65536]);
      case 3:
        return pick(vocabulary.strings);
      case 4:
        return [];
      case 5:
        return Array.from({ length: int(4) }, () => randomJson(depth + 1));
      default:
        return { [pick(vocabulary.keys)]: randomJson(depth + 1) };
    }
  };
  return { random, int, pick, chance, randomJson };
}
