// Benchmark (a program, not a test): tbench-server's own cost per request, measured so that no machine
// flatters it (issue 28). In one run, interleaved rounds, the order rotating each round, against child
// processes (tbench-server as users run it, a naive hand-written server, bare node:http handlers):
//   1. overhead: the server's CPU per request minus the model's own CPU per request (onnxruntime-node in
//      this process, at every batch size the server's batcher formed, weighted as it formed them), over the
//      CPU per request of a bare node:http handler that reads the same body and writes the same answer;
//      `heavy` JSON and binary at c=16, `simple` JSON and binary at c=8; the main thread's share beside it;
//   2. user-visible: `heavy_nobatch` and `heavy` at c=16 against the naive server, `heavy` at c=32 against
//      the in-process limit at batch 32, with the model's in-process µs per row at batch 16 beside them (the
//      targets count only where it is <= 150 µs: on a slower CPU the model hides the server), and the same
//      on `heavy_light`, `heavy` with a third of its layers (light-models.ts), fast enough on any CPU;
//   3. gRPC: `tbench -i grpc` against `tbench -i http` at c=16 and c=64 on `simple` and `heavy`, and the
//      server's CPU per request over each;
//   4. the instance never starved: its busy fraction at c=16 and c=32 on `heavy` and `heavy_light` (its
//      session's run time over the wall time, from the server's statistics), with the average batch and
//      queue time;
//   5. the batching on/off ratio at c=16 (heavy / heavy_nobatch), which must not fall.
// wrk (-t 1, closed loop) loads targets 1, 2, 4 and 5; the tbench bin loads target 3.
// Writes bench-results/server-efficiency.{json,md}.
// Run: npm run bench:server   (smoke: BENCH_QUICK=1 npm run bench:server, or --quick)
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  benchOptions,
  findWrk,
  type LoadFigure,
  loadFigureOf,
  ROOT,
  rotate,
  runTbenchCli,
  runWrk,
  startEnvironment,
  startTbenchServer,
  writeResult,
} from "@tbench/bench-kit";
import { createHttpClient, type InferenceClient } from "@tbench/client";
import { type ChildServer, spawnBareServer, spawnNaiveServer } from "./efficiency-contenders.js";
import { type EfficiencyRound, efficiencyMarkdown, type RunFigure, summarize } from "./efficiency-report.js";
import { answerOf, type BenchRequest, heavyRequest, simpleRequest } from "./efficiency-requests.js";
import { createInProcessLimit } from "./in-process-limit.js";
import { createInProcessRunCpu } from "./in-process-run-cpu.js";
import { LIGHT_MODELS, writeLightRepository } from "./light-models.js";
import { readCpu } from "./process-cpu.js";
import { batchingBetween, readStats } from "./server-statistics.js";

const options = benchOptions();
const QUICK = options.quick;
const ROUNDS = QUICK ? 1 : 3;
const WARMUP_S = 1;
const MEASURE_S = QUICK ? 1 : 4;
/** tbench's -p and settling for target 3: a level is its last 3 windows. */
const TBENCH_WINDOW_MS = QUICK ? 300 : 1500;
const TBENCH_SETTLE = QUICK ? ["-r", "3", "-s", "100"] : ["-r", "6", "-s", "15"];
/** Connections of the `simple` runs: enough to keep the server busy, few enough to not queue. */
const SIMPLE_CONNECTIONS = 8;

type ServerName = "tbench" | "tbench light" | "naive" | "naive light" | `bare ${string}`;

/** How a case loads its server: wrk with one request, or the tbench bin over HTTP or gRPC. */
type Load =
  | { readonly tool: "wrk"; readonly request: BenchRequest; readonly connections: number }
  | {
      readonly tool: "tbench";
      readonly model: string;
      readonly protocol: "http" | "grpc";
      readonly concurrency: number;
    };

/** One measured run of a round. */
interface BenchCase {
  readonly id: string;
  readonly server: ServerName;
  readonly load: Load;
  /** Read the server's CPU time over the run. */
  readonly cpu: boolean;
  /** tbench-server's model whose statistics describe the run (requests, batches, busy time). */
  readonly statsModel?: string;
}

const wrk = (request: BenchRequest, connections: number): Load => ({ tool: "wrk", request, connections });

const CASES: readonly BenchCase[] = [
  ...(["json", "binary"] as const).flatMap((encoding): BenchCase[] => [
    ...[16, 32].map((connections) => ({
      id: `heavy c=${connections} ${encoding}`,
      server: "tbench" as const,
      load: wrk(heavyRequest("heavy", encoding), connections),
      cpu: true,
      statsModel: "heavy",
    })),
    {
      id: `bare heavy ${encoding}`,
      server: `bare heavy ${encoding}`,
      load: wrk(heavyRequest("heavy", encoding), 16),
      cpu: true,
    },
    {
      id: `simple ${encoding}`,
      server: "tbench",
      load: wrk(simpleRequest(encoding), SIMPLE_CONNECTIONS),
      cpu: true,
      statsModel: "simple",
    },
    {
      id: `bare simple ${encoding}`,
      server: `bare simple ${encoding}`,
      load: wrk(simpleRequest(encoding), SIMPLE_CONNECTIONS),
      cpu: true,
    },
  ]),
  {
    id: "heavy_nobatch c=16 json",
    server: "tbench",
    load: wrk(heavyRequest("heavy_nobatch", "json"), 16),
    cpu: false,
    statsModel: "heavy_nobatch",
  },
  {
    id: "naive c=16 json",
    server: "naive",
    load: wrk(heavyRequest("heavy_nobatch", "json"), 16),
    cpu: false,
  },
  // Targets 2 and 4 again on the light model: its run leaves the server's own cost in view on any CPU.
  ...[16, 32].map(
    (connections): BenchCase => ({
      id: `${LIGHT_MODELS.batching} c=${connections} json`,
      server: "tbench light",
      load: wrk(heavyRequest(LIGHT_MODELS.batching, "json"), connections),
      cpu: true,
      statsModel: LIGHT_MODELS.batching,
    }),
  ),
  {
    id: `${LIGHT_MODELS.noBatching} c=16 json`,
    server: "tbench light",
    load: wrk(heavyRequest(LIGHT_MODELS.noBatching, "json"), 16),
    cpu: false,
    statsModel: LIGHT_MODELS.noBatching,
  },
  {
    id: "naive light c=16 json",
    server: "naive light",
    load: wrk(heavyRequest(LIGHT_MODELS.noBatching, "json"), 16),
    cpu: false,
  },
  ...(["simple", "heavy"] as const).flatMap((model) =>
    [16, 64].flatMap((concurrency) =>
      (["http", "grpc"] as const).map(
        (protocol): BenchCase => ({
          id: `tbench -i ${protocol} ${model} c=${concurrency}`,
          server: "tbench",
          load: { tool: "tbench", model, protocol, concurrency },
          cpu: true,
          statsModel: model,
        }),
      ),
    ),
  ),
];
const LIMIT_BATCHES = [16, 32] as const;
/** In-process runs of `simple` per round: its CPU per run (about 0.2 s of CPU). */
const SIMPLE_RUNS = QUICK ? 500 : 5000;
/** CPU time over which the in-process CPU of one `heavy` batch size is taken. */
const HEAVY_CPU_MS = QUICK ? 100 : 400;

/** Runs one case's load against `server`; the load tool's figures. */
async function runLoad(c: BenchCase, server: ChildServer, work: string): Promise<LoadFigure> {
  const load = c.load;
  if (load.tool === "wrk") {
    return runWrk({
      serverUrl: server.httpUrl,
      wire: load.request.wire,
      connections: load.connections,
      threads: 1,
      warmupS: WARMUP_S,
      durationS: MEASURE_S,
      workDir: work,
    });
  }
  const url = load.protocol === "http" ? server.httpUrl : server.grpcAddress;
  if (url === undefined) throw new Error("tbench-server did not start its gRPC front end");
  const level = await runTbenchCli(
    [
      ...["-m", load.model, "-i", load.protocol, "-u", url],
      ...["--concurrency-range", String(load.concurrency), "-p", String(TBENCH_WINDOW_MS), ...TBENCH_SETTLE],
    ],
    join(work, "tbench.json"),
  );
  return loadFigureOf(level);
}

/** Runs one case, reading the server's CPU and statistics around it. */
async function runCase(
  c: BenchCase,
  server: ChildServer,
  statistics: InferenceClient | undefined,
  work: string,
): Promise<RunFigure> {
  const stats = async () =>
    c.statsModel === undefined || statistics === undefined ? undefined : readStats(statistics, c.statsModel);
  const statsBefore = await stats();
  const cpuBefore = c.cpu ? readCpu(server.pid) : undefined;
  const figure = await runLoad(c, server, work);
  const cpuAfter = c.cpu ? readCpu(server.pid) : undefined;
  const statsAfter = await stats();
  const batching = statsBefore && statsAfter ? batchingBetween(statsBefore, statsAfter) : undefined;
  // The CPU reading spans the whole run, warm-up included: the server's own count of the requests it
  // answered covers the same span; where there is none (bare, naive), wrk's warm-up is counted at its rate.
  const served = batching?.requests ?? figure.requestsPerSec * (WARMUP_S + figure.durationS);
  return {
    ...figure,
    ...(cpuBefore && cpuAfter
      ? {
          cpuUsPerRequest: ((cpuAfter.processS - cpuBefore.processS) * 1e6) / served,
          mainThreadCpuUsPerRequest: ((cpuAfter.mainThreadS - cpuBefore.mainThreadS) * 1e6) / served,
        }
      : {}),
    ...(batching !== undefined ? { batching } : {}),
  };
}

async function main(): Promise<void> {
  const wrkVersion = findWrk();
  if (wrkVersion === undefined) throw new Error("this benchmark needs wrk on PATH (apt-get install wrk)");
  const finishEnvironment = startEnvironment(options);
  const work = await mkdtemp(join(tmpdir(), "tbench-efficiency-"));
  const servers = new Map<ServerName, ChildServer>();
  const clients = new Map<ServerName, InferenceClient>();
  const limit = await createInProcessLimit({
    path: join(ROOT, "examples/models/heavy/1/model.onnx"),
    inputName: "input",
    width: 256,
    intraOpThreads: 1,
    interOpThreads: 1,
  });
  const light = await writeLightRepository(work);
  const lightLimit = await createInProcessLimit({
    path: light.modelPath,
    inputName: "input",
    width: 256,
    intraOpThreads: 1,
    interOpThreads: 1,
  });
  const simpleRunCpu = await createInProcessRunCpu(join(ROOT, "examples/models/simple/1/model.onnx"), 16);
  try {
    const tbench = await startTbenchServer({ models: ["heavy", "heavy_nobatch", "simple"], grpc: true });
    servers.set("tbench", tbench);
    servers.set(
      "tbench light",
      await startTbenchServer({
        models: [LIGHT_MODELS.batching, LIGHT_MODELS.noBatching],
        repository: light.repository,
        grpc: true,
      }),
    );
    const heavyFile = join(ROOT, "examples/models/heavy_nobatch/1/model.onnx");
    servers.set("naive", await spawnNaiveServer(heavyFile, "heavy_nobatch"));
    servers.set("naive light", await spawnNaiveServer(light.modelPath, LIGHT_MODELS.noBatching));
    // One client per tbench-server reads its statistics around each run.
    for (const name of ["tbench", "tbench light"] as const) {
      clients.set(name, createHttpClient({ url: servers.get(name)!.httpUrl, connections: 1 }));
    }
    for (const c of CASES) {
      if (!c.server.startsWith("bare ") || c.load.tool !== "wrk") continue;
      const answer = await answerOf(tbench.httpUrl, c.load.request);
      const name = c.server.replaceAll(" ", "-");
      servers.set(c.server, await spawnBareServer(work, name, answer.headers, answer.body));
    }
    // Every contender answers its request once before any figure is taken.
    for (const c of CASES) {
      if (c.load.tool === "wrk") await answerOf(servers.get(c.server)!.httpUrl, c.load.request);
    }

    const rounds: EfficiencyRound[] = [];
    const steps = [...CASES.map((c) => c.id), "in-process"];
    for (let round = 0; round < ROUNDS; round++) {
      const order = rotate(steps, round);
      const result: EfficiencyRound = { order, runs: {}, limit: {}, lightLimit: {} };
      for (const step of order) {
        if (step === "in-process") {
          for (const batch of LIMIT_BATCHES) {
            result.limit[batch] = await limit.measure(batch, MEASURE_S * 1000);
            result.lightLimit[batch] = await lightLimit.measure(batch, MEASURE_S * 1000);
          }
          result.simpleRunCpuUs = await simpleRunCpu.measure(SIMPLE_RUNS);
          continue;
        }
        const c = CASES.find((x) => x.id === step)!;
        const figure = await runCase(c, servers.get(c.server)!, clients.get(c.server), work);
        result.runs[c.id] = figure;
        process.stderr.write(
          `round ${round + 1}/${ROUNDS} ${c.id}: ${figure.requestsPerSec.toFixed(0)} req/s` +
            (figure.cpuUsPerRequest !== undefined
              ? `, ${figure.cpuUsPerRequest.toFixed(0)} CPU µs/req`
              : "") +
            (figure.batching !== undefined
              ? `, batch ${figure.batching.averageBatch.toFixed(1)}, busy ${(figure.batching.busyFraction * 100).toFixed(0)}%`
              : "") +
            "\n",
        );
      }
      rounds.push(result);
    }
    // The model's own CPU at every batch size the batcher formed for `heavy` in any round, after them.
    const heavySizes = new Set<number>();
    for (const r of rounds) {
      for (const c of CASES) {
        const batching = r.runs[c.id]?.batching;
        if (c.statsModel !== "heavy" || batching === undefined) continue;
        for (const size of Object.keys(batching.executionsBySize)) heavySizes.add(Number(size));
      }
    }
    const heavyCpuPerRunUs: Record<number, number> = {};
    for (const size of [...heavySizes].sort((a, b) => a - b)) {
      heavyCpuPerRunUs[size] = await limit.cpuPerRunUs(size, HEAVY_CPU_MS);
    }
    const environment = finishEnvironment();
    const summary = summarize(rounds, heavyCpuPerRunUs);
    const paths = await writeResult(
      options,
      "server-efficiency",
      {
        environment,
        wrk: wrkVersion,
        measureS: MEASURE_S,
        warmupS: WARMUP_S,
        heavyCpuPerRunUs,
        summary,
        rounds,
      },
      efficiencyMarkdown({ environment, wrk: wrkVersion, measureS: MEASURE_S, summary, rounds }),
    );
    console.log(`wrote ${paths.join(", ")}`);
  } finally {
    for (const client of clients.values()) await client.close();
    for (const server of servers.values()) await server.close();
    await limit.close();
    await lightLimit.close();
    await simpleRunCpu.close();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
