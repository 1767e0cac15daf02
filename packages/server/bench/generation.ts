// Benchmark (a program, not a test) of issue 30's in-flight batching: 16 concurrent streams against the
// bundled char_generator (the tbench_generator backend: a character-level step model run once per token,
// every live stream's step in one batch) and against the same model with in-flight batching off (one stream
// at a time, to its end). Both models are in one server (the built tbench-server command in a child
// process); each client streams completions back to back over HTTP generate_stream (SSE, a response per
// token) and times each token as it arrives. Rounds interleave the two models, the order rotating; the ratio
// is the median of per-round ratios of output tokens per second. Target: in-flight >= 4x one stream per
// run. Time to first token (from the send to the first event) and inter-token latency (gaps between a
// stream's events) are reported for both. Every stream's text is checked against the model's known greedy
// continuation. The machine's own speed: the server's compute time per step at the batch sizes it ran.
// Writes bench-results/generation.{json,md}.
// Run: npm run bench:generation   (quick smoke run: BENCH_QUICK=1 npm run bench:generation, or --quick)
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  atLeast,
  benchOptions,
  environmentMarkdown,
  median,
  perRoundRatios,
  ROOT,
  rotate,
  spread,
  startEnvironment,
  startTbenchServer,
  verdictMarkdown,
  writeResult,
} from "@tbench/bench-kit";

const options = benchOptions();
const QUICK = options.quick;
const CONCURRENCY = 16;
const MAX_TOKENS = 48;
const ROUNDS = QUICK ? 2 : 4;
const WARMUP_MS = QUICK ? 500 : 1500;
const WINDOW_MS = QUICK ? 1500 : 6000;
const TARGET_RATIO = 4;
const INFLIGHT = "char_generator";
const STATIC = "char_generator_one_stream";
const CONTENDERS = [INFLIGHT, STATIC] as const;
/** Prompts: a character each, the continuation known (each character's successor), none reaching '~' early. */
const PROMPTS = Array.from({ length: CONCURRENCY }, (_, i) => String.fromCharCode(33 + i));

interface Run {
  readonly tokensPerSec: number;
  readonly ttftMs: { p50: number; p99: number };
  readonly itlMs: { p50: number; p99: number };
  readonly streams: number;
  readonly wrong: number;
  readonly errors: number;
  readonly avgBatch: number;
}

function expected(prompt: string): string {
  let code = prompt.charCodeAt(0);
  let text = "";
  while (text.length < MAX_TOKENS && code < 126) text += String.fromCharCode(++code);
  return text;
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function writeRepository(): string {
  const dir = mkdtempSync(join(tmpdir(), "tbench-generation-"));
  const bundled = join(ROOT, "examples/models", INFLIGHT);
  cpSync(bundled, join(dir, INFLIGHT), { recursive: true });
  cpSync(bundled, join(dir, STATIC), { recursive: true });
  const config = readFileSync(join(bundled, "config.pbtxt"), "utf8");
  const off = config
    .replace(`name: "${INFLIGHT}"`, `name: "${STATIC}"`)
    .replace(
      'key: "inflight_batching" value: { string_value: "true" }',
      'key: "inflight_batching" value: { string_value: "false" }',
    );
  if (!off.includes('string_value: "false"'))
    throw new Error(`the config of ${INFLIGHT} changed: update the bench`);
  writeFileSync(join(dir, STATIC, "config.pbtxt"), off);
  return dir;
}

async function counts(httpUrl: string, model: string) {
  const body = (await (await fetch(`${httpUrl}/v2/models/${model}/stats`)).json()) as {
    model_stats: {
      inference_count: number;
      execution_count: number;
      batch_stats: { batch_size: number; compute_infer: { count: number } }[];
    }[];
  };
  const stats = body.model_stats[0]!;
  const rows = stats.batch_stats.reduce((n, b) => n + b.batch_size * Number(b.compute_infer.count), 0);
  return { executions: Number(stats.execution_count), rows };
}

/** One stream: its events' arrival times and text. */
async function stream(
  httpUrl: string,
  model: string,
  prompt: string,
): Promise<{ sentMs: number; times: number[]; text: string }> {
  const sentMs = performance.now();
  const response = await fetch(`${httpUrl}/v2/models/${model}/generate_stream`, {
    method: "POST",
    body: JSON.stringify({ text_input: prompt, stream: true, max_tokens: MAX_TOKENS }),
  });
  if (response.status !== 200 || response.body === null) throw new Error(`status ${response.status}`);
  const decoder = new TextDecoder();
  const times: number[] = [];
  let text = "";
  let buffered = "";
  for await (const chunk of response.body) {
    const now = performance.now();
    buffered += decoder.decode(chunk as Uint8Array, { stream: true });
    let end = buffered.indexOf("\n\n");
    while (end >= 0) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = JSON.parse(event.slice("data: ".length)) as { text_output?: string; error?: string };
      if (data.error !== undefined) throw new Error(data.error);
      text += data.text_output ?? "";
      times.push(now);
      end = buffered.indexOf("\n\n");
    }
  }
  return { sentMs, times, text };
}

async function run(httpUrl: string, model: string): Promise<Run> {
  let stop = false;
  let tokens = 0;
  let wrong = 0;
  let errors = 0;
  let streams = 0;
  const ttft: number[] = [];
  const itl: number[] = [];
  let windowStart = 0;
  let windowEnd = Number.POSITIVE_INFINITY;
  const client = async (prompt: string) => {
    while (!stop) {
      try {
        const s = await stream(httpUrl, model, prompt);
        if (s.text !== expected(prompt)) wrong++;
        // Tokens that arrived inside the window count; latencies of streams sent inside it.
        tokens += s.times.filter((t) => t >= windowStart && t <= windowEnd).length;
        if (s.sentMs >= windowStart && s.sentMs <= windowEnd) {
          streams++;
          if (s.times.length > 0) ttft.push(s.times[0]! - s.sentMs);
          for (let i = 1; i < s.times.length; i++) itl.push(s.times[i]! - s.times[i - 1]!);
        }
      } catch {
        errors++;
      }
    }
  };
  windowStart = Number.POSITIVE_INFINITY;
  const clients = PROMPTS.map(client);
  await new Promise((resolve) => setTimeout(resolve, WARMUP_MS));
  const before = await counts(httpUrl, model);
  windowStart = performance.now();
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
  windowEnd = performance.now();
  const after = await counts(httpUrl, model);
  stop = true;
  await Promise.all(clients);
  const executions = after.executions - before.executions;
  return {
    tokensPerSec: tokens / ((windowEnd - windowStart) / 1000),
    ttftMs: { p50: percentile(ttft, 50), p99: percentile(ttft, 99) },
    itlMs: { p50: percentile(itl, 50), p99: percentile(itl, 99) },
    streams,
    wrong,
    errors,
    avgBatch: executions > 0 ? (after.rows - before.rows) / executions : 0,
  };
}

/** The server's compute time per step at each batch size it ran (its statistics). */
async function stepCost(httpUrl: string, model: string): Promise<{ batch: number; ms: number }[]> {
  const body = (await (await fetch(`${httpUrl}/v2/models/${model}/stats`)).json()) as {
    model_stats: { batch_stats: { batch_size: number; compute_infer: { count: number; ns: number } }[] }[];
  };
  return body.model_stats[0]!.batch_stats.filter((b) => Number(b.compute_infer.count) >= 20)
    .map((b) => ({
      batch: b.batch_size,
      ms: Number(b.compute_infer.ns) / Number(b.compute_infer.count) / 1e6,
    }))
    .sort((a, b) => a.batch - b.batch);
}

const environment = startEnvironment(options);
const repository = writeRepository();
const server = await startTbenchServer({ repository, models: [...CONTENDERS] });
const rounds: { order: string[]; runs: Record<string, Run> }[] = [];
let costs: { batch: number; ms: number }[] = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = rotate(CONTENDERS, round);
    const runs: Record<string, Run> = {};
    for (const model of order) {
      const r = await run(server.httpUrl, model);
      runs[model] = r;
      console.log(
        `round ${round + 1}/${ROUNDS} ${model}: ${r.tokensPerSec.toFixed(0)} tokens/s, avg batch ${r.avgBatch.toFixed(2)}, ` +
          `TTFT p50 ${r.ttftMs.p50.toFixed(1)} ms, ITL p50 ${r.itlMs.p50.toFixed(2)} ms, ${r.wrong} wrong, ${r.errors} errors`,
      );
    }
    rounds.push({ order: [...order], runs });
  }
  costs = [...(await stepCost(server.httpUrl, INFLIGHT)), ...(await stepCost(server.httpUrl, STATIC))];
} finally {
  await server.close();
  rmSync(repository, { recursive: true, force: true });
}

const inflight = rounds.map((r) => r.runs[INFLIGHT]!.tokensPerSec);
const single = rounds.map((r) => r.runs[STATIC]!.tokensPerSec);
const ratio = median(perRoundRatios(inflight, single));
const bad = rounds.reduce(
  (n, r) => n + CONTENDERS.reduce((m, c) => m + r.runs[c]!.wrong + r.runs[c]!.errors, 0),
  0,
);
const verdict = bad > 0 ? "not met" : atLeast(ratio, TARGET_RATIO);
const env = environment();
const med = (model: string, pick: (r: Run) => number) => median(rounds.map((r) => pick(r.runs[model]!)));
const fmt = (s: { min: number; median: number; max: number }) =>
  `${s.median.toFixed(0)} (${s.min.toFixed(0)}-${s.max.toFixed(0)})`;
const row = (model: string, label: string, values: number[]) =>
  `| ${label} | ${fmt(spread(values))} | ${med(model, (r) => r.avgBatch).toFixed(2)} | ` +
  `${med(model, (r) => r.ttftMs.p50).toFixed(1)} / ${med(model, (r) => r.ttftMs.p99).toFixed(1)} | ` +
  `${med(model, (r) => r.itlMs.p50).toFixed(2)} / ${med(model, (r) => r.itlMs.p99).toFixed(2)} |`;
const markdown = `# Streamed generation: 16 concurrent streams, in-flight batching vs one stream per run

${environmentMarkdown(env)}

Program: \`packages/server/bench/generation.ts\` (\`npm run bench:generation\`). One tbench-server (the built
command, a child process) serves \`${INFLIGHT}\` (the bundled character-level step model on the
tbench_generator backend, in-flight batching on, max_batch_size 16) and \`${STATIC}\` (the same files with
\`inflight_batching\` "false": one stream runs at a time, to its end). ${CONCURRENCY} clients in this process
each stream completions of ${MAX_TOKENS} tokens back to back over HTTP \`generate_stream\` (SSE, a response
per token, Node's fetch); ${ROUNDS} rounds, the order rotating, ${WARMUP_MS} ms warmup and a ${WINDOW_MS} ms
window per run. Tokens count when their event arrives inside the window; time to first token (TTFT) is
from the send to the first event, inter-token latency (ITL) the gaps between one stream's events, over the
streams sent inside the window. Every stream's text is checked against the model's known greedy
continuation. The machine's own speed, the server's compute time per step by batch size (its statistics):
${costs.map((c) => `batch ${c.batch}: ${c.ms.toFixed(2)} ms`).join(", ")}.

| model | output tokens/s, median (min-max) | rows per step (median) | TTFT p50 / p99 (ms) | ITL p50 / p99 (ms) |
| --- | --- | --- | --- | --- |
${row(INFLIGHT, `\`${INFLIGHT}\` (in-flight batching)`, inflight)}
${row(STATIC, `\`${STATIC}\` (one stream per run)`, single)}

| target | figure | verdict |
| --- | --- | --- |
| in-flight batching >= ${TARGET_RATIO}x the output tokens/s of one stream per run (median of per-round ratios), every text right, no error | ${ratio.toFixed(2)}x; ${bad} wrong texts or errors | ${verdictMarkdown(verdict)} |
`;
const json = {
  environment: env,
  concurrency: CONCURRENCY,
  maxTokens: MAX_TOKENS,
  rounds,
  costs,
  ratio,
  verdict,
};
const paths = await writeResult(options, "generation", json, markdown);
console.log(`ratio ${ratio.toFixed(2)}x: ${verdict}; wrote ${paths.join(", ")}`);
