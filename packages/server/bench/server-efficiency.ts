// Benchmark (a program, not a test): how close tbench-server comes to what its parts allow, and whether
// it beats the server a JavaScript developer writes by hand (issue 16). In one run, interleaved rounds,
// the order rotating each round, load from wrk (-t 1, closed loop) against child processes:
//   1. `heavy` (dynamic batching, one instance) at c=16 and c=32, JSON and binary bodies, against the
//      in-process limit: onnxruntime-node running the same file at batch 16 / 32 in this process;
//   2. `heavy_nobatch` and `heavy` at c=16 against the naive server (naive-server.mjs) on the same file;
//   3. server CPU per `simple` request (process CPU from /proc over the run / requests), JSON and binary,
//      against a bare node:http handler that reads the same body and writes the same answer, and the floor
//      under that ratio: the bare handler plus one in-process `session.run()` of `simple`;
//   5. the batching on/off ratio at c=16 (heavy / heavy_nobatch), which must stay where it was;
// and, without a target, `simple` and `heavy` c=32 with the HTTP front end in 2 threads (--http-thread-count).
// Target 4 (tbench vs wrk, the client vs raw undici) is measured by bench:tbench and bench:client.
// Writes bench-results/server-efficiency.{json,md}.
// Run: npm run bench:server   (smoke: BENCH_QUICK=1 npm run bench:server, or --quick)
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  benchOptions,
  ROOT,
  rotate,
  startEnvironment,
  writeResult,
} from "../../../scripts/bench/bench-kit.js";
import { findWrk, runWrk } from "../../tbench/bench/wrk-run.js";
import {
  type ChildServer,
  spawnBareServer,
  spawnNaiveServer,
  spawnTbenchServer,
} from "./efficiency-contenders.js";
import { type EfficiencyRound, efficiencyMarkdown, summarize } from "./efficiency-report.js";
import { answerOf, type BenchRequest, heavyRequest, simpleRequest } from "./efficiency-requests.js";
import { createInProcessLimit } from "./in-process-limit.js";
import { createInProcessRunCpu } from "./in-process-run-cpu.js";
import { readCpu } from "./process-cpu.js";

const options = benchOptions();
const QUICK = options.quick;
const ROUNDS = QUICK ? 1 : 3;
const WARMUP_S = 1;
const MEASURE_S = QUICK ? 1 : 4;
/** Connections of the CPU-per-request runs: enough to keep the server busy, few enough to not queue. */
const CPU_CONNECTIONS = 8;

/** The suffix of the runs against tbench-server with its HTTP front end in two threads. */
const THREADS_2 = "2 HTTP threads";

type ServerName = "tbench" | "tbench-2-threads" | "naive" | "bare-json" | "bare-binary";

/** One measured run of a round. */
export interface BenchCase {
  readonly id: string;
  readonly server: ServerName;
  readonly request: BenchRequest;
  readonly connections: number;
  /** Also read the server's CPU time over the run. */
  readonly cpu: boolean;
}

const CASES: readonly BenchCase[] = [
  ...(["json", "binary"] as const).flatMap((encoding) =>
    [16, 32].map((connections) => ({
      id: `heavy c=${connections} ${encoding}`,
      server: "tbench" as const,
      request: heavyRequest("heavy", encoding),
      connections,
      cpu: false,
    })),
  ),
  {
    id: "heavy_nobatch c=16 json",
    server: "tbench",
    request: heavyRequest("heavy_nobatch", "json"),
    connections: 16,
    cpu: false,
  },
  {
    id: "naive c=16 json",
    server: "naive",
    request: heavyRequest("heavy_nobatch", "json"),
    connections: 16,
    cpu: false,
  },
  {
    id: "simple json",
    server: "tbench",
    request: simpleRequest("json"),
    connections: CPU_CONNECTIONS,
    cpu: true,
  },
  {
    id: "simple binary",
    server: "tbench",
    request: simpleRequest("binary"),
    connections: CPU_CONNECTIONS,
    cpu: true,
  },
  {
    id: `heavy c=32 json, ${THREADS_2}`,
    server: "tbench-2-threads",
    request: heavyRequest("heavy", "json"),
    connections: 32,
    cpu: false,
  },
  {
    id: `simple json, ${THREADS_2}`,
    server: "tbench-2-threads",
    request: simpleRequest("json"),
    connections: CPU_CONNECTIONS,
    cpu: true,
  },
  {
    id: "bare json",
    server: "bare-json",
    request: simpleRequest("json"),
    connections: CPU_CONNECTIONS,
    cpu: true,
  },
  {
    id: "bare binary",
    server: "bare-binary",
    request: simpleRequest("binary"),
    connections: CPU_CONNECTIONS,
    cpu: true,
  },
];
const LIMIT_BATCHES = [16, 32] as const;
/** In-process runs of `simple` per round for the floor of target 3 (about 0.2 s of CPU). */
const FLOOR_RUNS = QUICK ? 500 : 5000;

async function main(): Promise<void> {
  const wrkVersion = findWrk();
  if (wrkVersion === undefined) throw new Error("this benchmark needs wrk on PATH (apt-get install wrk)");
  const finishEnvironment = startEnvironment(options);
  const work = await mkdtemp(join(tmpdir(), "tbench-efficiency-"));
  const servers = new Map<ServerName, ChildServer>();
  const limit = await createInProcessLimit({
    path: join(ROOT, "examples/models/heavy/1/model.onnx"),
    inputName: "input",
    width: 256,
    intraOpThreads: 1,
    interOpThreads: 1,
  });
  const runCpu = await createInProcessRunCpu(join(ROOT, "examples/models/simple/1/model.onnx"), 16);
  try {
    const tbench = await spawnTbenchServer(["heavy", "heavy_nobatch", "simple"]);
    servers.set("tbench", tbench);
    servers.set("tbench-2-threads", await spawnTbenchServer(["heavy", "simple"], 2));
    servers.set("naive", await spawnNaiveServer("heavy_nobatch", "heavy_nobatch"));
    for (const encoding of ["json", "binary"] as const) {
      const answer = await answerOf(tbench.httpUrl, simpleRequest(encoding));
      servers.set(`bare-${encoding}`, await spawnBareServer(work, encoding, answer.headers, answer.body));
    }
    // Every contender answers its request once before any figure is taken.
    for (const c of CASES) await answerOf(servers.get(c.server)!.httpUrl, c.request);

    const rounds: EfficiencyRound[] = [];
    const steps = [...CASES.map((c) => c.id), "in-process limit"];
    for (let round = 0; round < ROUNDS; round++) {
      const order = rotate(steps, round);
      const result: EfficiencyRound = { order, runs: {}, limit: {} };
      for (const step of order) {
        if (step === "in-process limit") {
          for (const batch of LIMIT_BATCHES)
            result.limit[batch] = await limit.measure(batch, MEASURE_S * 1000);
          result.simpleRunCpuUs = await runCpu.measure(FLOOR_RUNS);
          continue;
        }
        const c = CASES.find((x) => x.id === step)!;
        const server = servers.get(c.server)!;
        const before = c.cpu ? readCpu(server.pid) : undefined;
        const figure = await runWrk({
          serverUrl: server.httpUrl,
          wire: c.request.wire,
          connections: c.connections,
          threads: 1,
          warmupS: WARMUP_S,
          durationS: MEASURE_S,
          workDir: work,
        });
        // The CPU reading spans the warm-up too: count its requests by the measured rate.
        const after = c.cpu ? readCpu(server.pid) : undefined;
        const served = figure.requestsPerSec * (WARMUP_S + figure.durationS);
        result.runs[c.id] = {
          ...figure,
          ...(before && after
            ? {
                cpuUsPerRequest: ((after.processS - before.processS) * 1e6) / served,
                mainThreadCpuUsPerRequest: ((after.mainThreadS - before.mainThreadS) * 1e6) / served,
              }
            : {}),
        };
        process.stderr.write(
          `round ${round + 1}/${ROUNDS} ${c.id}: ${figure.requestsPerSec.toFixed(0)} req/s\n`,
        );
      }
      rounds.push(result);
    }
    const environment = finishEnvironment();
    const summary = summarize(rounds);
    const paths = await writeResult(
      options,
      "server-efficiency",
      { environment, wrk: wrkVersion, measureS: MEASURE_S, warmupS: WARMUP_S, summary, rounds },
      efficiencyMarkdown({ environment, wrk: wrkVersion, measureS: MEASURE_S, summary, rounds }),
    );
    console.log(`wrote ${paths.join(", ")}`);
  } finally {
    for (const server of servers.values()) await server.close();
    await limit.close();
    await runCpu.close();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
