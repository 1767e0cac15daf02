import type { ChartRun } from "./chart-data.js";
import {
  breakdownOption,
  type ChartSize,
  DEFAULT_CHART_SIZE,
  percentilesOption,
  renderChartSvg,
  throughputLatencyOption,
} from "./charts.js";

/** Options of {@link renderHtmlReport}. */
export interface HtmlReportOptions {
  title?: string;
  /** Where each run came from (file names), listed under the title. */
  sources?: readonly string[];
  size?: ChartSize;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The throughput-against-latency chart of all runs, as an SVG document (what `-o report.svg` writes). */
export function renderThroughputSvg(runs: readonly ChartRun[], size: ChartSize = DEFAULT_CHART_SIZE): string {
  return renderChartSvg(throughputLatencyOption(runs), size);
}

/**
 * One self-contained HTML page: throughput against latency for all runs, then per run its latency
 * percentiles and its server-side breakdown. The SVGs are inlined and there is no script, so the page
 * works offline and from a file: URL, and looks the same in any browser.
 */
export function renderHtmlReport(runs: readonly ChartRun[], options: HtmlReportOptions = {}): string {
  const size = options.size ?? DEFAULT_CHART_SIZE;
  const title = options.title ?? "tbench report";
  const figures: string[] = [renderThroughputSvg(runs, size)];
  for (const run of runs) {
    figures.push(renderChartSvg(percentilesOption(run), size));
    const breakdown = breakdownOption(run);
    figures.push(
      breakdown === undefined
        ? `<p class="none">${escapeHtml(run.label)}: no server-side statistics in this result.</p>`
        : renderChartSvg(breakdown, size),
    );
  }
  const sources = (options.sources ?? []).map((s) => `<li>${escapeHtml(s)}</li>`).join("");
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title>`,
    "<style>body{font-family:sans-serif;margin:2em;background:#fff;color:#222}" +
      "figure{margin:0 0 2em 0}.none{color:#666}</style>",
    "</head>",
    "<body>",
    `<h1>${escapeHtml(title)}</h1>`,
    sources === "" ? "" : `<ul>${sources}</ul>`,
    ...figures.map((f) => (f.startsWith("<svg") ? `<figure>${f}</figure>` : f)),
    "</body>",
    "</html>",
    "",
  ].join("\n");
}
