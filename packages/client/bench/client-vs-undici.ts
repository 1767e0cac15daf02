// Benchmark (not a test): @tbench/client against raw undici carrying the same bytes, side by side in one
// run, on one keep-alive connection to tbench-server (in a child process) with identity_fp32:
//   1. a 1 MiB FP32 tensor round trip: p50 latency;
//   2. a small (4-byte) tensor: sequential calls per second.
// Issue 16's target: client infer calls >= 0.95x raw undici `Pool.dispatch()` with the same bytes (a handler
// that only waits for the end: the floor under any undici-based client), as a rate; for the 1 MiB case the
// rate of one connection is 1 / p50, so the figure is dispatch p50 / client p50. `Pool.request()` reading
// the body is shown beside it, and the client's calls on its wire engine (its own HTTP/1.1 pool) below
// them, judged the same way. Rounds rotate the contenders' order; ratios are medians of per-round ratios.
// Writes bench-results/client.{json,md}. Run: npm run bench:client
//   --quick or BENCH_QUICK=1: a short smoke run, written under the system's temporary folder unless
//   --out DIR / BENCH_RESULTS_DIR says where.

import {
  atLeast,
  benchOptions,
  environmentMarkdown,
  median,
  medianRatio,
  rotate,
  startEnvironment,
  startTbenchServer,
  verdictMarkdown,
  writeResult,
} from "@tbench/bench-kit";
import { Pool } from "undici";
import { createHttpClient, type InferRequest } from "../src/index.js";
import { type Call, captureRequest, rawDispatch, rawOptions, rawRequest } from "./raw-undici.js";

const options = benchOptions();
const QUICK = options.quick;
const LARGE_ELEMENTS = 262_144; // 1 MiB of FP32
const LARGE_ROUNDS = QUICK ? 2 : 16;
const LARGE_PER_ROUND = QUICK ? 3 : 50;
const SMALL_ROUNDS = QUICK ? 2 : 8;
const SMALL_ROUND_MS = QUICK ? 200 : 1000;
/** Issue 16: the client's call rate >= 0.95x raw undici dispatch's, small and 1 MiB tensors. */
const TARGET = 0.95;

const CONTENDERS = ["dispatch", "request", "infer", "prepared", "wireInfer", "wirePrepared"] as const;
/** The client's rows, each judged against raw undici dispatch. */
const CLIENT_ROWS = ["infer", "prepared", "wireInfer", "wirePrepared"] as const;
type ClientRow = (typeof CLIENT_ROWS)[number];
type Contender = (typeof CONTENDERS)[number];
const LABELS: Record<Contender, string> = {
  dispatch: "raw undici `Pool.dispatch()`",
  request: "raw undici `Pool.request()`",
  infer: "`client.infer()`",
  prepared: "`prepareInfer().send()`",
  wireInfer: '`client.infer()`, engine "wire"',
  wirePrepared: '`prepareInfer().send()`, engine "wire"',
};

function request(elements: number): InferRequest {
  return {
    inputs: [
      {
        name: "INPUT0",
        datatype: "FP32",
        shape: [1, elements],
        data: Float32Array.from({ length: elements }, (_, i) => i),
      },
    ],
  };
}

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

async function latencies(run: Call, n: number, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await run();
    into.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
}

async function rateFor(run: Call, ms: number): Promise<number> {
  const t0 = performance.now();
  let calls = 0;
  while (performance.now() - t0 < ms) {
    await run();
    calls++;
  }
  return (calls / (performance.now() - t0)) * 1000;
}

type PerContender<T> = Record<Contender, T>;
const perContender = <T>(make: (c: Contender) => T): PerContender<T> =>
  Object.fromEntries(CONTENDERS.map((c) => [c, make(c)])) as PerContender<T>;

/** The client against raw undici, round by round: `better` is "lower" for latency, "higher" for rates. */
function versus(client: number[], rounds: PerContender<number[]>, better: "lower" | "higher") {
  const pick = better === "lower" ? Math.min : Math.max;
  const strongest = rounds.dispatch.map((d, i) => pick(d, rounds.request[i]!));
  const overDispatch = medianRatio(client, rounds.dispatch);
  // As a rate (more is better): a latency ratio inverts, so one connection's rate is 1 / p50.
  const rateOverDispatch = better === "higher" ? overDispatch : medianRatio(rounds.dispatch, client);
  return {
    overDispatch,
    overRequest: medianRatio(client, rounds.request),
    overStrongest: medianRatio(client, strongest),
    rateOverDispatch,
    verdict: atLeast(rateOverDispatch, TARGET),
  };
}

async function main(): Promise<void> {
  const finishEnvironment = startEnvironment(options);
  const server = await startTbenchServer({ from: "source", models: ["identity_fp32"] });
  const pool = new Pool(server.httpUrl, { connections: 1 });
  const client = createHttpClient({ url: server.httpUrl, connections: 1, maxRetries: 0 });
  const wireClient = createHttpClient({ url: server.httpUrl, connections: 1, maxRetries: 0, engine: "wire" });
  try {
    const contenders = async (req: InferRequest, check: (length: number) => void) => {
      const wire = rawOptions(
        server.httpUrl,
        await captureRequest(server.httpUrl, (c) => c.prepareInfer("identity_fp32", req).send()),
      );
      const prepared = client.prepareInfer("identity_fp32", req);
      const wirePrepared = wireClient.prepareInfer("identity_fp32", req);
      return {
        dispatch: rawDispatch(pool, wire),
        request: rawRequest(pool, wire, true),
        infer: async () => check((await client.infer("identity_fp32", req)).outputs[0]!.as("FP32").length),
        prepared: async () => check((await prepared.send()).outputs[0]!.as("FP32").length),
        wireInfer: async () =>
          check((await wireClient.infer("identity_fp32", req)).outputs[0]!.as("FP32").length),
        wirePrepared: async () => check((await wirePrepared.send()).outputs[0]!.as("FP32").length),
      } satisfies PerContender<Call>;
    };

    // 1. 1 MiB round trip: p50 per contender per round.
    const large = await contenders(request(LARGE_ELEMENTS), (n) => {
      if (n !== LARGE_ELEMENTS) throw new Error(`identity_fp32: expected ${LARGE_ELEMENTS} values, got ${n}`);
    });
    for (const c of CONTENDERS) await latencies(large[c], 10, []); // warm-up
    const all = perContender<number[]>(() => []);
    const largeP50 = perContender<number[]>(() => []);
    for (let round = 0; round < LARGE_ROUNDS; round++) {
      for (const c of rotate(CONTENDERS, round)) {
        const samples: number[] = [];
        await latencies(large[c], LARGE_PER_ROUND, samples);
        all[c].push(...samples);
        largeP50[c].push(percentile(samples, 50));
      }
    }

    // 2. small tensor calls per second on one connection.
    const small = await contenders(request(1), (n) => {
      if (n !== 1) throw new Error(`identity_fp32: expected 1 value, got ${n}`);
    });
    for (const c of CONTENDERS) await rateFor(small[c], 300); // warm-up
    const smallRates = perContender<number[]>(() => []);
    for (let round = 0; round < SMALL_ROUNDS; round++) {
      for (const c of rotate(CONTENDERS, round)) smallRates[c].push(await rateFor(small[c], SMALL_ROUND_MS));
    }

    const largeVs = Object.fromEntries(
      CLIENT_ROWS.map((c) => [c, versus(largeP50[c], largeP50, "lower")]),
    ) as Record<ClientRow, ReturnType<typeof versus>>;
    const smallVs = Object.fromEntries(
      CLIENT_ROWS.map((c) => [c, versus(smallRates[c], smallRates, "higher")]),
    ) as Record<ClientRow, ReturnType<typeof versus>>;
    const rowOf = (all: Record<ClientRow, ReturnType<typeof versus>>, c: Contender) =>
      (CLIENT_ROWS as readonly Contender[]).includes(c) ? all[c as ClientRow] : undefined;
    const environment = finishEnvironment();
    const result = {
      benchmark: "@tbench/client vs raw undici (dispatch and request), same bytes, one keep-alive connection",
      environment,
      largeRoundTrip: {
        tensorBytes: LARGE_ELEMENTS * 4,
        rounds: LARGE_ROUNDS,
        requestsPerRound: LARGE_PER_ROUND,
        p50MsPerRound: largeP50,
        p50Ms: perContender((c) => percentile(all[c], 50)),
        p99Ms: perContender((c) => percentile(all[c], 99)),
        ...largeVs,
        target: `client calls/s (1 / p50) >= ${TARGET} x raw undici dispatch's, per row`,
      },
      smallTensorRate: {
        tensorBytes: 4,
        rounds: SMALL_ROUNDS,
        roundMs: SMALL_ROUND_MS,
        callsPerSecPerRound: smallRates,
        callsPerSec: perContender((c) => median(smallRates[c])),
        ...smallVs,
        target: `client calls/s >= ${TARGET} x raw undici dispatch's, per row`,
      },
    };
    const f = (x: number) => x.toFixed(2);
    const row = (vs?: ReturnType<typeof versus>) =>
      vs === undefined
        ? "- | - | - | - | -"
        : `${f(vs.overDispatch)}x | ${f(vs.overRequest)}x | ${f(vs.overStrongest)}x | ` +
          `${f(vs.rateOverDispatch)}x | ${verdictMarkdown(vs.verdict)}`;
    const md = [
      "# @tbench/client vs raw undici",
      "",
      environmentMarkdown(environment),
      "",
      "tbench-server in a child process, one keep-alive connection, identity_fp32. Raw undici sends the bytes the " +
        "client sends (captured through the client's `dispatcher` option), two ways: `Pool.dispatch()` with a " +
        "handler that only waits for the end (the floor under any undici-based client) and `Pool.request()` " +
        "reading the body with `arrayBuffer()`. The client also encodes (`infer()` only; `prepareInfer()` encodes " +
        "once) and decodes the answer into typed outputs; the wire rows are the same calls on the client's own " +
        'HTTP/1.1 pool (`engine: "wire"`) instead of undici\'s. Rounds rotate the order of the contenders; ratios ' +
        'are medians of per-round ratios, and "strongest" divides by the faster raw contender of each round.',
      "",
      `## 1 MiB FP32 round trip (${LARGE_ROUNDS} rounds of ${LARGE_PER_ROUND} requests each)`,
      "",
      "| Contender | p50 ms | p99 ms | p50 / dispatch | p50 / request | p50 / strongest | rate / dispatch (dispatch p50 / p50) | verdict (>= 0.95x) |",
      "| --- | --- | --- | --- | --- | --- | --- | --- |",
      ...CONTENDERS.map(
        (c) =>
          `| ${LABELS[c]} | ${f(result.largeRoundTrip.p50Ms[c])} | ${f(result.largeRoundTrip.p99Ms[c])} | ` +
          `${row(rowOf(largeVs, c))} |`,
      ),
      "",
      `Target (issue 16): each client row's rate (1 / p50 on one connection) >= ${TARGET}x raw undici ` +
        "`Pool.dispatch()`'s, which sends the same bytes and neither keeps nor decodes the answer.",
      "",
      `## Small tensor (4 bytes), calls per second on one connection (${SMALL_ROUNDS} rounds of ${SMALL_ROUND_MS / 1000} s)`,
      "",
      "| Contender | calls/s (median round) | / dispatch | / request | / strongest | rate / dispatch | verdict (>= 0.95x) |",
      "| --- | --- | --- | --- | --- | --- | --- |",
      ...CONTENDERS.map(
        (c) =>
          `| ${LABELS[c]} | ${result.smallTensorRate.callsPerSec[c].toFixed(0)} | ` +
          `${row(rowOf(smallVs, c))} |`,
      ),
      "",
      `Target (issue 16): each client row >= ${TARGET}x raw undici \`Pool.dispatch()\`'s calls/s.`,
      "",
    ].join("\n");
    const paths = await writeResult(options, "client", result, md);
    process.stdout.write(`${md}\nwrote ${paths.join(", ")}\n`);
  } finally {
    await client.close();
    await wireClient.close();
    await pool.close();
    await server.close();
  }
}

await main();
