// Starts tbench-server (serve-models.ts) in a child process with the named models loaded, so the server
// never shares the benchmark's event loop, and returns its URL once it listens.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** A server running in a child process. */
export interface ChildServer {
  url: string;
  /** host:port of its gRPC front end. */
  grpcAddress: string;
  close(): Promise<void>;
}

/** Spawns the server on a free port of 127.0.0.1 with `models` loaded (explicit model control). */
export async function spawnServer(models: readonly string[]): Promise<ChildServer> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      "--conditions=source",
      "--import",
      "tsx",
      fileURLToPath(new URL("serve-models.ts", import.meta.url)),
      ...models,
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  const { httpUrl: url, grpcAddress } = await new Promise<{ httpUrl: string; grpcAddress: string }>(
    (resolve, reject) => {
      let text = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        text += chunk.toString();
        const line = text.split("\n").find((l) => l.startsWith("{"));
        if (line !== undefined) resolve(JSON.parse(line) as { httpUrl: string; grpcAddress: string });
      });
      child.on("exit", (code) =>
        reject(new Error(`tbench-server exited with code ${code} before listening`)),
      );
    },
  );
  return {
    url,
    grpcAddress,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.on("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
