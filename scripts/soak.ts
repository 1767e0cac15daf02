/**
 * `npm run soak` (issue 14, item 6; not in CI): starts tbench-server from its command line in a child process
 * (explicit model control, HTTP, gRPC and metrics on free ports) and drives mixed traffic at it for
 * SOAK_MINUTES (default 10): HTTP and gRPC infer on several models with every answer checked against its
 * input, gRPC streams opened and closed, metadata/config/statistics/index/metrics reads, a model loaded,
 * used and unloaded over and over, and bad requests that must get their own error. Every 10 s
 * (SOAK_SAMPLE_SECONDS) it samples the server's RSS, open file descriptors and threads (/proc: Linux only)
 * and the calls and errors since the last sample. Writes bench-results/soak.{json,md} with a verdict: RSS and
 * descriptors flat (the last quarter's mean within SOAK_FLAT_PERCENT, default 10%, of the second quarter's)
 * and no unexpected error. Exits 1 when the verdict fails.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ROOT, startTbenchServer, type TbenchServer } from "@tbench/bench-kit";
import { createGrpcClient, createHttpClient, type InferenceClient, type InferInput } from "@tbench/client";

const MINUTES = Number(process.env["SOAK_MINUTES"] ?? 10);
const SAMPLE_SECONDS = Number(process.env["SOAK_SAMPLE_SECONDS"] ?? 10);
const FLAT_PERCENT = Number(process.env["SOAK_FLAT_PERCENT"] ?? 10);
/** Descriptors come in small whole numbers: a change of this many is never called growth. */
const FD_SLACK = 4;
const OUT_DIR = process.env["SOAK_OUT_DIR"] ?? join(ROOT, "bench-results");
const MODELS = ["simple", "identity_fp32", "identity_int8", "identity_bytes"] as const;
/** Loaded and unloaded in a loop. */
const CHURN_MODEL = "identity_int16";

interface Sample {
  readonly t: number;
  readonly rssMiB: number;
  readonly fds: number;
  readonly threads: number;
  readonly calls: Record<string, number>;
  readonly unexpected: number;
}

const calls: Record<string, number> = {};
const unexpected: string[] = [];
let unexpectedCount = 0;
let stopping = false;

function count(kind: string): void {
  calls[kind] = (calls[kind] ?? 0) + 1;
}
function problem(what: string): void {
  unexpectedCount++;
  if (unexpected.length < 50) unexpected.push(`${new Date().toISOString()} ${what}`);
}

/** Runs `step` in a loop until the soak ends; an exception is an unexpected error. */
async function loop(kind: string, step: () => Promise<void>, pauseMs = 0): Promise<void> {
  while (!stopping) {
    try {
      await step();
      count(kind);
    } catch (error) {
      if (!stopping) problem(`${kind}: ${(error as Error).message}`);
    }
    if (pauseMs > 0) await sleep(pauseMs);
  }
}

/** Inputs for `model` built from `i`, and a check of the answer against them. */
function exchange(model: (typeof MODELS)[number], i: number) {
  if (model === "simple") {
    const a = Int32Array.from({ length: 16 }, (_, k) => i + k);
    const b = new Int32Array(16).fill(i % 7);
    const inputs: InferInput[] = [
      { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: a },
      { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: b },
    ];
    return {
      inputs,
      check: (out: ArrayLike<number | bigint | string | boolean>) =>
        Array.from(a, (v, k) => v + b[k]!).every((v, k) => out[k] === v),
      output: "OUTPUT0",
    };
  }
  const n = 1 + (i % 8);
  const data =
    model === "identity_fp32"
      ? Float32Array.from({ length: n }, (_, k) => i * 0.5 + k)
      : model === "identity_int8"
        ? Int8Array.from({ length: n }, (_, k) => ((i + k) % 256) - 128)
        : Array.from({ length: n }, (_, k) => `s${i}-${k}`);
  const datatype = model === "identity_fp32" ? "FP32" : model === "identity_int8" ? "INT8" : "BYTES";
  const inputs = [{ name: "INPUT0", datatype, shape: [1, n], data }] as InferInput[];
  const expected = Array.from(data as ArrayLike<number | string>);
  return {
    inputs,
    check: (out: ArrayLike<number | bigint | string | boolean>) =>
      out.length === n &&
      expected.every((v, k) => {
        const got = out[k];
        return typeof got === "object" ? String(got) === v : got === v;
      }),
    output: "OUTPUT0",
  };
}

async function checkedInfer(
  client: InferenceClient,
  model: (typeof MODELS)[number],
  i: number,
): Promise<void> {
  const { inputs, check, output } = exchange(model, i);
  const result = await client.infer(model, { id: `soak-${i}`, inputs });
  const tensor = result.output(output);
  if (tensor === undefined) throw new Error(`${model} #${i}: no ${output}`);
  const values = tensor.datatype === "BYTES" ? tensor.strings() : tensor.typedArray();
  if (!check(values as ArrayLike<number | string>)) throw new Error(`${model} #${i}: wrong answer`);
}

/** A call that must fail with one of `codes`: its own error is expected, anything else is not. */
async function mustFail(kind: string, codes: string, call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (error) {
    const got = (error as { code?: string }).code ?? "";
    if (!codes.split("|").includes(got))
      throw new Error(`${kind}: expected ${codes}, got ${got}: ${(error as Error).message}`);
    return;
  }
  throw new Error(`${kind}: expected ${codes}, got success`);
}

/** Starts the server's command line from source; errors it logs ("E ...") after it listens are problems. */
async function startServer(): Promise<TbenchServer> {
  const server = await startTbenchServer({ from: "source", models: MODELS, grpc: true, metrics: true });
  const watch = (chunk: Buffer) => {
    for (const line of chunk.toString().split("\n")) if (/^E /.test(line)) problem(`server log: ${line}`);
  };
  server.child.stdout?.on("data", watch);
  server.child.stderr?.on("data", watch);
  return server;
}

function procSample(pid: number): { rssMiB: number; fds: number; threads: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? Number.NaN);
  return {
    rssMiB: Math.round(field("VmRSS") / 1024),
    fds: readdirSync(`/proc/${pid}/fd`).length,
    threads: field("Threads"),
  };
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

/** Second-quarter and last-quarter means of a series, and whether the last is within the bound. */
function flatness(values: readonly number[], slack: number) {
  const q = Math.max(1, Math.floor(values.length / 4));
  const second = mean(values.slice(q, 2 * q));
  const last = mean(values.slice(values.length - q));
  const growthPercent = second === 0 ? 0 : ((last - second) / second) * 100;
  return {
    secondQuarterMean: Math.round(second * 10) / 10,
    lastQuarterMean: Math.round(last * 10) / 10,
    growthPercent: Math.round(growthPercent * 10) / 10,
    flat: last - second <= Math.max(slack, (second * FLAT_PERCENT) / 100),
  };
}

async function main(): Promise<void> {
  const server = await startServer();
  const { pid } = server;
  const http = createHttpClient({ url: server.httpUrl, timeoutMs: 30_000 });
  const grpc = createGrpcClient({ url: server.grpcAddress!, timeoutMs: 30_000 });
  const startLoad = loadavg();
  const started = Date.now();
  const samples: Sample[] = [];
  let last = { ...calls };
  const sampler = setInterval(() => {
    const now = procSample(pid);
    const since: Record<string, number> = {};
    for (const [k, v] of Object.entries(calls)) since[k] = v - (last[k] ?? 0);
    last = { ...calls };
    samples.push({
      t: Math.round((Date.now() - started) / 1000),
      ...now,
      calls: since,
      unexpected: unexpectedCount,
    });
    process.stderr.write(
      `soak t=${samples.at(-1)!.t}s rss=${now.rssMiB} MiB fds=${now.fds} threads=${now.threads} unexpected=${unexpectedCount}\n`,
    );
  }, SAMPLE_SECONDS * 1000);

  let n = 0;
  const workers = [
    // Unary infer on every model, both transports.
    ...[0, 1, 2, 3].map((w) => loop("http infer", () => checkedInfer(http, MODELS[(n + w) % 4]!, n++))),
    ...[0, 1].map((w) => loop("grpc infer", () => checkedInfer(grpc, MODELS[(n + w) % 4]!, n++))),
    // A stream opened, used for 20 requests, closed.
    loop("grpc stream", async () => {
      await using stream = grpc.stream("simple");
      const first = n;
      n += 20;
      await Promise.all(
        Array.from({ length: 20 }, async (_, k) => {
          const { inputs, check } = exchange("simple", first + k);
          const out = (await stream.infer({ inputs })).output("OUTPUT0")!.typedArray();
          if (!check(out as ArrayLike<number>)) throw new Error(`stream #${first + k}: wrong answer`);
        }),
      );
    }),
    // Metadata, configuration, statistics, index, metrics.
    loop(
      "metadata",
      async () => {
        const client = n % 2 === 0 ? http : grpc;
        await client.serverMetadata();
        await client.modelMetadata(MODELS[n % 4]!);
        await client.modelConfig(MODELS[(n + 1) % 4]!);
        await client.modelStatistics(MODELS[(n + 2) % 4]!);
        await client.repositoryIndex();
        const metrics = await fetch(server.metricsUrl!);
        if (metrics.status !== 200) throw new Error(`metrics: ${metrics.status}`);
        await metrics.text();
      },
      50,
    ),
    // A model loaded, used and unloaded, again and again (explicit mode), over either transport.
    loop(
      "load/infer/unload",
      async () => {
        const client = n % 2 === 0 ? http : grpc;
        await client.loadModel(CHURN_MODEL);
        const data = Int16Array.from({ length: 4 }, (_, k) => k - n);
        const result = await client.infer(CHURN_MODEL, {
          inputs: [{ name: "INPUT0", datatype: "INT16", shape: [1, 4], data }],
        });
        const out = result.output("OUTPUT0")!.typedArray() as ArrayLike<number>;
        if (!Array.from(data).every((v, k) => out[k] === v)) throw new Error("churn model: wrong answer");
        await client.unloadModel(CHURN_MODEL);
        // Unloaded: no version is available (NOT_FOUND), or one is still UNLOADING (UNAVAILABLE).
        await mustFail("infer after unload", "NOT_FOUND|UNAVAILABLE", () =>
          client.infer(CHURN_MODEL, { inputs: [{ name: "INPUT0", datatype: "INT16", shape: [1, 4], data }] }),
        );
      },
      500,
    ),
    // Bad requests: each must get its own error, and nothing else may change.
    loop(
      "bad requests",
      async () => {
        const client = n % 2 === 0 ? http : grpc;
        const i = n++;
        await mustFail("unknown model", "NOT_FOUND", () =>
          client.infer("no_such_model", exchange("simple", i)),
        );
        await mustFail("wrong shape", "INVALID_ARGUMENT", () =>
          client.infer("simple", {
            inputs: [
              { name: "INPUT0", datatype: "INT32", shape: [1, 15], data: new Int32Array(15) },
              { name: "INPUT1", datatype: "INT32", shape: [1, 15], data: new Int32Array(15) },
            ],
          }),
        );
        await mustFail("missing input", "INVALID_ARGUMENT", () =>
          client.infer("simple", { inputs: exchange("simple", i).inputs.slice(0, 1) }),
        );
        const res = await fetch(`${server.httpUrl}/v2/models/simple/infer`, {
          method: "POST",
          body: "{not json",
        });
        await res.text();
        if (res.status !== 400 && res.status !== 500) throw new Error(`bad JSON: ${res.status}`);
      },
      50,
    ),
  ];

  await sleep(MINUTES * 60_000);
  stopping = true;
  clearInterval(sampler);
  await Promise.allSettled(workers);
  await http.close();
  await grpc.close();
  await server.close();
  const exitCode = await server.exited;

  const rss = flatness(
    samples.map((s) => s.rssMiB),
    0,
  );
  const fds = flatness(
    samples.map((s) => s.fds),
    FD_SLACK,
  );
  const threads = flatness(
    samples.map((s) => s.threads),
    2,
  );
  const pass = rss.flat && fds.flat && unexpectedCount === 0;
  const totals = { ...calls };
  const result = {
    date: new Date().toISOString(),
    minutes: MINUTES,
    sampleSeconds: SAMPLE_SECONDS,
    flatPercent: FLAT_PERCENT,
    cpus: cpus().length,
    node: process.version,
    loadAverageStart: startLoad.map((v) => Math.round(v * 100) / 100),
    loadAverageEnd: loadavg().map((v) => Math.round(v * 100) / 100),
    verdict: pass ? "met" : "not met",
    rss,
    fds,
    threads,
    totals,
    unexpectedErrors: unexpectedCount,
    unexpectedSamples: unexpected,
    serverExit: exitCode,
    samples,
  };
  const rows = samples.map(
    (s) =>
      `| ${s.t} | ${s.rssMiB} | ${s.fds} | ${s.threads} | ${Object.values(s.calls).reduce((a, b) => a + b, 0)} | ${s.unexpected} |`,
  );
  const markdown = [
    "# Soak: tbench-server under mixed traffic",
    "",
    `**Verdict: ${pass ? "met" : "not met"}**: RSS ${rss.flat ? "flat" : "GREW"} (last-quarter mean ${rss.lastQuarterMean} MiB vs second-quarter ${rss.secondQuarterMean} MiB, ${rss.growthPercent}%), descriptors ${fds.flat ? "flat" : "GREW"} (${fds.lastQuarterMean} vs ${fds.secondQuarterMean}), ${unexpectedCount} unexpected errors. Bound: ${FLAT_PERCENT}% (descriptors: or ${FD_SLACK}).`,
    "",
    `${result.date}, ${MINUTES} min, ${result.cpus} CPUs, Node ${result.node}; load average at start ${result.loadAverageStart.join(" / ")}, at end ${result.loadAverageEnd.join(" / ")}. Server: the tbench-server command line, explicit model control, ${MODELS.join(", ")} loaded; server exit code after SIGTERM: ${exitCode}.`,
    "",
    "Traffic (closed loops, all at once): 4 HTTP and 2 gRPC infer callers over the four models, every answer checked against its input; a gRPC stream of 20 requests opened and closed in a loop; metadata, config, statistics, repository index and /metrics reads; `identity_int16` loaded, used, unloaded and refused after unloading, every 0.5 s; bad requests (unknown model, wrong shape, missing input, malformed JSON) that must get their own error.",
    "",
    `Calls: ${Object.entries(totals)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}.`,
    "",
    ...(unexpected.length > 0
      ? ["Unexpected errors (first 50):", "", ...unexpected.map((u) => `- ${u}`), ""]
      : []),
    "| t (s) | RSS (MiB) | fds | threads | calls in the interval | unexpected errors (cumulative) |",
    "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows,
  ].join("\n");
  mkdirSync(OUT_DIR, { recursive: true });
  const paths = [join(OUT_DIR, "soak.json"), join(OUT_DIR, "soak.md")];
  writeFileSync(paths[0]!, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(paths[1]!, `${markdown}\n`);
  process.stderr.write(`soak: ${result.verdict}; wrote ${paths.join(", ")}\n`);
  process.exitCode = pass ? 0 : 1;
}

await main();
