// Row 3 (issue 36 item 3): POST /v2/repository/models/<10,000 chars>/load at concurrency 32 for 10 s
// against the server in explicit mode. Before the fix every failure was logged in full (about 20 KB each,
// 1.68 GB in 10 s). Counts what the server wrote to stderr during the flood (and 1.5 s after it, for the
// once-a-second summaries), and its longest line, as the bytes arrive (nothing is kept).
import { loadavg } from "node:os";
import { Pool } from "undici";
import type { RowContext, RowResult } from "./row.js";
import { sleep } from "./server-child.js";

const CONCURRENCY = 32;
const NAME_CHARS = 10_000;
const MAX_LINE_CHARS = 4096;
/** "A few MB per minute": 5 MB (10^6 bytes) a minute. */
const MAX_MB_PER_MINUTE = 5;
const SUMMARY_WAIT_MS = 1500;

export async function logFlood(ctx: RowContext): Promise<RowResult> {
  const attack = `POST /v2/repository/models/<${NAME_CHARS} chars>/load at concurrency ${CONCURRENCY}`;
  const seconds = ctx.quick ? 3 : 10;
  const started = performance.now();
  const loadAverage = loadavg();
  const server = await ctx.server({ models: ["simple"] });
  const pool = new Pool(server.httpUrl, { connections: CONCURRENCY, headersTimeout: 30_000 });
  ctx.scope.defer(() => pool.destroy());
  const path = `/v2/repository/models/${"m".repeat(NAME_CHARS)}/load`;
  const statuses: Record<string, number> = {};
  let sent = 0;
  await sleep(300);
  const bytesBefore = server.stderr.bytes;
  const stdoutBefore = server.stdout.bytes;
  server.stderr.resetLongest();
  const floodStart = performance.now();
  const end = floodStart + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        sent++;
        try {
          const res = await pool.request({ method: "POST", path });
          await res.body.dump();
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        } catch (error) {
          const code = (error as { code?: string }).code ?? "error";
          statuses[code] = (statuses[code] ?? 0) + 1;
        }
      }
    }),
  );
  const floodSeconds = (performance.now() - floodStart) / 1000;
  await sleep(SUMMARY_WAIT_MS);
  const bytes = server.stderr.bytes - bytesBefore;
  const stdoutBytes = server.stdout.bytes - stdoutBefore;
  const longest = server.stderr.longestLine;
  const mbPerMinute = (bytes / 1e6 / floodSeconds) * 60;
  const met = longest <= MAX_LINE_CHARS && mbPerMinute <= MAX_MB_PER_MINUTE;
  const statusText = Object.entries(statuses)
    .map(([s, n]) => `${n} × ${s}`)
    .join(", ");
  return {
    row: 3,
    attack,
    done:
      `undici Pool of ${CONCURRENCY} connections, ${CONCURRENCY} closed loops for ${seconds} s, server in ` +
      `explicit mode; the child's stderr counted from the flood's start to ${SUMMARY_WAIT_MS / 1000} s after it`,
    figures: {
      seconds: Math.round(floodSeconds * 10) / 10,
      requestsSent: sent,
      statuses,
      stderrBytes: bytes,
      stdoutBytes,
      longestLineChars: longest,
      mbPerMinute: Math.round(mbPerMinute * 100) / 100,
    },
    figuresText:
      `${sent} failing loads sent in ${floodSeconds.toFixed(1)} s (${statusText}); stderr ${bytes.toLocaleString("en")} ` +
      `bytes (${mbPerMinute.toFixed(2)} MB/min), longest line ${longest.toLocaleString("en")} chars` +
      (stdoutBytes > 0 ? `; stdout ${stdoutBytes.toLocaleString("en")} bytes` : ""),
    verdict: met ? "met" : "not met",
    verdictText:
      `longest line ${longest.toLocaleString("en")} chars (target <= ${MAX_LINE_CHARS.toLocaleString("en")}), ` +
      `${mbPerMinute.toFixed(2)} MB/min (target <= ${MAX_MB_PER_MINUTE})`,
    loadAverage,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
}
