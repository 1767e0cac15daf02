// Benchmark (a program, not a test): KIND_GPU on onnxruntime-node's WebGPU provider against the CPU
// provider, through the server's own instances (the WebGPU executor thread; a CPU worker thread).
// 1. Correctness: every bundled model file, batch 4 (resnet_like 1), WebGPU against CPU: the largest
//    absolute difference and the largest share of the tests' tolerance (1e-5 + 1e-3 x |cpu|) used.
// 2. Speed: `heavy` in process at batch 1, 8, 32 and 64, median ms per run over the rounds, WebGPU against
//    CPU with one intra-op thread and with every core; the order rotates per round.
// Names the WebGPU device it ran on where the machine tells (Mesa's package for the software device).
// Writes bench-results/gpu.{json,md}. Run: npm run models && node --conditions=source --import tsx
// packages/server/bench/gpu.ts  (--quick / BENCH_QUICK=1: two rounds, written under the temporary folder).
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { cpus } from "node:os";
import {
  benchOptions,
  environmentMarkdown,
  median,
  rotate,
  startEnvironment,
  writeResult,
} from "@tbench/bench-kit";
import { bundledModels } from "@tbench/model-builder";
import type { OrtTensorType } from "@tbench/proto";
import { bytesDataFromStrings } from "../src/core/bytes-data.js";
import { type ModelInstance, startModelInstance } from "../src/instances/model-instance.js";
import type { SessionTensorInfo, ThreadTensor, WorkerInit } from "../src/instances/worker-protocol.js";
import { bundledModelFile } from "../src/testing/test-fixtures.js";

const options = benchOptions();
const ROUNDS = options.quick ? 2 : 7;
const BATCHES = [1, 8, 32, 64];
const environment = startEnvironment(options);
const ORT_VERSION = (createRequire(import.meta.url)("onnxruntime-node/package.json") as { version: string })
  .version;

function data(type: OrtTensorType, count: number): ArrayBufferView | ReturnType<typeof bytesDataFromStrings> {
  const wave = (i: number) => Math.sin(i * 0.37);
  switch (type) {
    case "float32":
      return Float32Array.from({ length: count }, (_, i) => wave(i));
    case "float64":
      return Float64Array.from({ length: count }, (_, i) => wave(i));
    case "float16":
      return Uint16Array.from({ length: count }, (_, i) => 0x3c00 + (i % 1024));
    case "int64":
      return BigInt64Array.from({ length: count }, (_, i) => BigInt(i % 30_000));
    case "uint64":
      return BigUint64Array.from({ length: count }, (_, i) => BigInt(i));
    case "string":
      return bytesDataFromStrings(Array.from({ length: count }, (_, i) => `element ${i}`));
    case "bool":
      return Uint8Array.from({ length: count }, (_, i) => i % 2);
    case "int8":
      return Int8Array.from({ length: count }, (_, i) => i % 100);
    case "int16":
      return Int16Array.from({ length: count }, (_, i) => i % 100);
    case "int32":
      return Int32Array.from({ length: count }, (_, i) => i % 100);
    case "uint8":
      return Uint8Array.from({ length: count }, (_, i) => i % 100);
    case "uint16":
      return Uint16Array.from({ length: count }, (_, i) => i % 100);
    case "uint32":
      return Uint32Array.from({ length: count }, (_, i) => i % 100);
  }
}

function run(
  instance: ModelInstance,
  inputs: readonly SessionTensorInfo[],
  outputs: string[],
  batch: number,
) {
  const wire: ThreadTensor[] = inputs.map((info) => {
    const dims = info.dims.map((d, i) => (d >= 0 ? d : i === 0 ? batch : 3));
    const count = dims.reduce((a, b) => a * b, 1);
    const ortType = info.ortType as OrtTensorType;
    return { name: info.name, ortType, dims, data: data(ortType, count) };
  });
  const transfer = wire.map((t) => (ArrayBuffer.isView(t.data) ? t.data.buffer : t.data.wire.buffer));
  return instance.run({ inputs: wire, outputNames: outputs, transfer: transfer as ArrayBuffer[] });
}

function init(name: string, intraOpThreads: number, gpu: boolean): WorkerInit {
  return {
    modelPath: bundledModelFile(name),
    instanceName: `${name}_0`,
    intraOpThreads,
    interOpThreads: 1,
    ...(gpu ? { gpu: { deviceId: 0, provider: "webgpu" as const } } : {}),
  };
}

interface Correctness {
  model: string;
  provider: string;
  maxAbsDiff: number;
  toleranceUsed: number;
  exact: boolean;
  /** Within the tolerance for float outputs, equal for every other output. */
  correct: boolean;
}

async function correctness(): Promise<Correctness[]> {
  const rows: Correctness[] = [];
  const seen = new Set<unknown>();
  for (const model of bundledModels()) {
    if (model.build === undefined || seen.has(model.build)) continue;
    seen.add(model.build);
    const gpu = await startModelInstance({ init: init(model.name, 1, true) });
    const cpu = await startModelInstance({ init: init(model.name, 1, false) });
    try {
      const outputs = gpu.info.outputs.map((o) => o.name);
      const batch = model.name === "resnet_like" ? 1 : 4;
      const a = await run(gpu.instance, gpu.info.inputs, outputs, batch);
      const b = await run(cpu.instance, cpu.info.inputs, outputs, batch);
      let maxAbsDiff = 0;
      let toleranceUsed = 0;
      let exact = true;
      let correct = true;
      b.outputs.forEach((expected, k) => {
        const got = a.outputs[k]!.data;
        if (!ArrayBuffer.isView(got) || !ArrayBuffer.isView(expected.data)) {
          const wire = (t: unknown) => Buffer.from((t as { wire: Uint8Array }).wire);
          exact &&= wire(got).equals(wire(expected.data));
          correct &&= exact;
          return;
        }
        const float = expected.ortType === "float32" || expected.ortType === "float64";
        const x = got as unknown as ArrayLike<number | bigint>;
        const y = expected.data as unknown as ArrayLike<number | bigint>;
        for (let i = 0; i < y.length; i++) {
          if (x[i] !== y[i]) {
            exact = false;
            if (!float) correct = false;
          }
          if (!float) continue;
          const diff = Math.abs((x[i] as number) - (y[i] as number));
          maxAbsDiff = Math.max(maxAbsDiff, diff);
          toleranceUsed = Math.max(toleranceUsed, diff / (1e-5 + 1e-3 * Math.abs(y[i] as number)));
        }
      });
      correct &&= toleranceUsed <= 1;
      rows.push({
        model: model.name,
        provider: gpu.info.provider,
        maxAbsDiff,
        toleranceUsed,
        exact,
        correct,
      });
    } finally {
      await gpu.instance.close();
      await cpu.instance.close();
    }
  }
  return rows;
}

interface Speed {
  batch: number;
  webgpuMs: number;
  cpu1Ms: number;
  cpuAllMs: number;
}

async function speed(): Promise<Speed[]> {
  const cores = cpus().length;
  const arms = {
    webgpu: await startModelInstance({ init: init("heavy", 1, true) }),
    cpu1: await startModelInstance({ init: init("heavy", 1, false) }),
    cpuAll: await startModelInstance({ init: init("heavy", cores, false) }),
  };
  const times: Record<string, number[]> = {};
  try {
    const outputs = ["output"];
    // Warm-up: the first WebGPU run of a shape compiles its shaders.
    for (const batch of BATCHES) {
      for (const arm of Object.values(arms)) await run(arm.instance, arm.info.inputs, outputs, batch);
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const batch of BATCHES) {
        for (const [name, arm] of rotate(Object.entries(arms), round)) {
          const t0 = performance.now();
          await run(arm.instance, arm.info.inputs, outputs, batch);
          const key = `${name}:${batch}`;
          times[key] = [...(times[key] ?? []), performance.now() - t0];
        }
      }
    }
  } finally {
    await Promise.all(Object.values(arms).map((arm) => arm.instance.close()));
  }
  return BATCHES.map((batch) => ({
    batch,
    webgpuMs: median(times[`webgpu:${batch}`]!),
    cpu1Ms: median(times[`cpu1:${batch}`]!),
    cpuAllMs: median(times[`cpuAll:${batch}`]!),
  }));
}

/** The Vulkan driver packages where dpkg knows them (names the software device); "unknown" elsewhere. */
function vulkanDriver(): string {
  try {
    const version = execFileSync("dpkg-query", ["-W", "-f=$" + "{Version}", "mesa-vulkan-drivers"], {
      encoding: "utf8",
    });
    return `Mesa ${version} (mesa-vulkan-drivers; lavapipe, a software Vulkan device on the CPU)`;
  } catch {
    return "unknown (not a Debian system)";
  }
}

const rows = await correctness();
const speeds = await speed();
const env = environment();
const device = vulkanDriver();
const f = (x: number, digits = 2) => x.toFixed(digits);
const correct = rows.every((r) => r.provider === "webgpu" && r.correct);
const md = [
  "# KIND_GPU on WebGPU against the CPU provider",
  "",
  environmentMarkdown(env),
  "",
  `WebGPU device: ${device}. onnxruntime-node ${ORT_VERSION}, its bundled WebGPU provider (Dawn on Vulkan).`,
  "Produced by `packages/server/bench/gpu.ts` through the server's own instances (the WebGPU executor",
  "thread; CPU worker threads).",
  "",
  "## Verdicts",
  "",
  `- Every bundled model answers on WebGPU as on CPU, within the tolerance: **${correct ? "met" : "not met"}**` +
    ` (${rows.filter((r) => r.provider === "webgpu").length} of ${rows.length} model files ran on WebGPU).`,
  `- Speed: ${device.includes("software") ? "a software device emulates a GPU on the CPU, so its speed is no verdict on GPUs; it is the correctness path." : "see the table: WebGPU against every core of this machine."}`,
  "- A real GPU against CPU: not measured in this run.",
  "",
  "## Correctness: every bundled model file, WebGPU against CPU",
  "",
  "Batch 4 (resnet_like: 1). The tests' tolerance for floats is 1e-5 + 1e-3 x |cpu|; every other type must be",
  "equal. 'Tolerance used' is the largest |gpu - cpu| / (1e-5 + 1e-3 x |cpu|) over all outputs.",
  "",
  "| model | ran on | equal | largest abs diff | tolerance used |",
  "| --- | --- | --- | --- | --- |",
  ...rows.map(
    (r) =>
      `| ${r.model} | ${r.provider} | ${r.exact ? "yes" : "no"} | ${r.maxAbsDiff.toExponential(2)} | ${(r.toleranceUsed * 100).toFixed(1)}% |`,
  ),
  "",
  `## Speed: heavy in process, median ms per run over ${ROUNDS} rounds`,
  "",
  `| batch | WebGPU (ms) | CPU 1 thread (ms) | CPU ${cpus().length} threads (ms) | WebGPU infer/s | CPU ${cpus().length} threads infer/s | WebGPU / CPU ${cpus().length} threads |`,
  "| --- | --- | --- | --- | --- | --- | --- |",
  ...speeds.map(
    (s) =>
      `| ${s.batch} | ${f(s.webgpuMs)} | ${f(s.cpu1Ms)} | ${f(s.cpuAllMs)} | ${f((s.batch * 1000) / s.webgpuMs, 0)} | ${f((s.batch * 1000) / s.cpuAllMs, 0)} | ${f(s.cpuAllMs / s.webgpuMs)}x |`,
  ),
  "",
].join("\n");
const result = { environment: env, device, onnxruntimeNode: ORT_VERSION, correctness: rows, speed: speeds };
const written = await writeResult(options, "gpu", result, md);
console.log(md);
console.log(`written: ${written.join(", ")}`);
