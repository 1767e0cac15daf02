// Starts tbench-server (built: packages/server/dist, through serve-models.mjs) in a child process, so that the server and the load
// generator never share an event loop, and returns its URLs once it is listening.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** A server running in a child process. */
export interface ChildServer {
  httpUrl: string;
  metricsUrl: string;
  /** `host:port` of the gRPC front end, when it was asked for. */
  grpcAddress?: string;
  close(): Promise<void>;
}

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const SERVE_SCRIPT = fileURLToPath(new URL("./serve-models.mjs", import.meta.url));

/**
 * Spawns the server with the bundled repository and the given models loaded (explicit model control);
 * `grpc: true` starts its gRPC front end too.
 */
export async function spawnServer(
  models: readonly string[],
  options: { grpc?: boolean } = {},
): Promise<ChildServer> {
  const args = [SERVE_SCRIPT, ...models, ...(options.grpc === true ? ["--grpc"] : [])];
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const urls = await new Promise<Omit<ChildServer, "close">>((resolve, reject) => {
    let text = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const line = text.split("\n").find((l) => l.startsWith("{"));
      if (line !== undefined) resolve(JSON.parse(line) as Omit<ChildServer, "close">);
    });
    child.on("exit", (code) => reject(new Error(`tbench-server exited with code ${code} before listening`)));
  });
  return {
    ...urls,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.on("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
