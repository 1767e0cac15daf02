// The processes the server efficiency benchmark measures, each a child process so that none shares an
// event loop with the load generator or with another: tbench-server as users run it (its bin, built),
// the naive hand-written server (naive-server.mjs) and the bare node:http handler (bare-server.mjs).
import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ROOT } from "../../../scripts/bench/bench-kit.js";

/** A server in a child process. */
export interface ChildServer {
  readonly httpUrl: string;
  /** `host:port` of tbench-server's gRPC front end, when it was started with one. */
  readonly grpcAddress?: string;
  readonly pid: number;
  close(): Promise<void>;
}

const SERVER_BIN = join(ROOT, "packages/server/bin/tbench-server.mjs");
const BENCH_DIR = join(ROOT, "packages/server/bench");

/** Spawns `args` and resolves once `findUrl` finds the URL in what the child printed. */
function spawnChild(
  args: readonly string[],
  findUrls: (output: string) => { httpUrl: string; grpcAddress?: string } | undefined,
): Promise<ChildServer> {
  const child: ChildProcess = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let output = "";
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
      const urls = findUrls(output);
      if (urls === undefined || child.pid === undefined) return;
      child.stdout?.off("data", onData);
      child.stderr?.off("data", onData);
      // Keep draining what the child writes, so a full pipe never blocks it.
      child.stdout?.resume();
      child.stderr?.resume();
      resolve({
        ...urls,
        pid: child.pid,
        close: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once("exit", () => done());
            child.kill("SIGTERM");
          }),
      });
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`${args.join(" ")} exited ${code} before listening:\n${output}`)),
    );
  });
}

/**
 * tbench-server on `repository` (default: the bundled one) with `models` loaded, HTTP and gRPC on free
 * ports.
 */
export function spawnTbenchServer(
  models: readonly string[],
  repository = join(ROOT, "examples/models"),
): Promise<ChildServer> {
  return spawnChild(
    [
      SERVER_BIN,
      ...["--model-repository", repository, "--model-control-mode", "explicit"],
      ...models.flatMap((m) => ["--load-model", m]),
      ...["--http-port", "0", "--grpc-port", "0", "--allow-metrics", "false"],
    ],
    (output) => {
      const http = /Started HTTPService at (\S+)/.exec(output)?.[1];
      const grpcAddress = /Started GRPCInferenceService at (\S+)/.exec(output)?.[1];
      return http === undefined || grpcAddress === undefined
        ? undefined
        : { httpUrl: `http://${http}`, grpcAddress };
    },
  );
}

const jsonUrl = (output: string) => {
  const line = output.split("\n").find((l) => l.startsWith('{"httpUrl"'));
  return line === undefined ? undefined : { httpUrl: (JSON.parse(line) as { httpUrl: string }).httpUrl };
};

/** The naive server answering as `modelName`, running the model file at `modelPath`. */
export function spawnNaiveServer(modelPath: string, modelName: string): Promise<ChildServer> {
  return spawnChild([join(BENCH_DIR, "naive-server.mjs"), modelPath, modelName], jsonUrl);
}

/** A bare node:http handler answering `body` with `headers` to every request. */
export async function spawnBareServer(
  workDir: string,
  name: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<ChildServer> {
  const file = join(workDir, `${name}.answer.json`);
  await writeFile(file, JSON.stringify({ headers, body: body.toString("base64") }));
  return spawnChild([join(BENCH_DIR, "bare-server.mjs"), file], jsonUrl);
}
