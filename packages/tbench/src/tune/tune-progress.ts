import type { LoadLevel } from "../load/load-driver.js";
import type { ProgressStream } from "../report/progress-line.js";

/** The tune's progress: a live line on a terminal, one line per finished candidate everywhere. */
export interface TuneProgress {
  /** Candidate `k` (1-based) of the run starts. */
  candidate(k: number, label: string): void;
  /** A level of the current candidate starts. */
  level(level: LoadLevel): void;
  /** The current candidate ended: one permanent line. */
  done(line: string): void;
  clear(): void;
}

/** `75s` -> `1m15s`. */
export function formatSeconds(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

/**
 * Creates the progress output on `stream`. On a TTY the line shows `config k of n`, the label, the level,
 * the time elapsed and an estimate of what is left (the average time of the finished candidates times
 * those still to run); elsewhere only the per-candidate lines are written, so logs stay short.
 */
export function createTuneProgress(stream: ProgressStream, total: number, now: () => number): TuneProgress {
  const tty = stream.isTTY === true;
  const started = now();
  let k = 0;
  let label = "";
  let finished = 0;
  let drawn = false;
  const clear = () => {
    if (tty && drawn) stream.write("\r\x1b[2K");
    drawn = false;
  };
  const draw = (where: string) => {
    if (!tty) return;
    const elapsed = now() - started;
    const left = finished === 0 ? "?" : `~${formatSeconds((elapsed / finished) * (total - finished))}`;
    stream.write(
      `\r\x1b[2Ktune: config ${k} of ${total} (${label})${where}, elapsed ${formatSeconds(elapsed)}, ${left} left`,
    );
    drawn = true;
  };
  return {
    candidate(index, name) {
      k = index;
      label = name;
      draw("");
    },
    level(level) {
      draw(level.mode === "concurrency" ? `, concurrency ${level.value}` : `, rate ${level.value}/s`);
    },
    done(line) {
      finished += 1;
      clear();
      stream.write(`[${k}/${total}] ${line}\n`);
    },
    clear,
  };
}
