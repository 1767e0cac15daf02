import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ServerSideStats } from "../measure/server-stats.js";
import { syntheticLevel } from "../testing/synthetic-results.js";
import { csvHeader, formatCsv } from "./csv-report.js";

// perf_analyzer's headers, as its report_writer.cc writes them (Triton with the statistics extension).
const PERF_ANALYZER_HEADER =
  "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input," +
  "Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency";
const PERF_ANALYZER_VERBOSE_HEADER = `${PERF_ANALYZER_HEADER},Avg latency,request/response,response wait`;

const base = {
  mode: "concurrency" as const,
  percentile: undefined,
  verbose: false,
  includeServerStats: true,
  includeMetrics: false,
};

function server(successCount: number): ServerSideStats {
  return {
    inferenceCount: successCount,
    executionCount: successCount,
    successCount,
    failCount: 0,
    cumulativeNs: successCount * 600_000,
    queueCount: successCount,
    queueNs: successCount * 100_000,
    computeInputCount: successCount,
    computeInputNs: successCount * 10_000,
    computeInferCount: successCount,
    computeInferNs: successCount * 400_000,
    computeOutputCount: successCount,
    computeOutputNs: successCount * 20_000,
    composing: {},
  };
}

describe("CSV report", () => {
  it("has perf_analyzer's exact header and column order", () => {
    assert.equal(csvHeader(base).join(","), PERF_ANALYZER_HEADER);
    assert.equal(csvHeader({ ...base, verbose: true }).join(","), PERF_ANALYZER_VERBOSE_HEADER);
    assert.equal(
      csvHeader({ ...base, mode: "request_rate", includeServerStats: false }).join(","),
      "Request Rate,Inferences/Second,Client Send,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency",
    );
    // --percentile joins the set of percentiles in order and drops "Avg latency" from the verbose columns.
    assert.equal(
      csvHeader({ ...base, percentile: 97, verbose: true }).join(","),
      PERF_ANALYZER_HEADER.replace("p99 latency", "p97 latency,p99 latency") +
        ",request/response,response wait",
    );
  });

  it("writes one row per level, sorted by throughput ascending, in whole microseconds", () => {
    const latencies = Array.from({ length: 1000 }, (_, i) => 1000 + i); // 1000..1999 us
    const slow = syntheticLevel({ value: 4, latenciesUs: latencies.slice(0, 100), server: server(100) });
    const fast = syntheticLevel({ value: 1, latenciesUs: latencies, server: server(1000) });
    const csv = formatCsv([fast, slow], { ...base, verbose: true });
    const [header, first, second, ...rest] = csv.trimEnd().split("\n");
    assert.equal(header, PERF_ANALYZER_VERBOSE_HEADER);
    assert.equal(rest.length, 0);
    const row = (line: string | undefined) =>
      Object.fromEntries(header!.split(",").map((h, i) => [h, line!.split(",")[i]]));
    assert.equal(row(first)["Concurrency"], "4");
    assert.equal(row(first)["Inferences/Second"], "100");
    assert.equal(row(second)["Concurrency"], "1");
    assert.equal(row(second)["Inferences/Second"], "1000");
    const r = row(second);
    assert.equal(r["Server Queue"], "100");
    assert.equal(r["Server Compute Input"], "10");
    assert.equal(r["Server Compute Infer"], "400");
    assert.equal(r["Server Compute Output"], "20");
    // average latency 1499.5 us - queue 100 - compute 430 = 969 us of network + server send/recv
    assert.equal(r["Network+Server Send/Recv"], "969");
    assert.equal(r["Avg latency"], "1499");
    assert.equal(r["p50 latency"], "1499");
    assert.equal(r["p99 latency"], "1989");
  });
});
