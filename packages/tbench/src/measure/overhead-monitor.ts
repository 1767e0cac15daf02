import { availableParallelism } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";

/** How busy tbench itself was during a window. */
export interface OverheadSummary {
  /** CPU time of the whole tbench process (all threads) over wall time, percent of one core. */
  cpuPercent: number;
  /** p99 of the main thread's event-loop delay, milliseconds. */
  eventLoopDelayP99Ms: number;
  /** Set when tbench may have limited the load it generated (see {@link createOverheadMonitor}). */
  warning: string | undefined;
}

/** Options of {@link createOverheadMonitor}. */
export interface OverheadMonitorOptions {
  /** Threads generating load (1, or the number of `--workers`). */
  loadThreads: number;
}

/** Measures tbench's own CPU and event-loop delay per window. */
export interface OverheadMonitor {
  /** Starts a window. */
  begin(): void;
  /** Ends the window and summarizes it. */
  end(): OverheadSummary;
  close(): void;
}

/** Event-loop delay above which a single-threaded load generator is no longer sending on time. */
const EVENT_LOOP_DELAY_WARN_MS = 20;
/** CPU share (of the cores tbench can use) above which tbench is probably the bottleneck. */
const CPU_WARN_FRACTION = 0.9;

/**
 * Creates the monitor. It warns when the load threads are close to saturated (CPU above 90% of one core per
 * load thread, capped at the machine's cores) or when the main event loop stalls for more than 20 ms at
 * p99: either way tbench, not the server, may be what limits the throughput measured.
 */
export function createOverheadMonitor(options: OverheadMonitorOptions): OverheadMonitor {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  let cpuStart = process.cpuUsage();
  let wallStart = performance.now();
  const usableCores = Math.min(
    options.loadThreads + (options.loadThreads > 1 ? 1 : 0),
    availableParallelism(),
  );
  return {
    begin() {
      histogram.reset();
      histogram.enable();
      cpuStart = process.cpuUsage();
      wallStart = performance.now();
    },
    end() {
      histogram.disable();
      const cpu = process.cpuUsage(cpuStart);
      const wallMs = Math.max(1, performance.now() - wallStart);
      const cpuPercent = ((cpu.user + cpu.system) / 1000 / wallMs) * 100;
      const eventLoopDelayP99Ms = histogram.count > 0 ? histogram.percentile(99) / 1e6 : 0;
      let warning: string | undefined;
      if (cpuPercent >= usableCores * 100 * CPU_WARN_FRACTION) {
        warning =
          `tbench used ${cpuPercent.toFixed(0)}% CPU (${usableCores} core(s) usable): it may be the bottleneck` +
          (availableParallelism() > usableCores ? "; try --workers N" : "");
      } else if (options.loadThreads === 1 && eventLoopDelayP99Ms > EVENT_LOOP_DELAY_WARN_MS) {
        warning = `tbench's event loop was delayed ${eventLoopDelayP99Ms.toFixed(1)} ms at p99: it may be the bottleneck`;
      }
      return { cpuPercent, eventLoopDelayP99Ms, warning };
    },
    close() {
      histogram.disable();
    },
  };
}
