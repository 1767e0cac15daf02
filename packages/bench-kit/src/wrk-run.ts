// wrk (Debian's `wrk` package: `apt-get install wrk`) as a contender of the tbench benchmark: one captured
// request, sent as is on every connection. The request goes into a generated Lua script (method, headers,
// and the body as a Lua string with every byte escaped, so binary tensors survive); wrk formats it once and
// re-sends it (its static-request path). A `done` hook prints the summary as one JSON line.
import { spawn, spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { WireRequest } from "./capture-request.js";

/** What each load generator reports for one run. */
export interface LoadFigure {
  requestsPerSec: number;
  requests: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  durationS: number;
}

/** The wrk on PATH, or undefined when it is not installed. */
export function findWrk(): string | undefined {
  // `wrk -v` prints its version and usage and exits 1; a missing binary is ENOENT.
  const probe = spawnSync("wrk", ["-v"], { encoding: "utf8" });
  if (probe.error !== undefined) return undefined;
  return /wrk \S+/.exec(`${probe.stdout}${probe.stderr}`)?.[0] ?? "wrk";
}

/** A Lua string literal holding exactly `bytes`. */
function luaString(bytes: Uint8Array | string): string {
  const buffer = typeof bytes === "string" ? Buffer.from(bytes) : bytes;
  let out = '"';
  for (const byte of buffer) {
    const printable = byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c;
    // Three decimal digits always, so a digit that follows never joins the escape.
    out += printable ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, "0")}`;
  }
  return `${out}"`;
}

/** The Lua script that makes wrk send `wire` and print its summary as JSON. */
export function wrkScript(wire: WireRequest): string {
  return [
    `wrk.method = ${luaString(wire.method)}`,
    `wrk.path = ${luaString(wire.path)}`,
    ...Object.entries(wire.headers).map(
      ([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`,
    ),
    `wrk.body = ${luaString(wire.body)}`,
    "done = function(summary, latency, requests)",
    "  local e = summary.errors",
    '  io.write(string.format(\'\\n{"requests":%.0f,"durationUs":%.0f,"connect":%.0f,"read":%.0f,\' ..',
    '    \'"write":%.0f,"status":%.0f,"timeout":%.0f,"p50Us":%.0f,"p99Us":%.0f}\\n\',',
    "    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,",
    "    latency:percentile(50), latency:percentile(99)))",
    "end",
    "",
  ].join("\n");
}

interface WrkSummary {
  requests: number;
  durationUs: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50Us: number;
  p99Us: number;
}

function wrk(args: readonly string[]): Promise<WrkSummary> {
  return new Promise((resolve, reject) => {
    const child = spawn("wrk", args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const line = output.split("\n").find((l) => l.startsWith('{"requests"'));
      if (code !== 0 || line === undefined) {
        reject(new Error(`wrk ${args.join(" ")} exited ${code} without its summary:\n${output}`));
        return;
      }
      resolve(JSON.parse(line) as WrkSummary);
    });
  });
}

/** Options of {@link runWrk}. */
export interface WrkRunOptions {
  serverUrl: string;
  wire: WireRequest;
  connections: number;
  threads: number;
  warmupS: number;
  durationS: number;
  /** A folder for the generated script. */
  workDir: string;
}

/** A warm-up run, then the measured one; errors are wrk's socket errors plus non-2xx/3xx answers. */
export async function runWrk(options: WrkRunOptions): Promise<LoadFigure> {
  const script = join(options.workDir, "request.lua");
  await writeFile(script, wrkScript(options.wire));
  const url = new URL(options.wire.path, options.serverUrl).href;
  const common = ["-t", String(options.threads), "-c", String(options.connections), "-s", script];
  await wrk([...common, "-d", `${options.warmupS}s`, url]);
  const s = await wrk([...common, "-d", `${options.durationS}s`, url]);
  const durationS = s.durationUs / 1e6;
  return {
    requestsPerSec: s.requests / durationS,
    requests: s.requests,
    errors: s.connect + s.read + s.write + s.status + s.timeout,
    p50Ms: s.p50Us / 1000,
    p99Ms: s.p99Us / 1000,
    durationS,
  };
}
