import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createLatencyHistogram, decodeHistogram, encodeHistogram } from "../stats/histogram.js";
import { syntheticLevel } from "../testing/synthetic-results.js";
import { compareResults } from "./compare-results.js";
import { type LevelJson, parseResultJson, toResultJson } from "./json-result.js";
import { mergeResults } from "./merge-results.js";

function values(seed: number, count: number): number[] {
  // Deterministic spread over 50 us .. ~200 ms, so many HDR buckets are involved.
  let x = seed;
  return Array.from({ length: count }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return 50 + (x % 200_000);
  });
}

function roundTrip(json: ReturnType<typeof toResultJson>) {
  return parseResultJson(JSON.stringify(json), "test.json");
}

describe("merge", () => {
  it("merged histogram equals the histogram of all values; counts and throughputs add", () => {
    const a = values(1, 5000);
    const b = values(2, 7000);
    const runA = roundTrip(
      toResultJson(
        [syntheticLevel({ value: 8, latenciesUs: a, errors: { "UNAVAILABLE (503)": 3 } })],
        { mode: "concurrency" },
        "t",
      ),
    );
    const runB = roundTrip(
      toResultJson([syntheticLevel({ value: 8, latenciesUs: b })], { mode: "concurrency" }, "t"),
    );
    const merged = mergeResults([runA, runB]);
    assert.equal(merged.levels.length, 1);
    const level = merged.levels[0]!;

    const expected = createLatencyHistogram();
    for (const v of [...a, ...b]) expected.recordValue(v);
    const got = decodeHistogram(level.histograms.latencyUs);
    assert.equal(got.totalCount, 12000);
    assert.equal(encodeHistogram(got), encodeHistogram(expected));
    for (const p of [50, 90, 99, 99.9]) {
      assert.equal(level.latency.percentiles[String(p)], expected.getValueAtPercentile(p));
    }
    // The average comes from exact sums, not from the histogram.
    const all = [...a, ...b];
    assert.equal(level.latency.avgUs, all.reduce((x, y) => x + y, 0) / all.length);
    assert.equal(level.latency.maxUs, Math.max(...all));
    assert.equal(level.requestCount, 12000);
    assert.equal(level.errorCount, 3);
    assert.deepEqual(level.errorsByKind, { "UNAVAILABLE (503)": 3 });
    assert.equal(level.inferPerSec, 5000 + 7000);
    assert.equal(merged.sources, 2);
  });

  it("--json names the sequence count (null for other models); merged runs add theirs", () => {
    const run = (sequenceEnds: number | undefined) =>
      roundTrip(
        toResultJson(
          [syntheticLevel({ value: 2, latenciesUs: [100, 200], durationMs: 2000, sequenceEnds })],
          { mode: "concurrency" },
          "t",
        ),
      );
    const a = run(3);
    assert.deepEqual([a.levels[0]!.sequenceCount, a.levels[0]!.sequencesPerSec], [3, 1.5]);
    const plain = run(undefined);
    assert.deepEqual([plain.levels[0]!.sequenceCount, plain.levels[0]!.sequencesPerSec], [null, null]);
    const merged = mergeResults([a, run(5)]).levels[0]!;
    assert.deepEqual([merged.sequenceCount, merged.sequencesPerSec], [8, 4]);
    assert.equal(mergeResults([plain, plain]).levels[0]!.sequenceCount, null);
  });

  it("merges every run's uncorrected histogram (rate mode), not only the first run's", () => {
    const a = values(3, 3000);
    const b = values(4, 5000);
    const lagUs = 40;
    const run = (latenciesUs: number[]) =>
      roundTrip(
        toResultJson(
          [syntheticLevel({ mode: "request_rate", value: 100, latenciesUs, sendLagUs: lagUs })],
          { mode: "request_rate" },
          "t",
        ),
      );
    const level = mergeResults([run(a), run(b)]).levels[0]!;
    // Uncorrected latency is measured from the actual send, lagUs after the scheduled time.
    const expected = createLatencyHistogram();
    for (const v of [...a, ...b]) expected.recordValue(v - lagUs);
    const got = decodeHistogram(level.histograms.uncorrectedLatencyUs!);
    assert.equal(got.totalCount, a.length + b.length);
    assert.equal(encodeHistogram(got), encodeHistogram(expected));
    const uncorrected = level.uncorrectedLatency!;
    for (const p of [50, 90, 99]) {
      assert.equal(uncorrected.percentiles[String(p)], expected.getValueAtPercentile(p));
    }
    const all = [...a, ...b];
    assert.equal(uncorrected.avgUs, all.reduce((x, y) => x + y - lagUs, 0) / all.length);
    assert.equal(level.moments.uncorrected!.count, all.length);
  });

  it("per level: the worst status, stable only if all were, the longest duration, sums and maxima", () => {
    const run = (over: Partial<LevelJson>, sources?: number) => {
      const json = roundTrip(toResultJson([syntheticLevel({ value: 4, latenciesUs: [100, 200] })], {}, "t"));
      Object.assign(json.levels[0]!, over);
      if (sources !== undefined) json.sources = sources;
      return json;
    };
    const window = (n: number) => ({
      durationMs: n,
      inferPerSec: n,
      avgLatencyUs: n,
      p99LatencyUs: n,
      errorCount: 0,
    });
    const merged = mergeResults([
      run({
        status: "unstable",
        stable: false,
        durationMs: 3000,
        sentCount: 10,
        errorCount: 1,
        lateSendCount: 2,
        maxSendLagUs: 700,
        windows: [window(1)],
        messages: ["a"],
      }),
      run(
        {
          status: "error_rate",
          stable: true,
          durationMs: 1000,
          sentCount: 5,
          errorCount: 3,
          lateSendCount: 4,
          maxSendLagUs: 300,
          windows: [window(2)],
          messages: ["b"],
        },
        3,
      ),
      run({
        status: "ok",
        stable: true,
        durationMs: 2000,
        sentCount: 1,
        errorCount: 0,
        lateSendCount: 0,
        maxSendLagUs: 0,
        // An older file without windows or messages.
        windows: undefined as never,
        messages: undefined as never,
      }),
    ]);
    const level = merged.levels[0]!;
    assert.equal(level.status, "error_rate");
    assert.equal(level.stable, false);
    assert.equal(level.durationMs, 3000);
    assert.equal(level.sentCount, 16);
    assert.equal(level.requestCount, 6);
    assert.equal(level.errorCount, 4);
    assert.equal(level.errorRate, 4 / 10);
    assert.equal(level.lateSendCount, 6);
    assert.equal(level.maxSendLagUs, 700);
    assert.deepEqual(level.windows, [window(1), window(2)]);
    assert.deepEqual(level.messages, ["a", "b"]);
    // A plain run counts as one source; an already merged one as many as it says.
    assert.equal(merged.sources, 5);
  });

  it("levels stay apart by mode and value; all stable stays stable; equal successes and errors make 50%", () => {
    const run = (errors: number) =>
      roundTrip(
        toResultJson(
          [
            syntheticLevel({ value: 1, latenciesUs: [100, 100], errors: { "UNAVAILABLE (503)": errors } }),
            syntheticLevel({ value: 2, latenciesUs: [100] }),
          ],
          {},
          "t",
        ),
      );
    const merged = mergeResults([run(2), run(2)]);
    assert.deepEqual(
      merged.levels.map((l) => [l.value, l.requestCount, l.stable]),
      [
        [1, 4, true],
        [2, 2, true],
      ],
    );
    assert.equal(merged.levels[0]!.errorRate, 0.5);
    assert.throws(() => mergeResults([]), /^Error: merge needs at least one result$/);
  });

  it("the worst status wins in the order ok < unstable < latency_threshold < error_rate < no_data < interrupted", () => {
    const order = ["ok", "unstable", "latency_threshold", "error_rate", "no_data", "interrupted"] as const;
    const run = (status: (typeof order)[number]) => {
      const json = roundTrip(toResultJson([syntheticLevel({ value: 1, latenciesUs: [100] })], {}, "t"));
      json.levels[0]!.status = status;
      return json;
    };
    for (let i = 1; i < order.length; i++) {
      assert.equal(mergeResults([run(order[i]!), run(order[i - 1]!)]).levels[0]!.status, order[i]);
      assert.equal(mergeResults([run(order[i - 1]!), run(order[i]!)]).levels[0]!.status, order[i]);
    }
  });

  it("a level that saw no request merges as nothing: no error rate, min and percentiles from the others", () => {
    const empty = roundTrip(toResultJson([syntheticLevel({ value: 2, latenciesUs: [] })], {}, "t"));
    const full = roundTrip(toResultJson([syntheticLevel({ value: 2, latenciesUs: [300, 500] })], {}, "t"));
    const level = mergeResults([empty, full]).levels[0]!;
    assert.equal(level.latency.minUs, 300);
    assert.equal(level.moments.latency.minUs, 300);
    const none = mergeResults([empty, empty]).levels[0]!;
    assert.equal(none.errorRate, 0);
    assert.equal(none.latency.minUs, 0);
    assert.equal(none.moments.latency.minUs, 0);
  });

  it("keeps every run's --percentile, sorted among the standard ones", () => {
    const run = (p: number) => {
      const json = roundTrip(
        toResultJson([syntheticLevel({ value: 1, latenciesUs: values(5, 500) })], {}, "t"),
      );
      json.levels[0]!.latency.percentiles[String(p)] = 0;
      return json;
    };
    const level = mergeResults([run(99.99), run(75), run(99.5)]).levels[0]!;
    assert.deepEqual(
      Object.keys(level.latency.percentiles).map(Number),
      [50, 75, 90, 95, 99, 99.5, 99.9, 99.99],
    );
    assert.ok(level.latency.percentiles["75"]! > 0, "read from the merged histogram");
  });

  it("client-library times: request-weighted averages over the runs that timed some, null when none did", () => {
    const run = (http: LevelJson["http"]) => {
      const json = roundTrip(toResultJson([syntheticLevel({ value: 1, latenciesUs: [100] })], {}, "t"));
      json.levels[0]!.http = http;
      return json;
    };
    const merged = mergeResults([
      run({ count: 1, sendUs: 10, recvUs: 20, requestUs: 100 }),
      run(null),
      run({ count: 3, sendUs: 30, recvUs: 40, requestUs: 200 }),
    ]).levels[0]!;
    assert.deepEqual(merged.http, { count: 4, sendUs: 25, recvUs: 35, requestUs: 175 });
    assert.equal(mergeResults([run(null), run(null)]).levels[0]!.http, null);
  });

  it("concurrency runs have no uncorrected or send-delay figures, and the merge adds none", () => {
    const run = () => roundTrip(toResultJson([syntheticLevel({ value: 1, latenciesUs: [100] })], {}, "t"));
    const level = mergeResults([run(), run()]).levels[0]!;
    assert.equal(level.uncorrectedLatency, null);
    assert.equal(level.histograms.uncorrectedLatencyUs, null);
    assert.equal(level.moments.uncorrected, null);
    assert.equal(level.sendDelay, null);
    assert.equal(level.histograms.sendDelayUs, null);
  });

  it("rate runs: the send-delay histograms add up too", () => {
    const run = () =>
      roundTrip(
        toResultJson(
          [syntheticLevel({ mode: "request_rate", value: 10, latenciesUs: [100, 200] })],
          { mode: "request_rate" },
          "t",
        ),
      );
    const level = mergeResults([run(), run()]).levels[0]!;
    assert.ok(level.histograms.sendDelayUs !== null && level.histograms.sendDelayUs !== undefined);
    assert.ok(level.sendDelay !== null && level.sendDelay !== undefined);
  });

  it("rejects a file that is not a tbench result, naming it", () => {
    assert.throws(() => parseResultJson("{}", "x.json"), /x\.json: expected a tbench --json result/);
    assert.throws(
      () => parseResultJson("nope", "y.json"),
      /y\.json: expected a tbench --json result, the file is not JSON/,
    );
  });
});

describe("compare", () => {
  const base = roundTrip(
    toResultJson([syntheticLevel({ value: 1, latenciesUs: Array(1000).fill(1000) })], {}, "t"),
  );
  const faster = roundTrip(
    toResultJson([syntheticLevel({ value: 1, latenciesUs: Array(2000).fill(800) })], {}, "t"),
  );
  const slower = roundTrip(
    toResultJson([syntheticLevel({ value: 1, latenciesUs: Array(800).fill(1500) })], {}, "t"),
  );

  it("ratios: throughput cand/base, latency base/cand", () => {
    const rows = compareResults(base, faster, ["throughput", "p99"], {
      minRatio: 1,
      maxRegressionPercent: undefined,
    });
    assert.equal(rows[0]?.ratio, 2);
    assert.equal(
      rows[1]?.ratio,
      base.levels[0]!.latency.percentiles["99"]! / faster.levels[0]!.latency.percentiles["99"]!,
    );
    assert.ok(rows.every((r) => r.pass));
  });

  it("fails the gate on a regression beyond the limit, passes within it", () => {
    const failing = compareResults(base, slower, ["throughput"], {
      minRatio: undefined,
      maxRegressionPercent: 10,
    });
    assert.equal(failing[0]?.regressionPercent, 20);
    assert.equal(failing[0]?.pass, false);
    const passing = compareResults(base, slower, ["throughput"], {
      minRatio: undefined,
      maxRegressionPercent: 25,
    });
    assert.equal(passing[0]?.pass, true);
    assert.equal(
      compareResults(base, slower, ["p99"], { minRatio: 0.9, maxRegressionPercent: undefined })[0]?.pass,
      false,
    );
  });
});
