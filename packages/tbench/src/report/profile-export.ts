import type { LevelResult } from "../measure/level-profiler.js";

/** Epoch milliseconds (fractional) to integer nanoseconds, exactly as digits (beyond 2^53, so no JSON number). */
function ns(ms: number): string {
  const whole = Math.floor(ms);
  const fraction = Math.round((ms - whole) * 1e6);
  return (BigInt(whole) * 1_000_000n + BigInt(fraction)).toString();
}

/**
 * perf_analyzer's `--profile-export-file` JSON: `{"experiments": [{"experiment": {"mode", "value"},
 * "requests": [{"timestamp", "request_inputs", "response_timestamps", "response_outputs"}],
 * "window_boundaries": [...]}], "version", "service_kind", "endpoint"}`, timestamps in ns since the epoch.
 * In rate mode a request's timestamp is its scheduled send time (what the latency is measured from).
 * Failed requests have no response timestamp. A sequence model's requests carry their `sequence_id` after the
 * timestamp, as perf_analyzer writes it (only when non-zero). Inputs and outputs are not recorded (empty).
 */
export function formatProfileExport(results: readonly LevelResult[], version: string): string {
  const experiments = results.map((r) => {
    const mode = r.level.mode === "concurrency" ? "concurrency" : "request_rate";
    const requests = (r.measurement?.requests ?? []).map(
      (q) =>
        `{"timestamp":${ns(q.startMs)},${q.sequenceId ? `"sequence_id":${q.sequenceId},` : ""}"request_inputs":{},"response_timestamps":[${q.ok ? ns(q.endMs) : ""}],` +
        `"response_outputs":[${q.ok ? "{}" : ""}]}`,
    );
    const boundaries = (r.measurement?.windowBoundariesMs ?? []).map(ns);
    return (
      `{"experiment":{"mode":"${mode}","value":${r.level.value}},"requests":[${requests.join(",")}],` +
      `"window_boundaries":[${boundaries.join(",")}]}`
    );
  });
  return `{"experiments":[${experiments.join(",")}],"version":${JSON.stringify(version)},"service_kind":"triton","endpoint":""}\n`;
}
