// Reads a V8 CPU profile (`node --cpu-prof`'s .cpuprofile) and lists the functions with the most self
// time, as a Markdown table: what the bench-results/profile-*.md files show before and after a change.
// Self time is the samples whose top frame is the function (its own code, not its callees), summed over
// every node of the same function (name, file, line); idle and GC are listed as V8 names them. A second
// table sums self time by where the code lives (undici, @tbench/client, tbench, Node's own JavaScript,
// native). `--skip-ms N` leaves out the first N ms of samples (start-up: module loading and compiling).
// Run: node --import tsx packages/tbench/bench/profile-summary.ts <file.cpuprofile> [--top 20] [--skip-ms 0]
import { readFile } from "node:fs/promises";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** One function's share of the profile. */
export interface SelfTime {
  name: string;
  where: string;
  selfMs: number;
  share: number;
}

/** The repository-relative (or package-relative) place of a frame, short enough for a table. */
function placeOf(url: string, line: number): string {
  if (url === "") return "(native)";
  const path = url.replace(/^file:\/\//, "");
  const cut = path.lastIndexOf("node_modules/");
  const short =
    cut >= 0 ? path.slice(cut + "node_modules/".length) : path.replace(/^.*?\/(packages|node:)/, "$1");
  return `${short}:${line + 1}`;
}

/** Where a frame's code lives, for the grouped table. */
function groupOf(url: string, name: string): string {
  if (url.includes("node_modules/undici/")) return "undici (JavaScript)";
  if (url.startsWith("wasm://")) return "undici's llhttp (wasm)";
  if (url.includes("packages/client/")) return "@tbench/client";
  if (url.includes("packages/tbench/")) return "tbench";
  if (url.includes("packages/")) return "other workspace packages";
  if (url.startsWith("node:")) return "Node's own JavaScript (streams, net, timers, loader)";
  if (url !== "") return "other JavaScript";
  if (name === "(idle)" || name === "(garbage collector)" || name === "(program)" || name === "writev")
    return `native ${name}`;
  return "native, other (syscalls, builtins)";
}

/** Self time per function, largest first; `share` is of all samples (idle included). */
export function selfTimes(
  profile: CpuProfile,
  skipMs = 0,
): { totalMs: number; rows: SelfTime[]; groups: SelfTime[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, { name: string; where: string; us: number }>();
  const groups = new Map<string, number>();
  let totalUs = 0;
  let elapsedUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]!);
    const us = profile.timeDeltas[i] ?? 0;
    elapsedUs += us;
    if (elapsedUs < skipMs * 1000) continue;
    totalUs += us;
    if (node === undefined) continue;
    const group = groupOf(node.callFrame.url, node.callFrame.functionName);
    groups.set(group, (groups.get(group) ?? 0) + us);
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName}|${url}|${lineNumber}`;
    let entry = totals.get(key);
    if (entry === undefined) {
      entry = { name: functionName || "(anonymous)", where: placeOf(url, lineNumber), us: 0 };
      totals.set(key, entry);
    }
    entry.us += us;
  }
  const rows = [...totals.values()]
    .sort((a, b) => b.us - a.us)
    .map((e) => ({ name: e.name, where: e.where, selfMs: e.us / 1000, share: e.us / totalUs }));
  const grouped = [...groups]
    .sort((a, b) => b[1] - a[1])
    .map(([name, us]) => ({ name, where: "", selfMs: us / 1000, share: us / totalUs }));
  return { totalMs: totalUs / 1000, rows, groups: grouped };
}

/** The top `top` rows as a Markdown table, with busy time (all but idle) for scale. */
export function selfTimeMarkdown(profile: CpuProfile, top: number, skipMs = 0): string {
  const { totalMs, rows, groups } = selfTimes(profile, skipMs);
  const idle = rows.find((r) => r.name === "(idle)")?.selfMs ?? 0;
  const busy = totalMs - idle;
  const lines = [
    `Sampled ${totalMs.toFixed(0)} ms (the first ${skipMs} ms left out), of which busy (not idle) ` +
      `${busy.toFixed(0)} ms.`,
    "",
    "| Where the code lives | Self ms | % of busy |",
    "| --- | --- | --- |",
    ...groups
      .filter((g) => g.name !== "native (idle)")
      .map((g) => `| ${g.name} | ${g.selfMs.toFixed(0)} | ${((g.selfMs / busy) * 100).toFixed(1)} |`),
    "",
    "| Self ms | % of samples | Function | Where |",
    "| --- | --- | --- | --- |",
    ...rows
      .slice(0, top)
      .map(
        (r) =>
          `| ${r.selfMs.toFixed(0)} | ${(r.share * 100).toFixed(1)} | \`${r.name}\` | ${r.where.replaceAll("|", "/")} |`,
      ),
  ];
  return lines.join("\n");
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/^.*\//, "/"))) {
  const args = process.argv.slice(2);
  const flag = (name: string, fallback: number) => {
    const at = args.indexOf(name);
    const value = at < 0 ? fallback : Number(args[at + 1]);
    if (!Number.isFinite(value) || value < 0)
      throw new Error(`${name}: expected a number >= 0, got ${args[at + 1]}`);
    return value;
  };
  const file = args[0];
  if (file === undefined || file.startsWith("--")) {
    throw new Error("usage: profile-summary.ts <file.cpuprofile> [--top 20] [--skip-ms 0]");
  }
  const profile = JSON.parse(await readFile(file, "utf8")) as CpuProfile;
  process.stdout.write(`${selfTimeMarkdown(profile, flag("--top", 20), flag("--skip-ms", 0))}\n`);
}
