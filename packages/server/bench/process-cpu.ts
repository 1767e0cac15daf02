// CPU time of a process (all its threads) and of its main thread, from Linux's /proc: utime + stime in
// clock ticks (fields 14 and 15 of stat). The server efficiency benchmark divides the change over a run
// by the requests served in it. Ticks are 10 ms (CLK_TCK 100), so runs need seconds of work to be exact
// to a few percent.
import { readFileSync } from "node:fs";

/** Linux's USER_HZ: 100 on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/** CPU seconds of the process and of its main thread, now. */
export interface CpuReading {
  processS: number;
  mainThreadS: number;
}

function cpuSeconds(statPath: string): number {
  const stat = readFileSync(statPath, "utf8");
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is stat's field 3 (state), so utime (14) and stime (15) are at 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Reads the CPU time of process `pid` and of its main thread (the thread whose id is the pid). */
export function readCpu(pid: number): CpuReading {
  return {
    processS: cpuSeconds(`/proc/${pid}/stat`),
    mainThreadS: cpuSeconds(`/proc/${pid}/task/${pid}/stat`),
  };
}
