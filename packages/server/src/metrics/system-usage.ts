/**
 * Host CPU utilization and memory as Triton reports them: utilization is the busy fraction of all cores
 * since the previous reading (0..1), used memory is total minus available (MemAvailable from /proc/meminfo
 * where the system has it, free memory elsewhere).
 */
import { readFileSync } from "node:fs";
import { cpus, freemem, totalmem } from "node:os";

/** One reading of the host's CPU and memory. */
export interface SystemUsage {
  readonly cpuUtilization: number;
  readonly memoryTotalBytes: number;
  readonly memoryUsedBytes: number;
}

/** Reads usage; each call measures CPU since the previous call (the first since creation). */
export interface SystemUsageReader {
  read(): SystemUsage;
}

function cpuTimes(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const cpu of cpus()) {
    const t = cpu.times;
    const all = t.user + t.nice + t.sys + t.idle + t.irq;
    total += all;
    busy += all - t.idle;
  }
  return { busy, total };
}

function availableBytes(): number {
  try {
    const match = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync("/proc/meminfo", "utf8"));
    if (match !== null) return Number(match[1]) * 1024;
  } catch {
    // Not Linux: fall through to free memory.
  }
  return freemem();
}

/** Creates a reader whose first CPU interval starts now. */
export function createSystemUsageReader(): SystemUsageReader {
  let last = cpuTimes();
  return {
    read() {
      const now = cpuTimes();
      const total = now.total - last.total;
      const cpuUtilization = total > 0 ? Math.min(1, Math.max(0, (now.busy - last.busy) / total)) : 0;
      last = now;
      const memoryTotalBytes = totalmem();
      return { cpuUtilization, memoryTotalBytes, memoryUsedBytes: memoryTotalBytes - availableBytes() };
    },
  };
}
