// Benchmark (a program, not a test): issue 36's six attacks, re-run against the server code checked out,
// one row each, each against a tbench-server child process of its own (defaults, explicit mode):
//   1 a 1 MiB model name on gRPC, then 50 ordinary calls on the same channel    (attacks/grpc-long-name.ts)
//   2 a gRPC message declared 2 GiB, 64 MiB of it sent over raw HTTP/2          (attacks/grpc-large-message.ts)
//   3 failing loads with a 10,000-char name at concurrency 32: the log written  (attacks/log-flood.ts)
//   4 40 clients holding 60 MiB bodies half-sent: RSS against the server's bound (attacks/held-bodies.ts)
//   5 SIGTERM under 32 keep-alive clients: requests lost, drain time            (attacks/sigterm-drain.ts)
//   6 a 30 MiB JSON body in a loop beside `simple` at c=1: p99 side by side     (attacks/json-stall.ts)
// A row whose flag the server's --help does not list says "not measured: flag X missing" instead of
// failing the run; a row that throws or runs past its time says so, and the others still run. Every child
// process and socket a row opened is closed when it ends. Writes bench-results/hostile-clients.{json,md}.
// Run: npm run bench:hostile   (quick smoke run: BENCH_QUICK=1 npm run bench:hostile, or --quick; it writes
// under the system's temporary folder unless BENCH_RESULTS_DIR or --out says where). Options: --only 1,3
// (some rows), --server DIR (start DIR/packages/server/src/cli/main.ts instead of this tree's, e.g. an
// older commit's export, to measure before and after).
import { execFileSync } from "node:child_process";
import { loadavg, totalmem } from "node:os";
import { resolve } from "node:path";
import { benchOptions, ROOT, startEnvironment, writeResult } from "@tbench/bench-kit";
import { grpcLargeMessage } from "./attacks/grpc-large-message.js";
import { grpcLongName } from "./attacks/grpc-long-name.js";
import { heldBodies } from "./attacks/held-bodies.js";
import { jsonStall } from "./attacks/json-stall.js";
import { logFlood } from "./attacks/log-flood.js";
import { type HostileResult, hostileMarkdown } from "./attacks/report.js";
import { createRowContext, type RowContext, type RowResult } from "./attacks/row.js";
import { readServerHelp, type ServerTree } from "./attacks/server-child.js";
import { sigtermDrain } from "./attacks/sigterm-drain.js";

interface Row {
  readonly row: number;
  readonly attack: string;
  readonly run: (ctx: RowContext) => Promise<RowResult>;
  /** Past this the row is stopped (its children and sockets closed) and reported as not measured. */
  readonly limitMs: number;
}

const ROWS: readonly Row[] = [
  { row: 1, attack: "gRPC 1 MiB model name, then 50 calls", run: grpcLongName, limitMs: 60_000 },
  { row: 2, attack: "gRPC message declared 2 GiB", run: grpcLargeMessage, limitMs: 60_000 },
  { row: 3, attack: "10,000-char model name load flood", run: logFlood, limitMs: 60_000 },
  { row: 4, attack: "held 60 MiB bodies", run: heldBodies, limitMs: 180_000 },
  { row: 5, attack: "SIGTERM under 32 keep-alive clients", run: sigtermDrain, limitMs: 90_000 },
  { row: 6, attack: "30 MiB JSON beside simple", run: jsonStall, limitMs: 120_000 },
];
/** The flags the rows depend on, listed in the result with whether the server knows them. */
const FLAGS = [
  "--grpc-max-receive-message-size",
  "--grpc-max-send-message-size",
  "--http-max-buffered-bytes",
];

function argValue(argv: readonly string[], flag: string): string | undefined {
  const at = argv.indexOf(flag);
  if (at < 0) return undefined;
  const value = argv[at + 1];
  if (value === undefined || value.startsWith("--")) throw new Error(`${flag}: expected a value after it`);
  return value;
}

function commitOf(root: string): string {
  try {
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", root, ...args], { encoding: "utf8" }).trim();
    // A tree inside another checkout (an export under this one) is not that checkout's commit.
    if (resolve(git("rev-parse", "--show-toplevel")) !== resolve(root)) return "unknown (not a git checkout)";
    const head = git("rev-parse", "--short", "HEAD");
    return git("status", "--porcelain", "--", "packages") === ""
      ? head
      : `${head} (with uncommitted changes)`;
  } catch {
    return "unknown (not a git checkout)";
  }
}

async function runRow(row: Row, ctx: RowContext): Promise<RowResult> {
  const started = performance.now();
  const loadAverage = loadavg();
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      row.run(ctx),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`ran past its ${row.limitMs / 1000} s`)), row.limitMs);
      }),
    ]);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`row ${row.row}:`, error);
    return {
      row: row.row,
      attack: row.attack,
      done: "stopped by an error",
      figures: { error: message },
      figuresText: "-",
      verdict: "not measured",
      verdictText: `not measured: ${message.slice(0, 300)}`,
      loadAverage,
      seconds: Math.round((performance.now() - started) / 100) / 10,
    };
  } finally {
    clearTimeout(timer);
    await ctx.scope.close();
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const options = benchOptions(argv);
  const tree: ServerTree = { root: resolve(argValue(argv, "--server") ?? ROOT) };
  const only = argValue(argv, "--only")?.split(",").map(Number);
  const finishEnvironment = startEnvironment(options);
  const help = await readServerHelp(tree);
  const rows: RowResult[] = [];
  for (const row of ROWS) {
    if (only !== undefined && !only.includes(row.row)) continue;
    console.log(`row ${row.row}: ${row.attack} (load average ${loadavg()[0]!.toFixed(2)})`);
    const result = await runRow(row, createRowContext(options.quick, tree, help));
    const verdict = result.verdict === "not measured" ? "" : `${result.verdict}: `;
    console.log(`  ${result.figuresText}\n  -> ${verdict}${result.verdictText}`);
    rows.push(result);
  }
  const result: HostileResult = {
    benchmark: "issue 36's six hostile-client attacks against tbench-server (command line, defaults)",
    environment: { ...finishEnvironment(), memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10 },
    server: { root: tree.root, commit: commitOf(tree.root) },
    flags: Object.fromEntries(FLAGS.map((f) => [f, help.flags.has(f)])),
    rows,
  };
  const markdown = hostileMarkdown(result);
  const paths = await writeResult(options, "hostile-clients", result, markdown);
  console.log(`\n${markdown}\nwrote ${paths.join(", ")}`);
}

/** Sockets and processes open at the start (this process's own stdio), not counted as left over. */
const baseline = process.getActiveResourcesInfo();

/** Sockets, pipes and child processes open now beyond those at the start. */
function leftOver(before: readonly string[], now: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const r of before) counts.set(r, (counts.get(r) ?? 0) + 1);
  return now.filter((r) => {
    if (!/TCP|Pipe|Process|Http2|UDP/.test(r)) return false;
    const left = counts.get(r) ?? 0;
    counts.set(r, left - 1);
    return left <= 0;
  });
}

main().then(
  () => {
    // Every row closed what it opened; name anything still held (a leak to fix), then exit without
    // waiting on timers that closed clients may leave behind for a moment.
    const held = leftOver(baseline, process.getActiveResourcesInfo());
    if (held.length > 0) console.error(`still open at the end: ${held.join(", ")}`);
    process.exit(0);
  },
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
