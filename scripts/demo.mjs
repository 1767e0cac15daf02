// npm run demo: dynamic batching on and off, side by side. Builds the bundled models and the packages,
// starts tbench-server (child process) with `heavy` (dynamic batching) and `heavy_nobatch` (same model,
// no batching), sweeps both with tbench at concurrency 1, 2, 4, 8, 16, 32, and prints both sweep tables
// and the throughput / p99 ratio (batching on / off) per level.
//
// npm run demo -- --gpu[=auto|webgpu|cuda]: the same sweep of `heavy_gpu` (one KIND_GPU instance) against
// `heavy` (one CPU instance), both batching, on the tbench-server command with --gpu-execution-provider
// (default auto); its log lines saying where heavy_gpu's instance runs, or why it fell back to CPU, are shown.
import { execSync, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const run = (command) => execSync(command, { cwd: root, stdio: "inherit" });
const gpuFlag = process.argv.slice(2).find((arg) => arg === "--gpu" || arg.startsWith("--gpu="));
const gpuProvider = gpuFlag === undefined ? undefined : (gpuFlag.split("=")[1] ?? "auto");
if (gpuProvider !== undefined && !["auto", "webgpu", "cuda"].includes(gpuProvider)) {
  console.error(`demo: --gpu takes auto, webgpu or cuda, not '${gpuProvider}'`);
  process.exit(2);
}
/** The two models compared: `before` is the baseline, `after` the one the ratio is about. */
const pair =
  gpuProvider === undefined
    ? { before: "heavy_nobatch", after: "heavy", beforeLabel: "off", afterLabel: "on" }
    : { before: "heavy", after: "heavy_gpu", beforeLabel: "CPU", afterLabel: "GPU" };

console.log("> npm run models && npx tsc -b");
run("npm run models --silent");
run("npx tsc -b");

const { default: Table } = await import("cli-table3");
const { formatSweepTable, resolveBenchConfig, runBenchmark } = await import("tbench");

const LEVELS = [1, 2, 4, 8, 16, 32];

/** The built-in server for the batching demo (quiet); the tbench-server command for --gpu (its log shown). */
function startDemoServer() {
  if (gpuProvider === undefined) {
    return spawn(process.execPath, ["packages/tbench/bench/serve-models.mjs", pair.before, pair.after], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"],
    });
  }
  const args = ["--model-repository", "examples/models", "--model-control-mode", "explicit"];
  args.push(
    "--load-model",
    pair.before,
    "--load-model",
    pair.after,
    "--http-port",
    "0",
    "--metrics-port",
    "0",
  );
  args.push("--gpu-execution-provider", gpuProvider);
  console.log(`> tbench-server ${args.join(" ")}`);
  return spawn(process.execPath, ["packages/server/bin/tbench-server.mjs", ...args], {
    cwd: root,
    stdio: ["ignore", "ignore", "pipe"],
  });
}

const server = startDemoServer();
const urls = await new Promise((resolve, reject) => {
  let text = "";
  const stream = gpuProvider === undefined ? server.stdout : server.stderr;
  stream.on("data", (chunk) => {
    text += chunk.toString();
    const lines = text.split("\n");
    text = lines.pop() ?? "";
    for (const line of lines) {
      if (gpuProvider === undefined) {
        if (line.startsWith("{")) resolve(JSON.parse(line));
        continue;
      }
      // Where heavy_gpu runs, or why it fell back, and any error; Dawn's own warnings are left out.
      if (/'heavy_gpu' version|^E /.test(line)) console.log(line);
      const started = /Started HTTPService at (\S+)/.exec(line);
      if (started) resolve({ httpUrl: `http://${started[1]}` });
    }
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
  const off = await sweep(pair.before);
  const on = await sweep(pair.after);
  const table = new Table({
    head: [
      "Concurrency",
      `Infer/sec ${pair.beforeLabel}`,
      `Infer/sec ${pair.afterLabel}`,
      `Throughput ${pair.afterLabel}/${pair.beforeLabel}`,
      `p99 ${pair.beforeLabel} (us)`,
      `p99 ${pair.afterLabel} (us)`,
      `p99 ${pair.afterLabel}/${pair.beforeLabel}`,
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
  console.log(
    gpuProvider === undefined
      ? "\nDynamic batching on (heavy) vs off (heavy_nobatch):"
      : "\nheavy_gpu (KIND_GPU) vs heavy (CPU), both with dynamic batching:",
  );
  console.log(table.toString());
} finally {
  server.kill("SIGTERM");
}
