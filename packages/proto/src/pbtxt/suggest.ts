/**
 * "Did you mean ...?" hints for misspelt field and enum names: the closest candidate by edit distance
 * (transpositions count as one edit), also matching names that differ only in case and underscores
 * (`maxBatchSize` -> `max_batch_size`).
 */

/** Optimal string alignment distance between two strings. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols).fill(0);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        (d[(i - 1) * cols + j] as number) + 1,
        (d[i * cols + j - 1] as number) + 1,
        (d[(i - 1) * cols + j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (d[(i - 2) * cols + j - 2] as number) + 1);
      }
      d[i * cols + j] = best;
    }
  }
  return d[rows * cols - 1] as number;
}

function squash(name: string): string {
  return name.replaceAll("_", "").toLowerCase();
}

/**
 * The candidate closest to `name`, or undefined when none is close enough: at most 1 edit for names up to
 * 4 characters, 2 up to 9, 3 beyond; failing that, a candidate that `name` (3 characters or more) begins.
 */
export function suggestName(name: string, candidates: Iterable<string>): string | undefined {
  const limit = name.length <= 4 ? 1 : name.length <= 9 ? 2 : 3;
  const squashed = squash(name);
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    if (squash(candidate) === squashed) return candidate;
    if (Math.abs(candidate.length - name.length) > limit) continue;
    const distance = editDistance(name, candidate);
    if (distance <= limit && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best === undefined && name.length >= 3) {
    for (const candidate of candidates) if (candidate.startsWith(name)) return candidate;
  }
  return best;
}
