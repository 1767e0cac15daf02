import type { WindowProgress } from "../measure/level-profiler.js";

/** Where the progress line is drawn: a TTY stream (it is never drawn elsewhere). */
export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

/** A one-line live status, redrawn in place with `\r`; a no-op when the stream is not a terminal. */
export interface ProgressLine {
  update(progress: WindowProgress): void;
  clear(): void;
}

/** Creates the progress line: level, window, requests so far and current throughput. */
export function createProgressLine(stream: ProgressStream, batchSize: number): ProgressLine {
  const enabled = stream.isTTY === true;
  let drawn = false;
  return {
    update(p) {
      if (!enabled) return;
      const label =
        p.level.mode === "concurrency" ? `concurrency ${p.level.value}` : `rate ${p.level.value}/s`;
      const rate = p.elapsedMs > 0 ? (p.completed * batchSize * 1000) / p.elapsedMs : 0;
      stream.write(
        `\r\x1b[2K  [${label}] window ${p.window}: ${p.completed} requests, ${rate.toFixed(1)} infer/sec, ` +
          `${(p.elapsedMs / 1000).toFixed(1)} s`,
      );
      drawn = true;
    },
    clear() {
      if (enabled && drawn) stream.write("\r\x1b[2K");
      drawn = false;
    },
  };
}
