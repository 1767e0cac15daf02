// The processes the server efficiency benchmark measures beside tbench-server (which the kit's
// startTbenchServer starts, as users run it), each a child process so that none shares an event loop with
// the load generator or with another: the naive hand-written server (naive-server.mjs) and the bare
// node:http handler (bare-server.mjs).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ROOT, startChild, type TbenchServer } from "@tbench/bench-kit";

/** A server in a child process; `grpcAddress` only for tbench-server. */
export type ChildServer = Pick<TbenchServer, "httpUrl" | "grpcAddress" | "pid" | "close">;

const BENCH_DIR = join(ROOT, "packages/server/bench");

/** A contender of our own that prints {"httpUrl"} as one line once it listens. */
async function spawnJsonServer(script: string, args: readonly string[]): Promise<ChildServer> {
  const server = await startChild({
    name: script,
    args: [join(BENCH_DIR, script), ...args],
    ready: (output) => {
      const line = output.split("\n").find((l) => l.startsWith('{"httpUrl"'));
      return line === undefined ? undefined : (JSON.parse(line) as { httpUrl: string });
    },
  });
  return { ...server, grpcAddress: undefined };
}

/** The naive server answering as `modelName`, running the model file at `modelPath`. */
export function spawnNaiveServer(modelPath: string, modelName: string): Promise<ChildServer> {
  return spawnJsonServer("naive-server.mjs", [modelPath, modelName]);
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
  return spawnJsonServer("bare-server.mjs", [file]);
}
