// Test helper: level results built from known latencies through the real recorder and summarizer.

import { createWindowRecorder } from "../load/window-recorder.js";
import type { LevelResult } from "../measure/level-profiler.js";
import { summarizeWindows } from "../measure/measurement.js";
import type { ServerSideStats } from "../measure/server-stats.js";

/** Options of {@link syntheticLevel}. */
export interface SyntheticLevelOptions {
  mode?: "concurrency" | "request_rate";
  value: number;
  latenciesUs: readonly number[];
  errors?: Record<string, number>;
  durationMs?: number;
  server?: ServerSideStats;
  startMs?: number;
  /** Rate mode: how late each request was sent after its scheduled time, so uncorrected = latency - lag. */
  sendLagUs?: number;
  /** A sequence model's level: this many of the requests ended a sequence. */
  sequenceEnds?: number | undefined;
  /** The correlation id of each successful request, in order (a sequence model's level). */
  sequenceIds?: readonly number[];
}

/** A level whose single window holds exactly the given latencies (microseconds). */
export function syntheticLevel(options: SyntheticLevelOptions): LevelResult {
  const mode = options.mode ?? "concurrency";
  const recorder = createWindowRecorder({
    keepRequests: true,
    trackUncorrected: mode === "request_rate",
    countSequences: options.sequenceEnds !== undefined,
  });
  const start = options.startMs ?? 1_700_000_000_000;
  for (const [i, us] of options.latenciesUs.entries()) {
    recorder.recordSent(0, false);
    const sequenceId = options.sequenceIds?.[i];
    const note = sequenceId === undefined ? undefined : { sequenceId };
    recorder.recordSuccess(start, start + (options.sendLagUs ?? 0) / 1000, start + us / 1000, note);
  }
  for (let i = 0; i < (options.sequenceEnds ?? 0); i++) recorder.recordSequenceEnd();
  for (const [kind, n] of Object.entries(options.errors ?? {})) {
    for (let i = 0; i < n; i++) recorder.recordError(kind, start, start + 1);
  }
  const window = {
    startMs: start,
    endMs: start + (options.durationMs ?? 1000),
    part: recorder.swap(),
    server: options.server,
    metrics: undefined,
    overhead: { cpuPercent: 10, eventLoopDelayP99Ms: 1, warning: undefined },
  };
  const measurement = summarizeWindows([window], 1, [50, 90, 95, 99, 99.9]);
  return {
    level: { mode, value: options.value },
    status: "ok",
    stable: true,
    measurement,
    windows: [measurement],
    messages: [],
  };
}
