// Benchmark (not a test): createGrpcClient against raw @grpc/grpc-js unary calls carrying the same request
// bytes, side by side in one run, against tbench-server (in a child process) on `simple` (two INT32 [1,16]
// inputs): small-tensor infer calls per second at the same concurrency (1 and 16 calls in flight), each
// contender on its own channel (one HTTP/2 connection). Raw grpc-js is the floor under any grpc-js client:
// `Client.makeUnaryRequest` with identity serializers, the request encoded once beforehand, the answer's
// bytes not decoded. The client encodes (`infer()`; `prepareInfer()` encodes once) and decodes the answer
// into typed outputs. Rounds rotate the contenders; ratios are medians of per-round ratios.
// Target: client.infer() >= 0.9x raw grpc-js calls/s. Writes bench-results/client-grpc.{json,md}.
// Run: npm run bench:client-grpc (--quick or BENCH_QUICK=1: a short run written outside bench-results/).
import * as grpcJs from "@grpc/grpc-js";
import {
  atLeast,
  benchOptions,
  environmentMarkdown,
  median,
  medianRatio,
  rotate,
  startEnvironment,
  startTbenchServer,
  type Verdict,
  verdictMarkdown,
  writeResult,
} from "@tbench/bench-kit";
import { grpcInferenceServiceMethods } from "@tbench/proto";
import { encodeGrpcInferRequest } from "../src/grpc/grpc-infer-codec.js";
import { createGrpcClient, type InferRequest } from "../src/index.js";

const options = benchOptions();
const QUICK = options.quick;
const ROUNDS = QUICK ? 2 : 8;
const ROUND_MS = QUICK ? 300 : 1500;
const CONCURRENCY = [1, 16] as const;
const TARGET = 0.9;

const CONTENDERS = ["raw", "infer", "prepared"] as const;
type Contender = (typeof CONTENDERS)[number];
const LABELS: Record<Contender, string> = {
  raw: "raw grpc-js `makeUnaryRequest` (bytes in, bytes out)",
  infer: "`client.infer()`",
  prepared: "`prepareInfer().send()`",
};
type Call = () => Promise<unknown>;

const REQUEST: InferRequest = {
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: Int32Array.from({ length: 16 }, (_, i) => i) },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: new Int32Array(16).fill(1) },
  ],
};

/** Calls per second with `concurrency` loops each awaiting its own call, for `ms`. */
async function rateFor(run: Call, concurrency: number, ms: number): Promise<number> {
  const t0 = performance.now();
  let calls = 0;
  const loop = async () => {
    while (performance.now() - t0 < ms) {
      await run();
      calls++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return (calls / (performance.now() - t0)) * 1000;
}

async function main(): Promise<void> {
  const finishEnvironment = startEnvironment(options);
  const server = await startTbenchServer({ from: "source", models: ["simple"], grpc: true });
  const grpcAddress = server.grpcAddress!;
  const channelOptions = { "grpc.max_receive_message_length": -1, "grpc.max_send_message_length": -1 };
  const raw = new grpcJs.Client(grpcAddress, grpcJs.credentials.createInsecure(), channelOptions);
  const client = createGrpcClient({ url: grpcAddress, maxRetries: 0 });
  const identity = (b: Buffer) => b;
  const path = grpcInferenceServiceMethods.ModelInfer.path;
  const bytes = encodeGrpcInferRequest("simple", REQUEST); // the exact bytes the client sends
  const prepared = client.prepareInfer("simple", REQUEST);
  const check = (n: number) => {
    if (n !== 1) throw new Error(`simple: expected OUTPUT0[0] = 1, got ${n}`);
  };
  const calls: Record<Contender, Call> = {
    raw: () =>
      new Promise<Buffer>((resolve, reject) => {
        raw.makeUnaryRequest(path, identity, identity, bytes, new grpcJs.Metadata(), {}, (error, answer) =>
          error ? reject(error) : resolve(answer!),
        );
      }),
    infer: async () => check((await client.infer("simple", REQUEST)).outputs[0]!.as("INT32")[0]!),
    prepared: async () => check((await prepared.send()).outputs[0]!.as("INT32")[0]!),
  };
  try {
    const rates: Record<number, Record<Contender, number[]>> = {};
    for (const concurrency of CONCURRENCY) {
      for (const c of CONTENDERS) await rateFor(calls[c], concurrency, QUICK ? 200 : 800); // warm-up
      const perRound: Record<Contender, number[]> = { raw: [], infer: [], prepared: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const c of rotate(CONTENDERS, round))
          perRound[c].push(await rateFor(calls[c], concurrency, ROUND_MS));
      }
      rates[concurrency] = perRound;
    }
    const environment = finishEnvironment();
    const rows = CONCURRENCY.map((concurrency) => {
      const r = rates[concurrency]!;
      const inferRatio = medianRatio(r.infer, r.raw);
      const preparedRatio = medianRatio(r.prepared, r.raw);
      const verdict: Verdict = atLeast(inferRatio, TARGET);
      return {
        concurrency,
        callsPerSecPerRound: r,
        callsPerSec: { raw: median(r.raw), infer: median(r.infer), prepared: median(r.prepared) },
        inferOverRaw: inferRatio,
        preparedOverRaw: preparedRatio,
        verdict,
      };
    });
    const result = {
      benchmark:
        "createGrpcClient vs raw @grpc/grpc-js unary calls, same request bytes, simple, one channel each",
      environment,
      rounds: ROUNDS,
      roundMs: ROUND_MS,
      requestBytes: bytes.length,
      target: `client.infer() calls/s >= ${TARGET} x raw grpc-js at the same concurrency`,
      results: rows,
    };
    const f = (x: number) => x.toFixed(2);
    const md = [
      "# @tbench/client over gRPC vs raw @grpc/grpc-js",
      "",
      environmentMarkdown(environment),
      "",
      `tbench-server in a child process, model \`simple\` (two INT32 [1,16] inputs, ${bytes.length}-byte ` +
        "ModelInferRequest). Raw grpc-js sends the bytes the client sends, encoded once, with " +
        "`Client.makeUnaryRequest` and identity serializers, and does not decode the answer: the floor under " +
        "any grpc-js client. `client.infer()` also encodes the request and decodes the answer into typed " +
        "outputs; `prepareInfer()` encodes once. Each contender has its own channel; rounds rotate their order; " +
        `ratios are medians of per-round ratios (${ROUNDS} rounds of ${ROUND_MS / 1000} s per concurrency).`,
      "",
      "| Calls in flight | Contender | calls/s (median round) | / raw |",
      "| --- | --- | --- | --- |",
      ...rows.flatMap((row) =>
        CONTENDERS.map(
          (c) =>
            `| ${row.concurrency} | ${LABELS[c]} | ${row.callsPerSec[c].toFixed(0)} | ` +
            `${c === "raw" ? "-" : `${f(c === "infer" ? row.inferOverRaw : row.preparedOverRaw)}x`} |`,
        ),
      ),
      "",
      ...rows.map(
        (row) =>
          `Target at ${row.concurrency} in flight: \`client.infer()\` >= ${TARGET}x raw grpc-js: ` +
          `${f(row.inferOverRaw)}x, ${verdictMarkdown(row.verdict)}.`,
      ),
      "",
    ].join("\n");
    const paths = await writeResult(options, "client-grpc", result, md);
    process.stdout.write(`${md}\nwrote ${paths.join(", ")}\n`);
  } finally {
    await client.close();
    raw.close();
    await server.close();
  }
}

await main();
