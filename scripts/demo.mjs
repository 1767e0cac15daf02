// npm run demo: dynamic batching on and off, side by side. Builds the bundled models and the packages,
// starts tbench-server (child process) with `heavy` (dynamic batching) and `heavy_nobatch` (same model,
// no batching), sweeps both with tbench at concurrency 1, 2, 4, 8, 16, 32, prints both sweeps and the
// throughput / p99 ratio (batching on / off) per level in tables under 100 columns, each warning with the
// run and level it belongs to, and ends with a one-line verdict. Writes both --json results, the chart
// (batching.svg) and the full report (report.html) to demo-output/ (--out=DIR to change).
//
// npm run demo -- --gpu[=auto|webgpu|cuda]: the same sweep of `heavy_gpu` (one KIND_GPU instance) against
// `heavy` (one CPU instance), both batching, on the tbench-server command with --gpu-execution-provider
// (default auto); its log lines saying where heavy_gpu's instance runs, or why it fell back to CPU, are shown.
import { execSync, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const run = (command) => execSync(command, { cwd: root, stdio: "inherit" });
const gpuFlag = process.argv.slice(2).find((arg) => arg === "--gpu" || arg.startsWith("--gpu="));
const outFlag = process.argv.slice(2).find((arg) => arg.startsWith("--out="));
const outDir = resolve(outFlag === undefined ? join(root, "demo-output") : outFlag.slice("--out=".length));
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

const {
  chartRunFromResult,
  formatOnOffTable,
  formatRunTable,
  levelWarnings,
  onOffVerdict,
  renderHtmlReport,
  renderThroughputSvg,
  resolveBenchConfig,
  runBenchmark,
  toResultJson,
} = await import("tbench");

const LEVELS = [1, 2, 4, 8, 16, 32];

/**
 * The tbench-server command (built) in a child process, as users run it; of its log, the lines saying where
 * heavy_gpu's instance runs (--gpu) and any error are shown.
 */
function startDemoServer() {
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
  if (gpuProvider !== undefined) args.push("--gpu-execution-provider", gpuProvider);
  console.log(`> tbench-server ${args.join(" ")}`);
  return spawn(process.execPath, ["packages/server/bin/tbench-server.mjs", ...args], {
    cwd: root,
    stdio: ["ignore", "ignore", "pipe"],
  });
}

const server = startDemoServer();
const urls = await new Promise((resolve, reject) => {
  let text = "";
  server.stderr.on("data", (chunk) => {
    text += chunk.toString();
    const lines = text.split("\n");
    text = lines.pop() ?? "";
    for (const line of lines) {
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

/**
 * tbench's stderr during a sweep: the progress line (a terminal only) passes through; whole lines are kept,
 * to be printed after the sweep with the run (and, for level messages, the level) they belong to.
 */
function collectingStderr() {
  const lines = [];
  let partial = "";
  const stream = {
    isTTY: process.stderr.isTTY === true,
    write(text) {
      if (text.startsWith("\r")) return process.stderr.write(text);
      partial += text;
      const parts = partial.split("\n");
      partial = parts.pop() ?? "";
      lines.push(...parts.filter((line) => line.trim() !== ""));
      return true;
    },
  };
  return { stream, lines };
}

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
  const stderr = collectingStderr();
  const { results } = await runBenchmark(Object.freeze({ ...config, levels: LEVELS }), {
    stdout: quiet,
    stderr: stderr.stream,
    signal: controller.signal,
    createClient: undefined,
    version: "demo",
  });
  if (stderr.stream.isTTY) process.stderr.write("\r\x1b[2K");
  const result = toResultJson(results, { mode: "concurrency", model }, "demo");
  process.stdout.write(formatRunTable(result));
  // Level messages name their level; anything else tbench said is about the whole run.
  const levelMessages = new Set(result.levels.flatMap((l) => l.messages.flatMap((m) => m.split("\n"))));
  for (const line of stderr.lines) {
    if (!levelMessages.has(line)) console.log(`warning [${model}]: ${line}`);
  }
  for (const line of levelWarnings(model, result)) console.log(line);
  return result;
}

try {
  const off = await sweep(pair.before);
  const on = await sweep(pair.after);
  const runs = {
    before: { label: pair.beforeLabel, result: off },
    after: { label: pair.afterLabel, result: on },
  };
  console.log(
    gpuProvider === undefined
      ? `\nDynamic batching on (${pair.after}) vs off (${pair.before}):`
      : `\n${pair.after} (KIND_GPU) vs ${pair.before} (CPU), both with dynamic batching:`,
  );
  process.stdout.write(formatOnOffTable(runs));

  // The chart and the report, from the same results a `tbench --json` run writes.
  mkdirSync(outDir, { recursive: true });
  const files = [
    [`${pair.before}.json`, `${JSON.stringify(off, null, 2)}\n`],
    [`${pair.after}.json`, `${JSON.stringify(on, null, 2)}\n`],
  ];
  const chartRuns = [
    chartRunFromResult(on, `${pair.after} (${gpuProvider === undefined ? "batching on" : "GPU"})`),
    chartRunFromResult(off, `${pair.before} (${gpuProvider === undefined ? "batching off" : "CPU"})`),
  ];
  const name = gpuProvider === undefined ? "batching" : "gpu";
  files.push([`${name}.svg`, renderThroughputSvg(chartRuns)]);
  files.push(["report.html", renderHtmlReport(chartRuns, { title: `tbench demo: ${name}` })]);
  for (const [file, text] of files) writeFileSync(join(outDir, file), text);
  console.log(`\nWrote ${files.map(([file]) => file).join(", ")} to ${outDir}`);

  const verdict = onOffVerdict(runs);
  // The queue explanation is about batching; a GPU/CPU comparison keeps the ratios alone.
  console.log(gpuProvider === undefined ? verdict : `${verdict.split(";")[0]?.replace(/\.$/, "")}.`);
} finally {
  server.kill("SIGTERM");
}
