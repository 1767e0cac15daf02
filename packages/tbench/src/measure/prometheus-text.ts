/** One sample of the Prometheus text exposition format. */
export interface PrometheusSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses Prometheus text format (comments and malformed lines are skipped). */
export function parsePrometheusText(text: string): PrometheusSample[] {
  const samples: PrometheusSample[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = SAMPLE_LINE.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? "").matchAll(LABEL)) {
      labels[label[1] ?? ""] = (label[2] ?? "").replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    const value = Number(match[3]);
    if (!Number.isNaN(value)) samples.push({ name: match[1] ?? "", labels, value });
  }
  return samples;
}
