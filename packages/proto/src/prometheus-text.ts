/**
 * The Prometheus text exposition format that Triton's /metrics speaks, read into samples: tbench's
 * --collect-metrics scraper reads it, and the server's tests read its own /metrics with it. HELP and TYPE
 * lines, comments and malformed lines are skipped; label values are unescaped; a trailing timestamp is
 * ignored; `+Inf`, `-Inf` and `NaN` are numbers as the format defines them.
 */

/** One sample: a metric name, its labels and its value. */
export interface PrometheusSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The samples of one scrape. */
export interface PrometheusSamples {
  /** Every sample, in order. */
  readonly samples: readonly PrometheusSample[];
  /** The value of the sample `name` whose labels are exactly `labels` (in any order), or undefined. */
  get(name: string, labels?: Readonly<Record<string, string>>): number | undefined;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function sampleKey(name: string, labels: Readonly<Record<string, string>>): string {
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`);
  return `${name}{${parts.join(",")}}`;
}

/** A sample value: a float, or the format's `+Inf`, `-Inf` and `NaN`; undefined when it is neither. */
function sampleValue(text: string): number | undefined {
  if (text === "+Inf" || text === "Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  if (text === "NaN") return Number.NaN;
  const value = Number(text);
  return Number.isNaN(value) ? undefined : value;
}

/** Parses exposition text. */
export function parsePrometheusText(text: string): PrometheusSamples {
  const samples: PrometheusSample[] = [];
  const byKey = new Map<string, number>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = SAMPLE_LINE.exec(line);
    if (match === null) continue;
    const value = sampleValue(match[3] ?? "");
    if (value === undefined) continue;
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? "").matchAll(LABEL)) {
      labels[label[1] ?? ""] = (label[2] ?? "").replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    const name = match[1] ?? "";
    samples.push({ name, labels, value });
    byKey.set(sampleKey(name, labels), value);
  }
  return { samples, get: (name, labels = {}) => byKey.get(sampleKey(name, labels)) };
}
