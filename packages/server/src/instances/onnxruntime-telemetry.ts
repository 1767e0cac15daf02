/**
 * onnxruntime-node 1.29 and later start a telemetry uploader on Linux and macOS when the runtime first
 * initialises (it tries HTTPS uploads and leaves a `/tmp/mat-debug-<pid>.log` behind per process) unless
 * ORT_DISABLE_TELEMETRY is set. A model server should not phone home, so tbench-server sets it to 1 before
 * any instance thread loads the runtime; an operator who sets the variable keeps their own value.
 *
 * It must be set in the main thread: a worker thread's `process.env` is its own copy, invisible to native
 * code, while the runtime reads the process environment once, at its first initialisation in any thread.
 */
export const ONNXRUNTIME_TELEMETRY_VARIABLE = "ORT_DISABLE_TELEMETRY";

export function keepOnnxRuntimeTelemetryOff(env: NodeJS.ProcessEnv = process.env): void {
  if (env[ONNXRUNTIME_TELEMETRY_VARIABLE] === undefined) env[ONNXRUNTIME_TELEMETRY_VARIABLE] = "1";
}
