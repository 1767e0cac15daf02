import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticLevel } from "../testing/synthetic-results.js";
import type { ChartRun } from "./chart-data.js";
import { chartRunFromResult, niceCeiling } from "./chart-data.js";
import {
  breakdownOption,
  type ChartOption,
  percentilesOption,
  renderChartSvg,
  throughputLatencyOption,
} from "./charts.js";
import { toResultJson } from "./json-result.js";

/** Two runs shaped like batching on and off: on is faster at high concurrency, slower at 1. */
function batchingRuns(): ChartRun[] {
  const point = (level: number, inferPerSec: number, p99Us: number, queueUs: number) => ({
    level,
    inferPerSec,
    latencyUs: { "50": p99Us / 2, "90": p99Us * 0.8, "95": p99Us * 0.9, "99": p99Us },
    breakdown: { queueUs, computeInputUs: 20, computeInferUs: 2000, computeOutputUs: 10 },
  });
  return [
    {
      label: "batching on",
      mode: "concurrency",
      points: [point(1, 300, 4_200, 1_000), point(4, 900, 6_100, 800), point(16, 2_050, 12_700, 900)],
    },
    {
      label: "batching off",
      mode: "concurrency",
      points: [point(1, 360, 3_100, 5), point(4, 370, 12_000, 8_000), point(16, 375, 47_300, 40_000)],
    },
  ];
}

type Series = { name: string; type: string; data: unknown[]; stack?: string };
const seriesOf = (option: ChartOption) => option.series as Series[];
const axis = (option: ChartOption, name: "xAxis" | "yAxis") =>
  option[name] as { min?: number; max?: number; data?: string[] };

describe("report charts", () => {
  it("draws throughput against p99 latency with one series per run and one point per level", () => {
    const runs = batchingRuns();
    const option = throughputLatencyOption(runs);
    const series = seriesOf(option);
    assert.deepEqual(
      series.map((s) => s.name),
      ["batching on", "batching off"],
    );
    assert.deepEqual(
      series.map((s) => s.data.length),
      [3, 3],
    );
    // [p99 ms, infer/s, level] per point, from the data.
    assert.deepEqual(series[1]?.data[2], [47.3, 375, 16]);
    // Axes from 0 to a round value just above the data's maximum (47.3 ms, 2050 infer/s).
    assert.deepEqual([axis(option, "xAxis").min, axis(option, "xAxis").max], [0, 50]);
    assert.deepEqual([axis(option, "yAxis").min, axis(option, "yAxis").max], [0, 2500]);

    const svg = renderChartSvg(option);
    assert.match(svg, /^<svg[^>]* width="800" height="450"/);
    for (const label of ["batching on", "batching off", "Throughput vs p99 latency"]) {
      assert.ok(svg.includes(`>${label}<`), `the SVG shows '${label}'`);
    }
    // Every point is labelled with its level, once per run.
    for (const level of ["c=1", "c=4", "c=16"]) {
      assert.equal(svg.split(`>${level}<`).length - 1, 2, `${level} labelled on both runs`);
    }
    // One line per run (echarts draws each series' polyline as a path with no fill).
    const strokes = new Set(
      [...svg.matchAll(/<path d="M[^"]*" fill="none"[^>]*stroke="(#[0-9a-f]{6})" stroke-width="2"/g)].map(
        (m) => m[1],
      ),
    );
    assert.equal(strokes.size, 2, `two line colours, saw ${[...strokes].join(", ")}`);
  });

  it("draws each run's latency percentiles per level", () => {
    const run = batchingRuns()[1]!;
    const option = percentilesOption(run);
    const series = seriesOf(option);
    assert.deepEqual(
      series.map((s) => s.name),
      ["p50", "p90", "p95", "p99"],
    );
    assert.deepEqual(axis(option, "xAxis").data, ["1", "4", "16"]);
    assert.deepEqual(series[3]?.data, [3.1, 12, 47.3]);
    assert.equal(axis(option, "yAxis").max, 50);
    const svg = renderChartSvg(option);
    assert.ok(svg.includes(">Latency percentiles per level: batching off<"));
    assert.ok(svg.includes(">concurrency<"));
  });

  it("stacks the server-side queue / compute input / infer / output per level", () => {
    const run = batchingRuns()[1]!;
    const option = breakdownOption(run);
    assert.ok(option !== undefined);
    const series = seriesOf(option);
    assert.deepEqual(
      series.map((s) => [s.name, s.stack, s.type]),
      [
        ["queue", "server", "bar"],
        ["compute input", "server", "bar"],
        ["compute infer", "server", "bar"],
        ["compute output", "server", "bar"],
      ],
    );
    assert.deepEqual(series[0]?.data, [0.005, 8, 40]);
    assert.deepEqual(series[2]?.data, [2, 2, 2]);
    // The stack's tallest bar: 40 + 0.02 + 2 + 0.01 ms.
    assert.equal(axis(option, "yAxis").max, 50);
    assert.equal(
      breakdownOption({ ...run, points: run.points.map((p) => ({ ...p, breakdown: null })) }),
      undefined,
    );
  });

  it("takes runs from --json results, leaving out levels without a successful request", () => {
    const result = toResultJson(
      [
        syntheticLevel({ value: 1, latenciesUs: [1_000, 2_000, 3_000] }),
        syntheticLevel({ value: 2, latenciesUs: [], errors: { unavailable: 3 } }),
        syntheticLevel({ value: 4, latenciesUs: [5_000, 6_000] }),
      ],
      { mode: "concurrency" },
      "t",
    );
    const run = chartRunFromResult(result, "r");
    assert.deepEqual(
      run.points.map((p) => p.level),
      [1, 4],
    );
    assert.equal(run.mode, "concurrency");
    assert.equal(run.points[0]?.latencyUs["99"], result.levels[0]?.latency.percentiles["99"]);
    assert.equal(run.points[0]?.breakdown, null);
  });

  it("rounds axis ends up to a round multiple of a power of ten", () => {
    assert.deepEqual(
      [0, 0.7, 1, 1.2, 2.4, 3, 47.3, 2050, 6000].map(niceCeiling),
      [1, 0.8, 1, 1.5, 2.5, 3, 50, 2500, 6000],
    );
  });
});
