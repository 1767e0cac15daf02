/**
 * Issue 14, faults: the server restarted during a tbench run (in process, -i http and -i grpc). The run
 * starts against server A; once A has served requests, A closes and a placeholder on the same ports
 * accepts and drops connections until tbench has tried a few (so errors are certain, not a race), then
 * server B starts on the same ports with a core loaded beforehand. tbench counts the failed requests, does
 * not die (the run ends with its result file) and recovers: B serves tbench's requests after the restart,
 * and tbench's last window has successes and no errors. gRPC's recovery waits for grpc-js's reconnect
 * backoff (1 s, then x1.6 per failed attempt, as Triton's C++ clients), so a few windows may pass first.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createInferenceCore, type RunningServer, startServer } from "@tbench/server";
import { parseResultJson } from "../report/json-result.js";
import { runCli } from "./run-cli.js";

const MODELS = fileURLToPath(new URL("../../../../examples/models", import.meta.url));
const quiet = { error() {}, warn() {}, info() {}, verbose() {}, debug() {} };
const sink = { write: () => true };

const until = async (condition: () => boolean): Promise<void> => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
};

const serverOptions = {
  modelRepository: MODELS,
  modelControlMode: "explicit",
  loadModels: ["simple"],
} as const;

async function start(
  httpPort: number,
  grpcPort: number,
  core?: Awaited<ReturnType<typeof createInferenceCore>>,
) {
  return startServer({
    ...serverOptions,
    httpPort,
    grpcPort,
    metricsPort: false,
    logger: quiet as never,
    ...(core ? { core } : {}),
  });
}

/** Listens on `port` and destroys every connection; counts them. */
async function placeholder(port: number): Promise<{ connections: () => number; close: () => Promise<void> }> {
  let count = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.on("error", () => {});
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return {
    connections: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("tbench through a server restart", { timeout: 120_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tbench-restart-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const protocol of ["http", "grpc"] as const) {
    it(`-i ${protocol}: errors are counted, the run goes on, requests succeed after the restart`, async () => {
      // B's core is loaded first, so the ports are free only for as long as the placeholder needs.
      const core = await createInferenceCore({ ...serverOptions, logger: quiet as never });
      let a: RunningServer | undefined = await start(0, 0);
      let b: RunningServer | undefined;
      try {
        const httpPort = Number(new URL(a.httpUrl).port);
        const grpcPort = Number(a.grpcAddress!.split(":").pop());
        const json = join(dir, `${protocol}.json`);
        let stderr = "";
        const url = protocol === "http" ? a.httpUrl : a.grpcAddress!;
        // Three windows at least (stability needs three), twenty at most; the restart comes early in the
        // first. Should the run end first, the test fails with that said (it never waits on a dead run).
        let finished = false;
        const run = runCli(
          [
            "-m",
            "simple",
            "-i",
            protocol,
            "-u",
            url,
            "--concurrency-range",
            "4",
            "-p",
            "500",
            "-r",
            "20",
          ].concat(["--json", json]),
          {
            stdout: sink,
            stderr: {
              write: (t: string) => {
                stderr += t;
                return true;
              },
            },
            signal: new AbortController().signal,
          },
        ).finally(() => {
          finished = true;
        });
        const servedByA = () => a!.core.modelStatistics("simple")[0]!.inference_stats.success.count;
        await until(() => servedByA() >= 20 || finished);
        assert.equal(finished, false, "the run is still going when the server restarts");
        await a.close();
        a = undefined;
        const port = protocol === "http" ? httpPort : grpcPort;
        const held = await placeholder(port);
        await until(() => held.connections() >= 1 || finished);
        assert.equal(finished, false, "tbench tried the ports while the server was down");
        await held.close();
        b = await start(httpPort, grpcPort, core);
        const code = await run;
        // 1: the level has errors; 0: it has none in the windows it reports (when it did not stabilise,
        // the last ones). Either way the run ended and wrote its result.
        assert.ok(code === 0 || code === 1, `the run ends normally, got ${code}: ${stderr}`);
        const level = parseResultJson(await readFile(json, "utf8"), json).levels[0]!;
        const servedByB = b.core.modelStatistics("simple")[0]!.inference_stats.success.count;
        const errors = level.windows.reduce((sum, w) => sum + w.errorCount, 0);
        assert.ok(errors > 0, "the failed requests are counted in the windows that saw them");
        assert.ok(servedByB > 0, "tbench's requests reached the restarted server");
        const last = level.windows.at(-1)!;
        assert.ok(last.inferPerSec > 0 && last.errorCount === 0, `recovered: ${JSON.stringify(last)}`);
        for (const kind of Object.keys(level.errorsByKind)) {
          assert.equal(kind, protocol === "http" ? "CONNECTION" : "CONNECTION (grpc UNAVAILABLE)");
        }
        if (process.env.TBENCH_RESTART_FIGURES) {
          const windows = level.windows.map((w) => [Math.round(w.inferPerSec), w.errorCount]);
          console.log(protocol, JSON.stringify({ code, errors, servedByB, windows }));
        }
      } finally {
        await a?.close();
        if (b) await b.close();
        else await core.close();
      }
    });
  }
});
