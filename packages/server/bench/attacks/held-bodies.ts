// Row 4 (issue 36 item 4): 40 clients at once, each sending a 60 MiB binary infer body to identity_int8:
// half of it at once, then held for a few seconds, then the rest. Before --http-max-buffered-bytes the
// server held every body it was sent (0.9 -> 3.5 GB). Measures the server's RSS before, its peak while the
// bodies are held and over the whole row (VmHWM), the answers (200 / 503 / 413 / errors), and its RSS after
// the clients have left and a little ordinary traffic has run (so that V8 collects what it freed).
import { request } from "node:http";
import { loadavg, totalmem } from "node:os";
import { missingFlags, type RowContext, type RowResult } from "./row.js";
import { MIB, memoryBytes, mib, resetPeak, sleep } from "./server-child.js";

const CLIENTS = 40;
/** A quick run proves the row works with fewer clients (2.4 GB through two shared cores takes a minute). */
const QUICK_CLIENTS = 10;
const BODY_BYTES = 60 * MIB;
const FLAG = "--http-max-buffered-bytes";
/** Peak growth may pass the bound by this much (heap, onnxruntime's copy of a running tensor, answers). */
const SLACK_BYTES = 256 * MIB;
/** Memory "returns" when RSS after is within this of RSS before, or within a quarter of the peak growth. */
const RETURN_SLACK_BYTES = 64 * MIB;
const CLIENT_TIMEOUT_MS = 120_000;

/** The bound the server applies without the flag: stated in --help, else the README's rule. */
function defaultBound(ctx: RowContext): { bytes: number; source: string } {
  const stated = Number(ctx.help.defaults.get(FLAG));
  if (Number.isSafeInteger(stated) && stated > 0) return { bytes: stated, source: "--help default" };
  const maxInput = Number(ctx.help.defaults.get("--http-max-input-size") ?? 64 * MIB);
  return {
    bytes: Math.max(Math.floor(totalmem() / 8), 2 * maxInput),
    source: "README: an eighth of os.totalmem(), at least twice --http-max-input-size",
  };
}

type Outcome = number | string;

interface Upload {
  readonly outcome: Promise<Outcome>;
  /** Bytes handed to the kernel so far (the server may not have read them all). */
  written(): number;
}

function heldUpload(url: string, release: Promise<void>, header: Buffer, section: Buffer): Upload {
  let written = () => 0;
  const outcome = new Promise<Outcome>((resolve) => {
    let status: number | undefined;
    const req = request(
      `${url}/v2/models/identity_int8/infer`,
      {
        method: "POST",
        agent: false,
        headers: {
          "content-type": "application/octet-stream",
          "content-length": header.byteLength + section.byteLength,
          "inference-header-content-length": header.byteLength,
        },
      },
      (res) => {
        status = res.statusCode ?? 0;
        res.resume();
        res.on("end", () => resolve(status!));
        res.on("error", () => resolve(status!));
      },
    );
    // bytesWritten counts what is still queued in the socket too: what left for the kernel is the rest.
    written = () => (req.socket === null ? 0 : req.socket.bytesWritten - req.socket.writableLength);
    req.setTimeout(CLIENT_TIMEOUT_MS, () => req.destroy(new Error("client timeout")));
    req.on("error", (error: NodeJS.ErrnoException) => resolve(status ?? error.code ?? error.message));
    req.write(header);
    const half = section.byteLength >> 1;
    req.write(section.subarray(0, half));
    void release.then(() => {
      if (status === undefined && !req.destroyed) req.end(section.subarray(half));
    });
  });
  return { outcome, written: () => written() };
}

async function simpleTraffic(url: string, ms: number): Promise<number> {
  const body = JSON.stringify({
    inputs: ["INPUT0", "INPUT1"].map((name) => ({
      name,
      datatype: "INT32",
      shape: [1, 16],
      data: Array(16).fill(1),
    })),
  });
  let answered = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    answered += await new Promise<number>((resolve) => {
      const req = request(
        `${url}/v2/models/simple/infer`,
        { method: "POST", agent: false, headers: { "content-type": "application/json" } },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode === 200 ? 1 : 0));
        },
      );
      req.on("error", () => resolve(0));
      req.end(body);
    });
    await sleep(20);
  }
  return answered;
}

export async function heldBodies(ctx: RowContext): Promise<RowResult> {
  const clients = ctx.quick ? QUICK_CLIENTS : CLIENTS;
  const attack = `${clients} clients each sending a 60 MiB binary infer body, half of it then held`;
  const missing = missingFlags(4, attack, ctx.help, [FLAG]);
  if (missing !== undefined) return missing;
  const holdMs = ctx.quick ? 2000 : 5000;
  const afterMs = ctx.quick ? 3000 : 10_000;
  const started = performance.now();
  const loadAverage = loadavg();
  const bound = defaultBound(ctx);
  const server = await ctx.server({ models: ["simple", "identity_int8"] });
  const header = Buffer.from(
    JSON.stringify({
      inputs: [
        {
          name: "INPUT0",
          datatype: "INT8",
          shape: [1, BODY_BYTES],
          parameters: { binary_data_size: BODY_BYTES },
        },
      ],
      outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }],
    }),
  );
  const section = Buffer.alloc(BODY_BYTES, 3);
  await simpleTraffic(server.httpUrl, 500);
  await sleep(500);
  const rssBefore = memoryBytes(server.pid, "VmRSS");
  resetPeak(server.pid);
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  ctx.scope.defer(release);
  const uploads = Array.from({ length: clients }, () =>
    heldUpload(server.httpUrl, released, header, section),
  );
  await sleep(holdMs);
  const writtenWhenHeld = uploads.reduce((sum, u) => sum + u.written(), 0);
  const peakHeld = memoryBytes(server.pid, "VmHWM");
  const rssHeld = memoryBytes(server.pid, "VmRSS");
  release();
  const outcomes = await Promise.all(uploads.map((u) => u.outcome));
  const peak = memoryBytes(server.pid, "VmHWM");
  const rssDone = memoryBytes(server.pid, "VmRSS");
  const simpleAnswered = await simpleTraffic(server.httpUrl, afterMs);
  const rssAfter = memoryBytes(server.pid, "VmRSS");
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[String(o)] = (counts[String(o)] ?? 0) + 1;
  const growth = peak - rssBefore;
  const left = rssAfter - rssBefore;
  const returnSlack = Math.max(RETURN_SLACK_BYTES, growth / 4);
  const withinBound = growth <= bound.bytes + SLACK_BYTES;
  const returned = left <= returnSlack;
  const countText = Object.entries(counts)
    .map(([s, n]) => `${n} × ${s}`)
    .join(", ");
  return {
    row: 4,
    attack,
    done:
      `${clients} node:http connections at once to identity_int8 (binary output), each writes the header and ` +
      `${mib(BODY_BYTES / 2)} MiB, holds ${holdMs / 1000} s, then sends the rest and reads the answer; server ` +
      `default ${FLAG} = ${mib(bound.bytes)} MiB (${bound.source}); afterwards ${afterMs / 1000} s of ` +
      "sequential `simple` requests before RSS is read again",
    figures: {
      boundBytes: bound.bytes,
      boundSource: bound.source,
      slackMiB: mib(SLACK_BYTES),
      answers: counts,
      writtenWhenHeldMiB: mib(writtenWhenHeld),
      rssBeforeMiB: mib(rssBefore),
      rssWhileHeldMiB: mib(rssHeld),
      rssPeakWhileHeldMiB: mib(peakHeld),
      rssPeakMiB: mib(peak),
      rssWhenAnsweredMiB: mib(rssDone),
      rssAfterMiB: mib(rssAfter),
      peakGrowthMiB: mib(growth),
      leftAfterMiB: mib(left),
      simpleAnsweredAfter: simpleAnswered,
    },
    figuresText:
      `answers: ${countText}; ${mib(writtenWhenHeld)} MiB had left the clients when the hold ended; ` +
      `RSS ${mib(rssBefore)} MiB before, peak ${mib(peakHeld)} while held, peak ` +
      `${mib(peak)} overall (+${mib(growth)}), ${mib(rssDone)} when answered, ${mib(rssAfter)} after ` +
      `${afterMs / 1000} s (+${mib(left)} over before)`,
    verdict: withinBound && returned ? "met" : "not met",
    verdictText:
      `peak growth ${mib(growth)} MiB (target <= bound ${mib(bound.bytes)} + slack ${mib(SLACK_BYTES)} MiB); ` +
      `${mib(left)} MiB still held after (target <= ${mib(returnSlack)} MiB: 64 MiB or a quarter of the peak ` +
      `growth). Peak growth is ${(growth / bound.bytes).toFixed(2)}x the bound (the README: what is counted ` +
      "is held about twice over)",
    loadAverage,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
}
