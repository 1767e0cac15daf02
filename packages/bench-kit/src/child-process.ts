// A server a benchmark starts in a child process, so that it never shares the benchmark's event loop: Node
// running `args`, ready once what the child wrote (stdout and stderr as they come) says where it listens.
// Its output is read as long as it runs, so a full pipe never blocks it, and only the last LOG_KEEP_BYTES
// are kept, so a server that floods its log costs the benchmark no memory. Children still running when the
// benchmark exits, however it exits, are killed.
import { type ChildProcess, spawn } from "node:child_process";
import { ROOT } from "./bench-kit.js";

/** How much of a child's output is kept, for log() and for finding its ready line. */
const LOG_KEEP_BYTES = 64 * 1024;
const DEFAULT_START_TIMEOUT_MS = 90_000;
const DEFAULT_CLOSE_TIMEOUT_MS = 30_000;

/** Options of {@link startChild}. */
export interface ChildOptions<Ready> {
  /** Node's arguments: flags, the script, its arguments. */
  readonly args: readonly string[];
  /** The child's name in error messages. */
  readonly name: string;
  /**
   * Reads the end of what the child wrote so far; returns what the caller waits for (its URLs) once the
   * child is ready, else undefined.
   */
  readonly ready: (output: string) => Ready | undefined;
  /** Default: the repository root. */
  readonly cwd?: string;
  /** Default: this process's environment. */
  readonly env?: NodeJS.ProcessEnv;
  /** Rejects (and kills the child) when it is not ready by then. Default 90 s. */
  readonly startTimeoutMs?: number;
  /** How long close() waits after SIGTERM before it sends SIGKILL. Default 30 s. */
  readonly closeTimeoutMs?: number;
  /** Called once the child is spawned, before it wrote anything: to read its output yourself. */
  readonly onSpawn?: (child: ChildProcess) => void;
}

/** A child process that is ready. */
export interface Child {
  readonly child: ChildProcess;
  readonly pid: number;
  /** The end of what it wrote (stdout and stderr, in the order they came), for error messages. */
  log(): string;
  /** Resolves with the exit code, or the signal's name, once it exited and its output is closed. */
  readonly exited: Promise<number | string>;
  /** SIGTERM (a graceful shutdown), SIGKILL if it has not exited after closeTimeoutMs; idempotent. */
  close(): Promise<void>;
  /** SIGKILL unless it has exited; idempotent. */
  destroy(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Children still running: killed when this process exits. */
const live = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

/** The last `limit` bytes of a stream of chunks, kept as the chunks themselves. */
function createTail(limit: number) {
  const chunks: Buffer[] = [];
  let bytes = 0;
  return {
    push(chunk: Buffer): void {
      chunks.push(chunk);
      bytes += chunk.byteLength;
      while (chunks.length > 1 && bytes - chunks[0]!.byteLength >= limit) bytes -= chunks.shift()!.byteLength;
    },
    text: (): string => {
      const all = Buffer.concat(chunks);
      return all.subarray(Math.max(0, all.byteLength - limit)).toString();
    },
  };
}

/**
 * Spawns Node with `options.args` and resolves once `options.ready` finds what it waits for in the child's
 * output. A child that exits first, or is not ready in time, is killed and the start rejects with the end
 * of its output.
 */
export async function startChild<Ready extends object>(options: ChildOptions<Ready>): Promise<Child & Ready> {
  const child = spawn(process.execPath, [...options.args], {
    cwd: options.cwd ?? ROOT,
    env: options.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  let spawnError: Error | undefined;
  const exited = new Promise<number | string>((resolve) => {
    // "close", not "exit": it comes once the child's stdout and stderr are closed too.
    child.once("close", (code, signal) => {
      live.delete(child);
      resolve(code ?? signal ?? "unknown");
    });
    // A child that never started has no exit to wait for.
    child.on("error", (error) => {
      if (child.pid !== undefined) return;
      spawnError = error;
      live.delete(child);
      resolve(`not started (${error.message})`);
    });
  });
  const isRunning = () => child.exitCode === null && child.signalCode === null;
  const tail = createTail(LOG_KEEP_BYTES);
  let onOutput = () => {};
  const read = (chunk: Buffer) => {
    tail.push(chunk);
    onOutput();
  };
  child.stdout.on("data", read);
  child.stderr.on("data", read);
  options.onSpawn?.(child);

  let destroying: Promise<void> | undefined;
  const destroy = () => {
    destroying ??= (async () => {
      if (isRunning()) child.kill("SIGKILL");
      await exited;
    })();
    return destroying;
  };
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      if (isRunning()) child.kill("SIGTERM");
      const timer = setTimeout(() => void destroy(), options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    })();
    return closing;
  };

  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const failure = (why: string) =>
    new Error(`${options.name}: ${why}; its output ends:\n${tail.text().slice(-2000)}`);
  let timer: NodeJS.Timeout | undefined;
  try {
    const ready = await new Promise<Ready>((resolve, reject) => {
      onOutput = () => {
        const found = options.ready(tail.text());
        if (found !== undefined) resolve(found);
      };
      void exited.then((code) =>
        reject(failure(spawnError === undefined ? `exited (${code}) before it was ready` : String(code))),
      );
      timer = setTimeout(() => reject(failure(`not ready after ${startTimeoutMs} ms`)), startTimeoutMs);
    });
    return {
      ...ready,
      child,
      pid: child.pid!,
      log: tail.text,
      exited,
      close,
      destroy,
      [Symbol.asyncDispose]: close,
    };
  } catch (error) {
    await destroy();
    throw error;
  } finally {
    onOutput = () => {};
    clearTimeout(timer);
  }
}
