// Starts the tbench-server command as users run it (packages/server/bin, which runs the build in dist/) in
// a child process, so the server never shares the benchmark's event loop or its client's CPU time, and
// returns its URL once it listens. The benchmark's npm script builds first (`tsc -b`), so dist/ is the code
// under test.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../../../scripts/bench/bench-kit.js";

export const SERVER_BIN = join(ROOT, "packages/server/bin/tbench-server.mjs");

/** A tbench-server in a child process. */
export interface ChildServer {
  /** `http://127.0.0.1:port`. */
  readonly url: string;
  /** The server's log so far (stderr), for error messages and the results' notes. */
  log(): string;
  /** SIGTERM (graceful shutdown), then waits for the exit. Idempotent. */
  close(): Promise<void>;
}

const LISTENING = /Started HTTPService at (\S+)/;
/** How much of the server's log is kept: enough to show why a start failed. */
const LOG_KEEP_CHARS = 64 * 1024;

/**
 * Runs `tbench-server <args> --http-port 0 --allow-metrics false` and resolves once it listens. A server
 * that exits first rejects with its exit code and the end of its log.
 */
export function spawnTbenchServer(args: readonly string[]): Promise<ChildServer> {
  const child: ChildProcess = spawn(
    process.execPath,
    [SERVER_BIN, ...args, "--http-port", "0", "--grpc-port", "0", "--allow-metrics", "false"],
    { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    })();
    return closing;
  };
  return new Promise<ChildServer>((resolve, reject) => {
    child.stderr?.on("data", (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-LOG_KEEP_CHARS);
      const match = LISTENING.exec(log);
      if (match !== null) resolve({ url: `http://${match[1]}`, log: () => log, close });
    });
    child.once("error", reject);
    child.once("exit", (code, signal) =>
      reject(
        new Error(
          `tbench-server ${args.join(" ")}: expected it to listen, but it exited (code ${code}, signal ` +
            `${signal}) first; its log ends:\n${log.slice(-2000)}`,
        ),
      ),
    );
  });
}
