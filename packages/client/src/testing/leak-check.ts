/**
 * Fails a test when a client leaves sockets open: counts the process's open TCP handles before the client
 * exists and waits (bounded) for the count to come back after close. Sockets close asynchronously, so the
 * check polls on timers; the bound only decides how long a real leak takes to fail, never a pass.
 */
import { setTimeout as delay } from "node:timers/promises";

/** How many TCP sockets (client or server side, listening ones included) the process holds now. */
export function openTcpHandles(): number {
  return process.getActiveResourcesInfo().filter((r) => r === "TCPSocketWrap").length;
}

/** Resolves once the open TCP handles are back to `baseline`; rejects after `boundMs` with the count. */
export async function expectTcpHandlesBackTo(baseline: number, boundMs = 10_000): Promise<void> {
  const until = Date.now() + boundMs;
  for (;;) {
    const now = openTcpHandles();
    if (now <= baseline) return;
    if (Date.now() > until) {
      throw new Error(
        `${now - baseline} TCP socket(s) still open after the client closed (baseline ${baseline})`,
      );
    }
    await delay(20);
  }
}
