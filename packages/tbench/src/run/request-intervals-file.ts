// `--request-intervals FILE`: perf_analyzer's custom send schedule, one gap in microseconds per line. The
// run sends on those gaps and reports the one level they amount to, their average rate.
import { readFile } from "node:fs/promises";
import { parseRequestIntervals, type SendSchedule } from "../load/schedule.js";
import { UsageError } from "./usage-error.js";

/** A request intervals file, read. */
export interface RequestIntervals {
  /** The gaps between sends, milliseconds, repeated in order. */
  intervalsMs: Float64Array;
  /** Their average rate, requests per second to 3 decimals: the level the run reports. */
  ratePerSec: number;
}

/** Reads and parses the file; an unreadable or malformed file is a usage error naming the flag. */
export async function readRequestIntervals(path: string): Promise<RequestIntervals> {
  const flag = `--request-intervals ${path}`;
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new UsageError(`${flag}: cannot read the file (${(error as Error).message})`);
  }
  let schedule: SendSchedule;
  try {
    schedule = parseRequestIntervals(text, flag);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return { intervalsMs: schedule.intervalsMs, ratePerSec: Math.round(schedule.ratePerSec * 1000) / 1000 };
}
