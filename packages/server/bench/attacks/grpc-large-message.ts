// Row 2 (issue 36 item 2): a very large gRPC message, actually sent. Over raw node:http2, one ModelInfer
// whose length prefix declares 2 GiB, then up to 64 MiB of it written as fast as flow control allows. A
// bounded server answers RESOURCE_EXHAUSTED from the prefix; an unbounded one buffers what arrives. The
// server's RSS is read before, and its peak (VmHWM, reset before the call) after.
import { type ClientHttp2Stream, connect } from "node:http2";
import { loadavg } from "node:os";
import { GRPC_STATUS, grpcInferenceServiceMethods } from "@tbench/proto";
import { createTestClient, unary } from "../../src/testing/grpc-test-client.js";
import { statusName } from "./grpc-long-name.js";
import { missingFlags, type RowContext, type RowResult } from "./row.js";
import { MIB, memoryBytes, mib, resetPeak, sleep } from "./server-child.js";

const DECLARED_BYTES = 2 ** 31;
const SEND_BYTES = 64 * MIB;
const CHUNK_BYTES = MIB;
/** After the last byte, how long the status may take before the row says none came. */
const STATUS_WAIT_MS = 5000;
const MAX_GROWTH_BYTES = 256 * MIB;
const FLAG = "--grpc-max-receive-message-size";

interface Status {
  code: number | undefined;
  message: string;
}

export async function grpcLargeMessage(ctx: RowContext): Promise<RowResult> {
  const attack = "one gRPC message declared 2 GiB, 64 MiB of it sent (raw node:http2)";
  const missing = missingFlags(2, attack, ctx.help, [FLAG]);
  if (missing !== undefined) return missing;
  const started = performance.now();
  const loadAverage = loadavg();
  const server = await ctx.server({ models: ["simple"], grpc: true });
  const bound = ctx.help.defaults.get(FLAG) ?? "(not stated in --help)";
  const session = connect(`http://${server.grpcAddress!}`);
  ctx.scope.defer(() => session.destroy());
  session.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    session.once("connect", () => resolve());
    session.once("error", reject);
  });
  await sleep(500);
  const rssBefore = memoryBytes(server.pid, "VmRSS");
  resetPeak(server.pid);
  const stream = session.request({
    ":method": "POST",
    ":path": grpcInferenceServiceMethods.ModelInfer.path,
    "content-type": "application/grpc",
    te: "trailers",
  });
  stream.on("error", () => {});
  const status: Status = { code: undefined, message: "" };
  const answered = new Promise<void>((resolve) => {
    const take = (h: Record<string, unknown>) => {
      if (h["grpc-status"] === undefined) return;
      status.code = Number(h["grpc-status"]);
      status.message = decodeURIComponent(String(h["grpc-message"] ?? ""));
      resolve();
    };
    stream.on("response", take);
    stream.on("trailers", take);
    stream.on("close", () => resolve());
    stream.resume();
  });
  const sentAt = performance.now();
  const sent = await send(stream, answered);
  await Promise.race([answered, sleep(STATUS_WAIT_MS)]);
  const answeredMs = performance.now() - sentAt;
  const peak = memoryBytes(server.pid, "VmHWM");
  const rssAfter = memoryBytes(server.pid, "VmRSS");
  stream.close();
  session.destroy();
  // Does the server serve on? One ordinary call on a fresh grpc-js channel.
  const client = createTestClient(server.grpcAddress!);
  ctx.scope.defer(() => client.close());
  const raw = new Uint8Array(new Int32Array(16).fill(1).buffer);
  const input = (name: string) => ({ name, datatype: "INT32", shape: [1, 16] });
  const servesOn = await unary(
    client,
    "ModelInfer",
    { model_name: "simple", inputs: [input("INPUT0"), input("INPUT1")], raw_input_contents: [raw, raw] },
    { deadline: Date.now() + 10_000 },
  ).then(
    () => "OK",
    (error: { code: number }) => statusName(error.code),
  );
  const growth = peak - rssBefore;
  const refused = status.code === GRPC_STATUS.RESOURCE_EXHAUSTED;
  const met = refused && growth < MAX_GROWTH_BYTES;
  const answer =
    status.code === undefined
      ? `no status within ${STATUS_WAIT_MS / 1000} s of the last byte`
      : `${statusName(status.code)} "${status.message.slice(0, 160)}"`;
  return {
    row: 2,
    attack,
    done:
      `raw HTTP/2 ModelInfer: length prefix ${DECLARED_BYTES} bytes, then ${mib(SEND_BYTES)} MiB in 1 MiB ` +
      `writes (stopping at the status); server default ${FLAG} (${bound}); RSS from /proc (VmHWM reset before)`,
    figures: {
      declaredBytes: DECLARED_BYTES,
      sentBytes: sent,
      status: status.code === undefined ? null : statusName(status.code),
      grpcMessage: status.message.slice(0, 400),
      statusAfterMs: Math.round(answeredMs),
      rssBeforeMiB: mib(rssBefore),
      rssPeakMiB: mib(peak),
      rssAfterMiB: mib(rssAfter),
      peakGrowthMiB: mib(growth),
      servesOnAfter: servesOn,
    },
    figuresText:
      `${answer}; ${mib(sent)} MiB written before it; RSS ${mib(rssBefore)} -> peak ${mib(peak)} MiB ` +
      `(+${mib(growth)}); an ordinary call afterwards: ${servesOn}`,
    verdict: met ? "met" : "not met",
    verdictText:
      `${status.code === undefined ? "no status" : statusName(status.code)} (target RESOURCE_EXHAUSTED), ` +
      `peak RSS +${mib(growth)} MiB (target < ${mib(MAX_GROWTH_BYTES)} MiB)`,
    loadAverage,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
}

/** Writes the prefix and up to SEND_BYTES of payload, waiting on flow control; stops once answered. */
async function send(stream: ClientHttp2Stream, answered: Promise<void>): Promise<number> {
  let done = false;
  void answered.then(() => {
    done = true;
  });
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(DECLARED_BYTES, 1);
  stream.write(prefix);
  const chunk = Buffer.alloc(CHUNK_BYTES, 7);
  let sent = 0;
  while (sent < SEND_BYTES && !done && !stream.destroyed) {
    const more = stream.write(chunk);
    sent += CHUNK_BYTES;
    if (more) continue;
    let drained = false;
    const onDrain = () => {
      drained = true;
    };
    const drain = new Promise<void>((resolve) => stream.once("drain", resolve)).then(onDrain);
    await Promise.race([drain, answered, sleep(STATUS_WAIT_MS)]);
    // The server stopped reading (flow control never opened again): what it holds is what was sent.
    if (!drained && !done) break;
  }
  return sent;
}
