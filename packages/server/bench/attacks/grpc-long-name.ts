// Row 1 (issue 36 item 1): a ModelInfer with a 1 MiB model name from a grpc-js client, then 50 ordinary
// ModelInfer calls on the same channel. Before the fix the server echoed the whole name in grpc-message,
// the client's HPACK decoder refused the 1 MiB trailer, and every later call on the channel went unanswered.
import { loadavg } from "node:os";
import type * as grpcJs from "@grpc/grpc-js";
import { GRPC_STATUS, GRPC_STATUS_NAMES } from "@tbench/proto";
import { type Any, createTestClient, unary } from "../../src/testing/grpc-test-client.js";
import type { RowContext, RowResult } from "./row.js";
import { MIB } from "./server-child.js";

const DEADLINE_MS = 10_000;
const CALLS = 50;
const MAX_MESSAGE_BYTES = 4096;
const A = Array.from({ length: 16 }, (_, i) => i);
const RAW = new Uint8Array(new Int32Array(A).buffer);
const INPUTS = ["INPUT0", "INPUT1"].map((name) => ({ name, datatype: "INT32", shape: [1, 16] }));

interface Outcome {
  readonly code: number;
  readonly details: string;
  readonly response?: Any;
}

export const statusName = (code: number): string => GRPC_STATUS_NAMES[code] ?? String(code);

export async function grpcLongName(ctx: RowContext): Promise<RowResult> {
  const attack = "gRPC ModelInfer with a 1 MiB model name, then 50 ordinary calls on the same channel";
  const started = performance.now();
  const loadAverage = loadavg();
  const server = await ctx.server({ models: ["simple"], grpc: true });
  const client = createTestClient(server.grpcAddress!);
  ctx.scope.defer(() => client.close());
  const call = (request: Any): Promise<Outcome> =>
    unary(client, "ModelInfer", request, { deadline: Date.now() + DEADLINE_MS }).then(
      (response) => ({ code: GRPC_STATUS.OK as number, details: "", response }),
      (error: grpcJs.ServiceError) => ({ code: error.code, details: error.details ?? "" }),
    );
  const good = { model_name: "simple", inputs: INPUTS, raw_input_contents: [RAW, RAW] };
  // The channel connects before the attack, so that the attack is not also its first call.
  const first = await call(good);
  const long = await call({ ...good, model_name: "m".repeat(MIB) });
  const after = await Promise.all(Array.from({ length: CALLS }, () => call(good)));
  const right = (o: Outcome) => {
    const out = o.response?.["raw_output_contents"]?.[0] as Uint8Array | undefined;
    if (o.code !== GRPC_STATUS.OK || out === undefined || out.byteLength !== 64) return false;
    const sums = new Int32Array(out.buffer.slice(out.byteOffset, out.byteOffset + 64));
    return sums.every((v, i) => v === 2 * A[i]!);
  };
  const ok = after.filter(right).length;
  const codes: Record<string, number> = {};
  for (const o of after) codes[statusName(o.code)] = (codes[statusName(o.code)] ?? 0) + 1;
  const messageBytes = Buffer.byteLength(long.details);
  const met = ok === CALLS && messageBytes <= MAX_MESSAGE_BYTES;
  return {
    row: 1,
    attack,
    done:
      `grpc-js client (@tbench/proto's generated code), one channel: 1 ordinary call, the 1 MiB name ` +
      `(deadline ${DEADLINE_MS / 1000} s), then ${CALLS} ModelInfer on simple at once (deadline ` +
      `${DEADLINE_MS / 1000} s each, sums checked)`,
    figures: {
      firstCall: statusName(first.code),
      longNameStatus: statusName(long.code),
      longNameMessageBytes: messageBytes,
      longNameMessageStart: long.details.slice(0, 120),
      answeredOk: ok,
      calls: CALLS,
      statuses: codes,
    },
    figuresText:
      `1 MiB name: ${statusName(long.code)}, grpc-message ${messageBytes} bytes; after it ${ok}/${CALLS} ` +
      `answered OK (${Object.entries(codes)
        .map(([c, n]) => `${n} ${c}`)
        .join(", ")})`,
    verdict: met ? "met" : "not met",
    verdictText: `${ok}/${CALLS} OK (target 50/50), message ${messageBytes} bytes (target <= ${MAX_MESSAGE_BYTES})`,
    loadAverage,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
}
