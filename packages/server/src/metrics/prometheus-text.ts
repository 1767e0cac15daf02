/**
 * A small parser of the Prometheus text exposition format (samples only; HELP and TYPE lines skipped), for
 * tests and tools that read /metrics: `get(name, labels)` finds the sample with exactly those labels.
 */

/** Parsed samples of one scrape. */
export interface PrometheusSamples {
  /** The value of the sample `name` whose labels are exactly `labels`, or undefined. */
  get(name: string, labels: Readonly<Record<string, string>>): number | undefined;
  /** Every sample, in order. */
  readonly samples: readonly { name: string; labels: Record<string, string>; value: number }[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function key(name: string, labels: Readonly<Record<string, string>>): string {
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`);
  return `${name}{${parts.join(",")}}`;
}

/** Parses exposition text. */
export function parsePrometheusText(text: string): PrometheusSamples {
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  const byKey = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = SAMPLE.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? "").matchAll(LABEL)) labels[label[1]!] = label[2]!;
    const value = Number(match[3]);
    samples.push({ name: match[1]!, labels, value });
    byKey.set(key(match[1]!, labels), value);
  }
  return { samples, get: (name, labels) => byKey.get(key(name, labels)) };
}
