// Row 5 (issue 36 item 5): SIGTERM while 32 keep-alive clients send `simple` infers in closed loops. A
// request lost is one written and then cut (socket hang up, ECONNRESET, EPIPE); a 503 with Connection:
// close is a clean answer (counted apart), and so is ECONNREFUSED (the listener was closed, nothing was
// sent). The drain is the time from the signal to the process's exit, against the server's 30 s deadline.
import { Agent, request } from "node:http";
import { loadavg } from "node:os";
import type { RowContext, RowResult } from "./row.js";
import { sleep } from "./server-child.js";

const CLIENTS = 32;
const DRAIN_DEADLINE_MS = 30_000;
/** How long after the deadline the row waits for the exit before it kills the server. */
const EXIT_WAIT_MS = DRAIN_DEADLINE_MS + 5000;

type Outcome =
  | { kind: "answer"; status: number; closing: boolean }
  | { kind: "refused" }
  | { kind: "lost"; code: string; reused: boolean; at: number };

function infer(url: string, agent: Agent, body: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request(
      `${url}/v2/models/simple/infer`,
      { method: "POST", agent, headers: { "content-type": "application/json" } },
      (res) => {
        const closing = /close/i.test(String(res.headers.connection ?? ""));
        res.resume();
        res.on("end", () => resolve({ kind: "answer", status: res.statusCode ?? 0, closing }));
        res.on("error", (e: NodeJS.ErrnoException) => resolve(lostBy(e)));
      },
    );
    req.setTimeout(EXIT_WAIT_MS, () => req.destroy(new Error("client timeout")));
    const lostBy = (e: NodeJS.ErrnoException): Outcome => ({
      kind: "lost",
      code: e.code ?? e.message,
      reused: req.reusedSocket,
      at: performance.now(),
    });
    req.on("error", (e: NodeJS.ErrnoException) =>
      resolve(e.code === "ECONNREFUSED" ? { kind: "refused" } : lostBy(e)),
    );
    req.end(body);
  });
}

export async function sigtermDrain(ctx: RowContext): Promise<RowResult> {
  const attack = `SIGTERM with ${CLIENTS} keep-alive clients under steady load on simple`;
  const steadyMs = ctx.quick ? 1500 : 3000;
  const started = performance.now();
  const loadAverage = loadavg();
  const server = await ctx.server({ models: ["simple"] });
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  ctx.scope.defer(() => agent.destroy());
  const body = JSON.stringify({
    inputs: ["INPUT0", "INPUT1"].map((name) => ({
      name,
      datatype: "INT32",
      shape: [1, 16],
      data: Array(16).fill(2),
    })),
  });
  let exited = false;
  let exitCode: number | string = "still running";
  let exitedAt = Number.POSITIVE_INFINITY;
  void server.exited.then((code) => {
    exited = true;
    exitedAt = performance.now();
    exitCode = code;
  });
  /** Where the lost requests were: on a reused keep-alive socket or a new one, before or at the exit. */
  const lostWhere = { reusedSocket: 0, newSocket: 0, beforeExit: 0, atExit: 0 };
  let signalledAt = Number.NaN;
  const before = { ok: 0, other: 0 };
  const after = { ok: 0, closing503: 0, other503: 0, otherStatus: 0, refused: 0 };
  const lost: Record<string, number> = {};
  const loopsEnd = () => exited || performance.now() > signalledAt + EXIT_WAIT_MS;
  const loops = Array.from({ length: CLIENTS }, async () => {
    for (;;) {
      const signalled = !Number.isNaN(signalledAt);
      if (signalled && loopsEnd()) return;
      const o = await infer(server.httpUrl, agent, body);
      const during = !Number.isNaN(signalledAt);
      if (o.kind === "lost") {
        lost[o.code] = (lost[o.code] ?? 0) + 1;
        lostWhere[o.reused ? "reusedSocket" : "newSocket"]++;
        // The exit is seen a little after the sockets are reset: 50 ms of margin.
        lostWhere[o.at < exitedAt - 50 ? "beforeExit" : "atExit"]++;
      } else if (!during) {
        if (o.kind === "answer" && o.status === 200) before.ok++;
        else before.other++;
      } else if (o.kind === "refused") {
        after.refused++;
        return;
      } else if (o.status === 200) after.ok++;
      else if (o.status === 503 && o.closing) after.closing503++;
      else if (o.status === 503) after.other503++;
      else after.otherStatus++;
    }
  });
  await sleep(steadyMs);
  signalledAt = performance.now();
  server.child.kill("SIGTERM");
  const exitedInTime = await Promise.race([
    server.exited.then(() => true),
    sleep(EXIT_WAIT_MS).then(() => false),
  ]);
  const drainMs = performance.now() - signalledAt;
  if (!exitedInTime) await server.destroy();
  await Promise.all(loops);
  agent.destroy();
  const lostTotal = Object.values(lost).reduce((a, b) => a + b, 0);
  const met = lostTotal === 0 && exitedInTime && drainMs < DRAIN_DEADLINE_MS;
  const lostText =
    lostTotal === 0
      ? "0 lost"
      : `${lostTotal} lost (${Object.entries(lost)
          .map(([c, n]) => `${n} ${c}`)
          .join(
            ", ",
          )}; ${lostWhere.reusedSocket} on reused keep-alive sockets, ${lostWhere.newSocket} on new ` +
        `ones; ${lostWhere.beforeExit} before the exit, ${lostWhere.atExit} at it)`;
  return {
    row: 5,
    attack,
    done:
      `node:http Agent (keep-alive, ${CLIENTS} sockets), ${CLIENTS} closed loops of JSON infers for ` +
      `${steadyMs / 1000} s, then SIGTERM; each loop goes on until refused or the server exits`,
    figures: {
      answeredBeforeSignal: before.ok,
      otherBeforeSignal: before.other,
      answered200AfterSignal: after.ok,
      answered503ConnectionClose: after.closing503,
      answered503Other: after.other503,
      otherStatusAfterSignal: after.otherStatus,
      refusedAfterSignal: after.refused,
      lost,
      lostTotal,
      lostWhere,
      drainMs: Math.round(drainMs),
      exitCode: exitedInTime ? exitCode : "killed after the deadline",
    },
    figuresText:
      `${before.ok} answered before the signal; after it ${after.ok} × 200, ${after.closing503} × 503 with ` +
      `Connection: close, ${after.other503} × 503 without, ${after.refused} refused (ECONNREFUSED), ` +
      `${lostText}; drain ${(drainMs / 1000).toFixed(2)} s, exit ${exitedInTime ? exitCode : "killed"}`,
    verdict: met ? "met" : "not met",
    verdictText:
      `${lostTotal} lost to resets (target 0), drain ${(drainMs / 1000).toFixed(2)} s ` +
      `(target < ${DRAIN_DEADLINE_MS / 1000} s)`,
    loadAverage,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
}
