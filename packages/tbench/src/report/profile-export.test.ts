import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { syntheticLevel } from "../testing/synthetic-results.js";
import { formatProfileExport } from "./profile-export.js";

describe("profile export (perf_analyzer's --profile-export-file shape)", () => {
  it("writes experiments with requests and window boundaries in integer nanoseconds", () => {
    const level = syntheticLevel({
      value: 2,
      latenciesUs: [1500, 250],
      startMs: 1_700_000_000_123.5,
      durationMs: 1000,
    });
    const text = formatProfileExport([level], "0.1.0");
    // Nanosecond timestamps exceed 2^53: check the digits in the text, not through JSON.parse.
    assert.match(text, /"timestamp":1700000000123500000,/);
    assert.match(text, /"response_timestamps":\[1700000000125000000\]/);
    assert.match(text, /"window_boundaries":\[1700000000123500000,1700000001123500000\]/);
    const json = JSON.parse(text) as {
      experiments: {
        experiment: { mode: string; value: number };
        requests: { response_timestamps: unknown[]; request_inputs: object; response_outputs: unknown[] }[];
        window_boundaries: unknown[];
      }[];
      version: string;
      service_kind: string;
      endpoint: string;
    };
    assert.deepEqual(Object.keys(json), ["experiments", "version", "service_kind", "endpoint"]);
    assert.deepEqual(json.experiments[0]?.experiment, { mode: "concurrency", value: 2 });
    assert.equal(json.experiments[0]?.requests.length, 2);
    assert.deepEqual(Object.keys(json.experiments[0]!.requests[0]!), [
      "timestamp",
      "request_inputs",
      "response_timestamps",
      "response_outputs",
    ]);
    assert.equal(json.version, "0.1.0");
    assert.equal(json.service_kind, "triton");
  });

  it("a failed request has no response timestamp; rate levels are request_rate experiments", () => {
    const level = syntheticLevel({
      mode: "request_rate",
      value: 50,
      latenciesUs: [],
      errors: { INTERNAL: 1 },
    });
    const json = JSON.parse(formatProfileExport([level], "x")) as {
      experiments: { experiment: { mode: string }; requests: { response_timestamps: unknown[] }[] }[];
    };
    assert.equal(json.experiments[0]?.experiment.mode, "request_rate");
    assert.deepEqual(json.experiments[0]?.requests[0]?.response_timestamps, []);
  });

  it("a sequence model's requests carry their sequence_id after the timestamp, as perf_analyzer writes it", () => {
    const level = syntheticLevel({ value: 1, latenciesUs: [100, 200, 300], sequenceIds: [7, 0, 9] });
    const json = JSON.parse(formatProfileExport([level], "x")) as {
      experiments: { requests: Record<string, unknown>[] }[];
    };
    const requests = json.experiments[0]!.requests;
    assert.deepEqual(Object.keys(requests[0]!).slice(0, 2), ["timestamp", "sequence_id"]);
    assert.deepEqual(
      requests.map((r) => r.sequence_id),
      [7, undefined, 9],
      "an id of 0 (no sequence) is left out",
    );
  });
});
