// Test helper for tbench tune: a real tbench-server over a temporary copy of the repository holding heavy.
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createHttpClient, type InferenceClient } from "@tbench/client";
import { type RunningServer, startServer } from "@tbench/server";

const HEAVY = fileURLToPath(new URL("../../../../examples/models/heavy", import.meta.url));
const quiet = { error() {}, warn() {}, info() {}, verbose() {}, debug() {} };

export interface TuneServer {
  server: RunningServer;
  /** An HTTP client of the server, to read the model's config before and after. */
  client: InferenceClient;
  /** The temporary directory (the repository is its `models/`); free for the test's files. */
  dir: string;
  close(): Promise<void>;
}

/** Starts tbench-server (HTTP on port 0) on a copy of heavy, loaded, in the given model control mode. */
export async function startTuneServer(mode: "explicit" | "none" = "explicit"): Promise<TuneServer> {
  const dir = await mkdtemp(join(tmpdir(), "tbench-tune-"));
  await cp(HEAVY, join(dir, "models", "heavy"), { recursive: true });
  const server = await startServer({
    modelRepository: join(dir, "models"),
    httpPort: 0,
    metricsPort: false,
    modelControlMode: mode,
    ...(mode === "explicit" ? { loadModels: ["heavy"] } : {}),
    logger: quiet as never,
  });
  const client = createHttpClient({ url: server.httpUrl });
  return {
    server,
    client,
    dir,
    async close() {
      await client.close();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A stream that keeps what is written to it. */
export function captureStream(): { stream: { write(text: string): boolean }; text(): string } {
  let text = "";
  return {
    stream: {
      write(chunk: string) {
        text += chunk;
        return true;
      },
    },
    text: () => text,
  };
}
