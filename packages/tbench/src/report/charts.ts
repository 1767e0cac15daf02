import * as echarts from "echarts";
import { CHART_PERCENTILES, type ChartRun, curveLatencyUs, niceCeiling } from "./chart-data.js";

/** The option object echarts draws (kept as data so tests can read what a chart holds). */
export type ChartOption = echarts.EChartsOption;

/** Size of a rendered chart, pixels. */
export interface ChartSize {
  width: number;
  height: number;
}

export const DEFAULT_CHART_SIZE: ChartSize = { width: 800, height: 450 };

const ms = (us: number) => Math.round(us) / 1000;
/** Points are labelled with their level: c=N for concurrency, r=N for request rate (as tbench's tables). */
const levelPrefix = (run: ChartRun) => (run.mode === "request_rate" ? "r=" : "c=");
const BASE = {
  animation: false,
  backgroundColor: "#ffffff",
  textStyle: { fontFamily: "sans-serif" },
  grid: { left: 70, right: 30, top: 80, bottom: 60 },
} as const;

/**
 * Throughput against p99 latency, one line per run (e.g. batching on and off on one chart), one point per
 * level. Both axes start at 0 and end at a round value above the data, so runs compare by eye.
 */
export function throughputLatencyOption(runs: readonly ChartRun[]): ChartOption {
  const points = runs.flatMap((r) => r.points);
  const maxLatencyMs = Math.max(0, ...points.map((p) => ms(curveLatencyUs(p))));
  const maxInferPerSec = Math.max(0, ...points.map((p) => p.inferPerSec));
  return {
    ...BASE,
    title: { text: "Throughput vs p99 latency", left: "center" },
    legend: { top: 40, itemGap: 30, data: runs.map((r) => r.label) },
    xAxis: {
      type: "value",
      name: "p99 latency (ms)",
      nameLocation: "middle",
      nameGap: 30,
      min: 0,
      max: niceCeiling(maxLatencyMs),
    },
    yAxis: {
      type: "value",
      name: "infer/sec",
      nameLocation: "middle",
      nameGap: 50,
      min: 0,
      max: niceCeiling(maxInferPerSec),
    },
    series: runs.map((run) => ({
      name: run.label,
      type: "line",
      symbol: "circle",
      symbolSize: 7,
      data: run.points.map((p) => [ms(curveLatencyUs(p)), Math.round(p.inferPerSec * 10) / 10, p.level]),
      label: {
        show: true,
        position: "top",
        fontSize: 10,
        formatter: (params: { value?: unknown }) =>
          `${levelPrefix(run)}${Array.isArray(params.value) ? String(params.value[2]) : ""}`,
      },
    })),
  };
}

/** One run's client-side latency percentiles (p50 / p90 / p95 / p99) per level. */
export function percentilesOption(run: ChartRun): ChartOption {
  const present = CHART_PERCENTILES.filter((p) =>
    run.points.some((point) => point.latencyUs[p] !== undefined),
  );
  const maxMs = Math.max(0, ...run.points.flatMap((p) => Object.values(p.latencyUs).map(ms)));
  return {
    ...BASE,
    title: { text: `Latency percentiles per level: ${run.label}`, left: "center" },
    legend: { top: 40, itemGap: 30, data: present.map((p) => `p${p}`) },
    xAxis: {
      type: "category",
      name: run.mode === "request_rate" ? "request rate (req/s)" : "concurrency",
      nameLocation: "middle",
      nameGap: 30,
      data: run.points.map((p) => String(p.level)),
    },
    yAxis: {
      type: "value",
      name: "latency (ms)",
      nameLocation: "middle",
      nameGap: 50,
      min: 0,
      max: niceCeiling(maxMs),
    },
    series: present.map((p) => ({
      name: `p${p}`,
      type: "line",
      symbol: "circle",
      data: run.points.map((point) => {
        const v = point.latencyUs[p];
        return v === undefined ? null : ms(v);
      }),
    })),
  };
}

const BREAKDOWN_PARTS = [
  ["queue", "queueUs"],
  ["compute input", "computeInputUs"],
  ["compute infer", "computeInferUs"],
  ["compute output", "computeOutputUs"],
] as const;

/**
 * One run's server-side time per request (queue / compute input / infer / output, averages) stacked per
 * level; undefined when the result has no server statistics (e.g. the server did not report them).
 */
export function breakdownOption(run: ChartRun): ChartOption | undefined {
  if (!run.points.some((p) => p.breakdown !== null)) return undefined;
  const totals = run.points.map((p) =>
    p.breakdown === null ? 0 : BREAKDOWN_PARTS.reduce((sum, [, key]) => sum + ms(p.breakdown?.[key] ?? 0), 0),
  );
  return {
    ...BASE,
    title: { text: `Server-side time per request: ${run.label}`, left: "center" },
    legend: { top: 40, itemGap: 30, data: BREAKDOWN_PARTS.map(([name]) => name) },
    xAxis: {
      type: "category",
      name: run.mode === "request_rate" ? "request rate (req/s)" : "concurrency",
      nameLocation: "middle",
      nameGap: 30,
      data: run.points.map((p) => String(p.level)),
    },
    yAxis: {
      type: "value",
      name: "time (ms)",
      nameLocation: "middle",
      nameGap: 50,
      min: 0,
      max: niceCeiling(Math.max(0, ...totals)),
    },
    series: BREAKDOWN_PARTS.map(([name, key]) => ({
      name,
      type: "bar",
      stack: "server",
      data: run.points.map((p) => (p.breakdown === null ? null : ms(p.breakdown[key]))),
    })),
  };
}

/** Renders an option to a standalone SVG document with echarts' server-side renderer (no browser, no DOM). */
export function renderChartSvg(option: ChartOption, size: ChartSize = DEFAULT_CHART_SIZE): string {
  const chart = echarts.init(null, null, { renderer: "svg", ssr: true, ...size });
  try {
    chart.setOption(option);
    return chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}
