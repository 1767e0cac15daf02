// Row 6 (issue 36 item 6): one ~30 MiB JSON infer body to identity_fp32 (its output asked as binary, so
// that what is measured is the request's decode) sent again and again, while another client drives
// `simple` at concurrency 1. Phases without and with the large body alternate in one run (the same
// server, the same load), and `simple`'s p99 is compared side by side.
import { loadavg } from "node:os";
import { Pool } from "undici";
import { ms, percentile, type RowContext, type RowResult } from "./row.js";
import { mib } from "./server-child.js";

const LARGE_VALUES = 6_300_000;
const MAX_P99_RISE_MS = 50;

const simpleBody = JSON.stringify({
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, () => 1) },
  ],
});

function largeBody(): Buffer {
  return Buffer.from(
    `{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,${LARGE_VALUES}],"data":[` +
      `${"0.25,".repeat(LARGE_VALUES - 1)}0.25]}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`,
  );
}

async function simpleLoop(pool: Pool, until: number, latencies: number[], statuses: Record<string, number>) {
  while (performance.now() < until) {
    const start = performance.now();
    try {
      const res = await pool.request({
        method: "POST",
        path: "/v2/models/simple/infer",
        headers: { "content-type": "application/json" },
        body: simpleBody,
      });
      await res.body.dump();
      latencies.push(performance.now() - start);
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    } catch (error) {
      const code = (error as { code?: string }).code ?? "error";
      statuses[code] = (statuses[code] ?? 0) + 1;
    }
  }
}

async function largeLoop(pool: Pool, body: Buffer, stop: () => boolean, statuses: Record<string, number>) {
  do {
    try {
      const res = await pool.request({
        method: "POST",
        path: "/v2/models/identity_fp32/infer",
        headers: { "content-type": "application/json" },
        body,
      });
      await res.body.arrayBuffer();
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    } catch (error) {
      const code = (error as { code?: string }).code ?? "error";
      statuses[code] = (statuses[code] ?? 0) + 1;
    }
  } while (!stop());
}

const summary = (latencies: number[]) => {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    requests: sorted.length,
    p50Ms: ms(percentile(sorted, 50)),
    p99Ms: ms(percentile(sorted, 99)),
    maxMs: ms(sorted.at(-1) ?? Number.NaN),
  };
};

export async function jsonStall(ctx: RowContext): Promise<RowResult> {
  const attack = "a ~30 MiB JSON infer body in a loop beside `simple` at concurrency 1";
  const rounds = ctx.quick ? 1 : 2;
  const phaseMs = ctx.quick ? 3000 : 8000;
  const started = performance.now();
  const loadAverage = loadavg();
  const server = await ctx.server({ models: ["simple", "identity_fp32"] });
  const opts = { connections: 1, headersTimeout: 120_000, bodyTimeout: 120_000 };
  const simplePool = new Pool(server.httpUrl, opts);
  const largePool = new Pool(server.httpUrl, opts);
  ctx.scope.defer(() => simplePool.destroy());
  ctx.scope.defer(() => largePool.destroy());
  const body = largeBody();
  const alone: number[] = [];
  const beside: number[] = [];
  const simpleStatuses: Record<string, number> = {};
  const largeStatuses: Record<string, number> = {};
  // Warm-up: both models, and whatever the first large body starts (decode threads).
  await simpleLoop(simplePool, performance.now() + 1000, [], {});
  await largeLoop(largePool, body, () => true, {});
  const order: string[] = [];
  for (let round = 0; round < rounds; round++) {
    // Rotated, so that neither phase always follows the other.
    for (const withLarge of round % 2 === 0 ? [false, true] : [true, false]) {
      order.push(withLarge ? "with" : "alone");
      let done = false;
      const large = withLarge ? largeLoop(largePool, body, () => done, largeStatuses) : Promise.resolve();
      await simpleLoop(simplePool, performance.now() + phaseMs, withLarge ? beside : alone, simpleStatuses);
      done = true;
      await large;
    }
  }
  const a = summary(alone);
  const b = summary(beside);
  const rise = b.p99Ms - a.p99Ms;
  const statusText = (s: Record<string, number>) =>
    Object.entries(s)
      .map(([k, n]) => `${n} × ${k}`)
      .join(", ");
  return {
    row: 6,
    attack,
    done:
      `undici, one connection each: \`simple\` JSON infers in a closed loop of 1; phases of ${phaseMs / 1000} s ` +
      `alone and beside a ${mib(body.byteLength)} MiB JSON body to identity_fp32 (binary output) sent in a loop, ` +
      `${rounds} round(s), order ${order.join(", ")}`,
    figures: {
      largeBodyBytes: body.byteLength,
      alone: a,
      withLargeJson: b,
      p99RiseMs: ms(rise),
      largeAnswers: largeStatuses,
      simpleAnswers: simpleStatuses,
    },
    figuresText:
      `\`simple\` alone: p50 ${a.p50Ms} / p99 ${a.p99Ms} / max ${a.maxMs} ms (${a.requests} requests); beside the ` +
      `large body: p50 ${b.p50Ms} / p99 ${b.p99Ms} / max ${b.maxMs} ms (${b.requests}); large bodies: ` +
      `${statusText(largeStatuses)}; simple: ${statusText(simpleStatuses)}`,
    verdict: rise <= MAX_P99_RISE_MS ? "met" : "not met",
    verdictText: `p99 raised by ${ms(rise)} ms (target <= ${MAX_P99_RISE_MS} ms)`,
    loadAverage,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
}
