// tbench-server from source in a child process, for the hostile-client rows (hostile-clients.ts): its
// ports read from its log, its memory read from /proc, its output counted as it comes (bytes, lines, the
// longest line) without keeping it, so that a flood of logs costs this process no memory. Also which flags
// the checked-out server knows, read from its --help.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT } from "../../../../scripts/bench/bench-kit.js";

export const REPOSITORY = join(ROOT, "examples/models");
export const MIB = 1024 * 1024;

/** The server tree a row starts (its packages/server/src/cli/main.ts): this repository unless told. */
export interface ServerTree {
  readonly root: string;
}

const mainOf = (tree: ServerTree) => join(tree.root, "packages/server/src/cli/main.ts");
const nodeArgs = (tree: ServerTree) => ["--conditions=source", "--import", "tsx", mainOf(tree)];

/** What the server's --help says: the flags it knows, and each flag's stated default, if any. */
export interface ServerHelp {
  readonly flags: ReadonlySet<string>;
  readonly defaults: ReadonlyMap<string, string>;
  readonly text: string;
}

export async function readServerHelp(tree: ServerTree): Promise<ServerHelp> {
  const { stdout } = await promisify(execFile)(process.execPath, [...nodeArgs(tree), "--help"], {
    cwd: ROOT,
    timeout: 60_000,
    maxBuffer: 4 * MIB,
  });
  return parseServerHelp(stdout);
}

/**
 * The flags in commander's --help text, and the default each states ("(default: "8000")", "(default
 * 7200000; ...)"); a description wrapped onto further lines is read whole.
 */
export function parseServerHelp(text: string): ServerHelp {
  const entries: { flag: string; text: string }[] = [];
  for (const line of text.split("\n")) {
    const flag = /^\s+(?:-\w, )?(--[a-z0-9-]+)/.exec(line)?.[1];
    if (flag !== undefined) entries.push({ flag, text: line });
    else if (/^\s+\S/.test(line) && entries.length > 0) entries.at(-1)!.text += ` ${line.trim()}`;
  }
  const defaults = new Map<string, string>();
  for (const { flag, text: entry } of entries) {
    const stated = /\(default:? "?([^";)]+)/.exec(entry)?.[1];
    if (stated !== undefined) defaults.set(flag, stated);
  }
  return { flags: new Set(entries.map((e) => e.flag)), defaults, text };
}

/** Counts what a stream writes: bytes, lines, the longest line (in characters of latin1, i.e. bytes). */
export interface OutputCounter {
  readonly bytes: number;
  /** The longest complete or current line since the last resetLongest(). */
  readonly longestLine: number;
  resetLongest(): void;
  /** The last few KiB, for error messages and finding the ports. */
  tail(): string;
}

export function countOutput(
  stream: NodeJS.ReadableStream,
  keepHead: (text: string) => void = () => {},
): OutputCounter {
  let bytes = 0;
  let current = 0;
  let longest = 0;
  let tail = "";
  stream.on("data", (chunk: Buffer) => {
    bytes += chunk.byteLength;
    let from = 0;
    for (let nl = chunk.indexOf(10, from); nl >= 0; nl = chunk.indexOf(10, from)) {
      current += nl - from;
      if (current > longest) longest = current;
      current = 0;
      from = nl + 1;
    }
    current += chunk.byteLength - from;
    if (current > longest) longest = current;
    const text = chunk.subarray(Math.max(0, chunk.byteLength - 8192)).toString("latin1");
    tail = (tail + text).slice(-8192);
    keepHead(text);
  });
  return {
    get bytes() {
      return bytes;
    },
    get longestLine() {
      return longest;
    },
    resetLongest() {
      longest = current;
    },
    tail: () => tail,
  };
}

export interface ServerChild {
  readonly child: ChildProcess;
  readonly pid: number;
  /** http://127.0.0.1:PORT */
  readonly httpUrl: string;
  /** 127.0.0.1:PORT, when gRPC was asked for. */
  readonly grpcAddress: string;
  readonly stderr: OutputCounter;
  readonly stdout: OutputCounter;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  readonly exited: Promise<number | string>;
  /** SIGKILL unless it has exited; idempotent. */
  close(): Promise<void>;
}

export interface ServerChildOptions {
  readonly tree: ServerTree;
  readonly models: readonly string[];
  readonly grpc?: boolean;
  readonly extraArgs?: readonly string[];
  readonly startTimeoutMs?: number;
}

/** Children still running: killed when this process exits, however it exits. */
const live = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

/** Starts the command-line server (explicit mode, `models` loaded, ports 0, no metrics). */
export async function startServerChild(options: ServerChildOptions): Promise<ServerChild> {
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs(options.tree),
      ...["--model-repository", REPOSITORY, "--model-control-mode", "explicit"],
      ...options.models.flatMap((m) => ["--load-model", m]),
      ...["--http-port", "0", "--allow-metrics", "false"],
      ...(options.grpc === true ? ["--grpc-port", "0"] : ["--allow-grpc", "false"]),
      ...(options.extraArgs ?? []),
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  live.add(child);
  const exited = new Promise<number | string>((resolve) =>
    // "close", not "exit": it comes once the child's stdout and stderr are closed too.
    child.once("close", (code, signal) => {
      live.delete(child);
      resolve(code ?? signal ?? "unknown");
    }),
  );
  child.once("error", () => {});
  let head = "";
  let started = false;
  const keepHead = (text: string) => {
    if (!started) head = (head + text).slice(-65_536);
  };
  const stderr = countOutput(child.stderr!, keepHead);
  const stdout = countOutput(child.stdout!, keepHead);
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await exited;
  };
  try {
    const deadline = Date.now() + (options.startTimeoutMs ?? 90_000);
    for (;;) {
      const http = /Started HTTPService at (\S+)/.exec(head)?.[1];
      const grpc = /Started GRPCInferenceService at (\S+)/.exec(head)?.[1];
      if (http !== undefined && (options.grpc !== true || grpc !== undefined)) {
        started = true;
        head = "";
        return {
          child,
          pid: child.pid!,
          httpUrl: `http://${http}`,
          grpcAddress: grpc ?? "",
          stderr,
          stdout,
          exited,
          close,
        };
      }
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`tbench-server exited before it served: ${head.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`tbench-server did not start in time: ${head.slice(-2000)}`);
      await sleep(50);
    }
  } catch (error) {
    await close();
    throw error;
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** VmRSS or VmHWM of `pid` in bytes; NaN once it has exited. */
export function memoryBytes(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) * 1024;
  } catch {
    return Number.NaN;
  }
}

/** Resets VmHWM to the current RSS (Linux clear_refs 5), so that a later VmHWM is this period's peak. */
export function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

/** Samples VmRSS every `everyMs` until stopped: the highest seen (VmHWM may miss nothing, this may). */
export function sampleRss(pid: number, everyMs = 50): { stop(): number } {
  let highest = memoryBytes(pid, "VmRSS");
  const timer = setInterval(() => {
    const now = memoryBytes(pid, "VmRSS");
    if (now > highest) highest = now;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return highest;
    },
  };
}

export const mib = (bytes: number) => Math.round((bytes / MIB) * 10) / 10;
