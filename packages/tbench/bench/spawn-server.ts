// Starts tbench-server (built: packages/server/dist, through serve-models.mjs) in a child process, so that the server and the load
// generator never share an event loop, and returns its URLs once it is listening.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** A server running in a child process. */
export interface ChildServer {
  httpUrl: string;
  metricsUrl: string;
  close(): Promise<void>;
}

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const SERVE_SCRIPT = fileURLToPath(new URL("./serve-models.mjs", import.meta.url));

/** Spawns the server with the bundled repository and the given models loaded (explicit model control). */
export async function spawnServer(models: readonly string[]): Promise<ChildServer> {
  const child: ChildProcess = spawn(process.execPath, [SERVE_SCRIPT, ...models], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const urls = await new Promise<{ httpUrl: string; metricsUrl: string }>((resolve, reject) => {
    let text = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const line = text.split("\n").find((l) => l.startsWith("{"));
      if (line !== undefined) resolve(JSON.parse(line) as { httpUrl: string; metricsUrl: string });
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
