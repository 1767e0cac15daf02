// npm run demo: dynamic batching on and off, side by side. Builds the bundled models and the packages,
// starts tbench-server (child process) with `heavy` (dynamic batching) and `heavy_nobatch` (same model,
// no batching), sweeps both with tbench at concurrency 1, 2, 4, 8, 16, 32, and prints both sweep tables
// and the throughput / p99 ratio (batching on / off) per level.
import { execSync, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const run = (command) => execSync(command, { cwd: root, stdio: "inherit" });

console.log("> npm run models && npx tsc -b");
run("npm run models --silent");
run("npx tsc -b");

const { default: Table } = await import("cli-table3");
const { formatSweepTable, resolveBenchConfig, runBenchmark } = await import("tbench");

const LEVELS = [1, 2, 4, 8, 16, 32];
const server = spawn(process.execPath, ["packages/tbench/bench/serve-models.mjs", "heavy", "heavy_nobatch"], {
  cwd: root,
  stdio: ["ignore", "pipe", "inherit"],
});
const urls = await new Promise((resolve, reject) => {
  let text = "";
  server.stdout.on("data", (chunk) => {
    text += chunk.toString();
    const line = text.split("\n").find((l) => l.startsWith("{"));
    if (line !== undefined) resolve(JSON.parse(line));
  });
  server.on("exit", (code) => reject(new Error(`tbench-server exited with code ${code}`)));
});

const controller = new AbortController();
process.on("SIGINT", () => controller.abort());
const quiet = { write: () => true };

async function sweep(model) {
  console.log(
    `\n> tbench -m ${model} -u ${urls.httpUrl} -p 1000 -s 20 -r 5 (concurrency ${LEVELS.join(", ")})`,
  );
  const config = resolveBenchConfig({
    model,
    url: urls.httpUrl,
    measurementInterval: "1000",
    stabilityPercentage: "20",
    maxTrials: "5",
  });
  const { results } = await runBenchmark(Object.freeze({ ...config, levels: LEVELS }), {
    stdout: quiet,
    stderr: process.stderr,
    signal: controller.signal,
    createClient: undefined,
    version: "demo",
  });
  process.stdout.write(formatSweepTable(results));
  return results;
}

try {
  const off = await sweep("heavy_nobatch");
  const on = await sweep("heavy");
  const table = new Table({
    head: [
      "Concurrency",
      "Infer/sec off",
      "Infer/sec on",
      "Throughput on/off",
      "p99 off (us)",
      "p99 on (us)",
      "p99 on/off",
    ],
    style: { head: [], border: [] },
  });
  for (const level of LEVELS) {
    const a = off.find((r) => r.level.value === level)?.measurement;
    const b = on.find((r) => r.level.value === level)?.measurement;
    if (a === undefined || b === undefined) continue;
    const p99a = a.latency.percentiles["99"] ?? 0;
    const p99b = b.latency.percentiles["99"] ?? 0;
    table.push([
      level,
      a.inferPerSec.toFixed(1),
      b.inferPerSec.toFixed(1),
      `${(b.inferPerSec / a.inferPerSec).toFixed(2)}x`,
      Math.round(p99a),
      Math.round(p99b),
      `${(p99b / p99a).toFixed(2)}x`,
    ]);
  }
  console.log("\nDynamic batching on (heavy) vs off (heavy_nobatch):");
  console.log(table.toString());
} finally {
  server.kill("SIGTERM");
}
