// tbench-server from source in a child process (the kit's startTbenchServer), for the hostile-client rows
// (hostile-clients.ts): its memory read from /proc, its output counted as it comes (bytes, lines, the
// longest line) without keeping it, so that a flood of logs costs this process no memory. Also which flags
// the checked-out server knows, read from its --help.
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { promisify } from "node:util";
import { ROOT, startTbenchServer, type TbenchServer, tbenchServerCommand } from "@tbench/bench-kit";

export const MIB = 1024 * 1024;

/** The server tree a row starts (its packages/server/src/cli/main.ts): this repository unless told. */
export interface ServerTree {
  readonly root: string;
}

/** What the server's --help says: the flags it knows, and each flag's stated default, if any. */
export interface ServerHelp {
  readonly flags: ReadonlySet<string>;
  readonly defaults: ReadonlyMap<string, string>;
  readonly text: string;
}

export async function readServerHelp(tree: ServerTree): Promise<ServerHelp> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...tbenchServerCommand("source", tree.root), "--help"],
    {
      cwd: ROOT,
      timeout: 60_000,
      maxBuffer: 4 * MIB,
    },
  );
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
}

export function countOutput(stream: NodeJS.ReadableStream): OutputCounter {
  let bytes = 0;
  let current = 0;
  let longest = 0;
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
  };
}

/** A tbench-server child of a row, its output counted from its first byte. */
export interface ServerChild extends TbenchServer {
  readonly stderr: OutputCounter;
  readonly stdout: OutputCounter;
}

export interface ServerChildOptions {
  readonly tree: ServerTree;
  readonly models: readonly string[];
  readonly grpc?: boolean;
}

/** Starts the tree's command-line server from source (explicit mode, `models` loaded, ports 0, no metrics). */
export async function startServerChild(options: ServerChildOptions): Promise<ServerChild> {
  let counters: { stderr: OutputCounter; stdout: OutputCounter } | undefined;
  const server = await startTbenchServer({
    from: "source",
    root: options.tree.root,
    models: options.models,
    grpc: options.grpc === true,
    onSpawn: (child) => {
      counters = { stderr: countOutput(child.stderr!), stdout: countOutput(child.stdout!) };
    },
  });
  return { ...server, ...counters! };
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
