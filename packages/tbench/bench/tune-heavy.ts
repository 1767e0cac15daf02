// `npm run bench:tune`: tbench tune on heavy, end to end, as a user runs it. Starts tbench-server (built,
// child process, explicit model control, heavy loaded), runs the built `tbench tune` in another child
// process with a p95 budget of 20 ms over batching off/on, three queue delays and one or two instances,
// then checks that the server's config of heavy is the original again. Writes bench-results/tune-heavy.md
// (the ranked table, what the queue delay bought and cost per level, the verdicts) and tune-heavy.json
// (tune's own --json: every run's full result, readable by `tbench compare` and `tbench report`).
// --quick: a smaller space and short windows (smoke run; figures mean nothing).
import { spawn } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import {
  benchOptions,
  environmentMarkdown,
  ROOT,
  startEnvironment,
  startTbenchServer,
  verdictMarkdown,
  writeResult,
} from "@tbench/bench-kit";
import { createHttpClient } from "@tbench/client";
import type { LevelJson } from "../src/report/json-result.js";
import type { TuneJson } from "../src/tune/tune-json.js";

const options = benchOptions();
const environment = startEnvironment(options);
const BUDGET_MS = 20;
const space = options.quick
  ? ["--batching", "off,on", "--max-queue-delay-us", "0,1000", "--instance-count", "1"]
  : ["--batching", "off,on", "--max-queue-delay-us", "0,1000,4000", "--instance-count", "1,2"];
const levels = options.quick ? "1,4" : "1,4,16,32";
const windows = options.quick ? ["-p", "500", "-s", "50", "-r", "3"] : ["-p", "1500", "-s", "25", "-r", "6"];

const server = await startTbenchServer({ models: ["heavy"], metrics: true });
const client = createHttpClient({ url: server.httpUrl });
const work = await mkdtemp(join(tmpdir(), "tbench-tune-bench-"));
const jsonPath = join(work, "tune.json");
const args = [
  "tune",
  "-m",
  "heavy",
  "-u",
  server.httpUrl,
  "--latency-budget",
  `p95:${BUDGET_MS}ms`,
  ...space,
  "--concurrency",
  levels,
  ...windows,
  "--json",
  jsonPath,
  "--output-config",
  join(work, "out"),
];
let code: number | null;
let original: unknown;
let after: unknown;
const started = Date.now();
try {
  original = await client.modelConfig("heavy");
  const child = spawn(process.execPath, [join(ROOT, "packages/tbench/dist/cli/main.js"), ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  child.stdout.on("data", (chunk: Buffer) => process.stdout.write(chunk));
  code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  after = await client.modelConfig("heavy");
} finally {
  await client.close();
  await server.close();
}
const seconds = (Date.now() - started) / 1000;
const tune = JSON.parse(await readFile(jsonPath, "utf8")) as TuneJson;
const restored = isDeepStrictEqual(original, after);

const ms = (us: number) => (us / 1000).toFixed(2);
const p = (level: LevelJson, q: string) => level.latency.percentiles[q] ?? 0;
const compute = (l: LevelJson) =>
  l.serverBreakdown === null
    ? "-"
    : String(
        l.serverBreakdown.computeInputUs +
          l.serverBreakdown.computeInferUs +
          l.serverBreakdown.computeOutputUs,
      );

const ranked = tune.runs.map((run, i) => {
  const level = run.result?.levels.find((l) => l.value === run.bestLevel);
  const mark = run.label === tune.winner ? `${i + 1} (winner)` : String(i + 1);
  const result = run.met
    ? "within budget"
    : run.state === "measured"
      ? `not met (closest level: ${level?.status ?? "none"})`
      : run.state;
  if (level === undefined) return `| ${mark} | ${run.label} | - | - | - | - | - | - | - | ${result} |`;
  return (
    `| ${mark} | ${run.label}${run.current ? " (current)" : ""} | ${level.value} | ${level.inferPerSec.toFixed(1)} | ` +
    `${ms(p(level, "95"))} | ${ms(p(level, "99"))} | ${level.serverBreakdown?.queueUs ?? "-"} | ${compute(level)} | ` +
    `${level.serverBreakdown?.avgBatchSize.toFixed(2) ?? "-"} | ${result} |`
  );
});

// What the queue delay buys and costs: batching on, one instance, every level measured.
const delayRows: string[] = [];
for (const run of tune.runs
  .filter((r) => r.label.startsWith("on ") && r.label.endsWith(" inst=1"))
  .sort((a, b) => a.label.localeCompare(b.label, "en", { numeric: true }))) {
  for (const level of run.result?.levels ?? []) {
    delayRows.push(
      `| ${run.label} | ${level.value} | ${level.inferPerSec.toFixed(1)} | ${ms(p(level, "95"))} | ` +
        `${level.serverBreakdown?.queueUs ?? "-"} | ${level.serverBreakdown?.avgBatchSize.toFixed(2) ?? "-"} | ${level.status} |`,
    );
  }
}

const foundVerdict = tune.winner !== null ? "met" : "not met";
const restoreVerdict = restored && tune.restored ? "met" : "not met";
const markdown = `# tbench tune on heavy: the config that meets p95 < ${BUDGET_MS} ms

${environmentMarkdown(environment())}

tbench-server (built, child process, explicit model control) with \`heavy\` loaded from examples/models; the built
\`tbench tune\` in another child process (${seconds.toFixed(0)} s in all, exit code ${code}):

\`\`\`
tbench ${args
  .map((a) => (a === server.httpUrl ? "URL" : a.startsWith(work) ? a.replace(work, "DIR") : a))
  .join(" ")}
\`\`\`

Each config is loaded through the repository API with a JSON config override and swept with tbench's own
measurement (stable windows, p95 as the stabilising percentile); a sweep stops at the first level whose p95
reaches the budget. The row shows the config's best level within the budget (or its closest).

| # | Config | Best conc. | infer/s | p95 ms | p99 ms | queue us | compute us | avg batch | result |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${ranked.join("\n")}

${tune.explanation}

What the queue delay buys and costs (batching on, one instance, every level measured):

| Config | Concurrency | infer/s | p95 ms | queue us | avg batch | status |
| --- | --- | --- | --- | --- | --- | --- |
${delayRows.join("\n")}

| Target | Measured | Verdict |
| --- | --- | --- |
| a config meets p95 < ${BUDGET_MS} ms | ${tune.winner ?? "none"} | ${verdictMarkdown(foundVerdict)} |
| the original config is restored (server's config JSON equal before and after) | ${restored ? "equal" : "different"} | ${verdictMarkdown(restoreVerdict)} |
`;
const paths = await writeResult(options, "tune-heavy", tune, markdown);
console.log(`\nWrote ${paths.join(" and ")}`);
process.exitCode = foundVerdict === "met" && restoreVerdict === "met" ? 0 : 1;
