import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parsePrometheusText } from "./prometheus-text.js";

describe("parsePrometheusText", () => {
  const text = [
    "# HELP nv_inference_count Number of inferences performed",
    "# TYPE nv_inference_count counter",
    'nv_inference_count{model="simple",version="1"} 13',
    'nv_inference_count{version="2",model="simple"} 4 1733443200000',
    "nv_cpu_utilization 0.25",
    'nv_gpu_power_usage{gpu_uuid="GPU-1"} +Inf',
    'nv_gpu_utilization{gpu_uuid="GPU-1"} NaN',
    'escaped{path="a\\"b\\\\c\\nd"} -Inf',
    "not a sample line",
    "broken_value 12abc",
    "",
  ].join("\n");
  const parsed = parsePrometheusText(text);

  it("finds a sample by name and exact labels, in any label order", () => {
    assert.equal(parsed.get("nv_inference_count", { version: "1", model: "simple" }), 13);
    assert.equal(parsed.get("nv_inference_count", { model: "simple", version: "2" }), 4);
    assert.equal(parsed.get("nv_inference_count", { model: "simple" }), undefined);
    assert.equal(parsed.get("nv_cpu_utilization"), 0.25);
  });

  it("reads the format's special values and unescapes labels; skips comments and malformed lines", () => {
    assert.equal(parsed.get("nv_gpu_power_usage", { gpu_uuid: "GPU-1" }), Number.POSITIVE_INFINITY);
    assert.ok(Number.isNaN(parsed.get("nv_gpu_utilization", { gpu_uuid: "GPU-1" })));
    assert.equal(parsed.get("escaped", { path: 'a"b\\c\nd' }), Number.NEGATIVE_INFINITY);
    assert.deepEqual(
      parsed.samples.map((s) => s.name),
      [
        "nv_inference_count",
        "nv_inference_count",
        "nv_cpu_utilization",
        "nv_gpu_power_usage",
        "nv_gpu_utilization",
        "escaped",
      ],
    );
  });
});
