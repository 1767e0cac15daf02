/**
 * KIND_GPU on onnxruntime's WebGPU provider, on whatever WebGPU device this machine has (CI: Mesa's
 * software Vulkan device). Every bundled model answers as the CPU provider does; thousands of concurrent
 * requests across two GPU models, three GPU instances, never fail or mix; a crash of the executor thread
 * fails only the batch it held and the instances come back. Skipped, with the reason, only where no
 * WebGPU device can be made and not under CI (see testing/webgpu-device.ts).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { bundledModels, mlpForward } from "@tbench/model-builder";
import type { OrtTensorType } from "@tbench/proto";
import { bytesDataFromStrings } from "../core/bytes-data.js";
import type { BytesData } from "../core/types.js";
import { createInferenceCore, type InferenceCoreHandle } from "../lifecycle/create-inference-core.js";
import {
  bundledConfig,
  bundledModelFile,
  createFixtureRepository,
  createRecordingLogger,
  type FixtureRepository,
} from "../testing/test-fixtures.js";
import { webGpuSkip } from "../testing/webgpu-device.js";
import { type ModelInstance, startModelInstance } from "./model-instance.js";
import { webGpuExecutorThreads } from "./webgpu-executor.js";
import type { SessionTensorInfo, ThreadTensor } from "./worker-protocol.js";

const skip = await webGpuSkip();

/** Deterministic data of `count` elements of `type`, different per seed. */
function inputData(type: OrtTensorType, count: number, seed: number): ArrayBufferView | BytesData {
  const wave = (i: number) => Math.sin(seed * 7.3 + i * 0.37);
  const ints = (i: number) => ((i * 37 + seed * 11) % 200) - 100;
  switch (type) {
    case "float32":
      return Float32Array.from({ length: count }, (_, i) => wave(i));
    case "float64":
      return Float64Array.from({ length: count }, (_, i) => wave(i));
    case "float16":
      // Finite halves (exponent bits below 0x7c00).
      return Uint16Array.from({ length: count }, (_, i) => 0x3c00 + ((i * 13 + seed) % 1024));
    case "int8":
      return Int8Array.from({ length: count }, (_, i) => ints(i));
    case "int16":
      return Int16Array.from({ length: count }, (_, i) => ints(i) * 100);
    case "int32":
      return Int32Array.from({ length: count }, (_, i) => ints(i) * 10_000);
    case "int64":
      return BigInt64Array.from({ length: count }, (_, i) => BigInt((i * 7919 + seed) % 40_000));
    case "uint8":
    case "bool":
      return Uint8Array.from({ length: count }, (_, i) =>
        type === "bool" ? (i + seed) % 2 : (i + seed) % 256,
      );
    case "uint16":
      return Uint16Array.from({ length: count }, (_, i) => (i * 31 + seed) % 65_536);
    case "uint32":
      return Uint32Array.from({ length: count }, (_, i) => i * 100_003 + seed);
    case "uint64":
      return BigUint64Array.from({ length: count }, (_, i) => BigInt(i) * 1_000_000_007n + BigInt(seed));
    case "string":
      return bytesDataFromStrings(Array.from({ length: count }, (_, i) => `row ${seed} element ${i}`));
  }
}

/** One input of `info`, batch `batch`, other variable dims 3. */
function wireInput(info: SessionTensorInfo, batch: number, seed: number): ThreadTensor {
  const dims = info.dims.map((d, i) => (d >= 0 ? d : i === 0 ? batch : 3));
  const count = dims.reduce((a, b) => a * b, 1);
  const ortType = info.ortType as OrtTensorType;
  return { name: info.name, ortType, dims, data: inputData(ortType, count, seed) };
}

function runOn(instance: ModelInstance, inputs: SessionTensorInfo[], outputs: string[], batch: number) {
  const wire = inputs.map((info, k) => wireInput(info, batch, k + 1));
  const transfer = wire.map((t) => (ArrayBuffer.isView(t.data) ? t.data.buffer : t.data.wire.buffer));
  return instance.run({ inputs: wire, outputNames: outputs, transfer: transfer as ArrayBuffer[] });
}

/** Floats within 1e-5 + 1e-3 * |cpu| of the CPU provider's; every other type equal. */
function assertClose(model: string, gpu: ThreadTensor, cpu: ThreadTensor): void {
  assert.deepEqual(gpu.dims, cpu.dims, `${model} ${cpu.name} dims`);
  const a = gpu.data;
  const b = cpu.data;
  if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b)) {
    assert.deepEqual((a as BytesData).wire, (b as BytesData).wire, `${model} ${cpu.name}`);
    return;
  }
  if (cpu.ortType === "float32" || cpu.ortType === "float64") {
    const x = a as Float32Array;
    const y = b as Float32Array;
    assert.equal(x.length, y.length);
    for (let i = 0; i < y.length; i++) {
      const tolerance = 1e-5 + 1e-3 * Math.abs(y[i]!);
      assert.ok(Math.abs(x[i]! - y[i]!) <= tolerance, `${model} ${cpu.name}[${i}]: ${x[i]} vs CPU ${y[i]}`);
    }
    return;
  }
  assert.deepEqual(a, b, `${model} ${cpu.name}`);
}

describe("KIND_GPU on WebGPU", { skip }, () => {
  it("every bundled model answers as on the CPU provider (floats within 1e-5 + 1e-3 x |cpu|)", async () => {
    const builders = new Set<unknown>();
    for (const model of bundledModels()) {
      // Models that share a file (heavy, heavy_nobatch, heavy_gpu) are checked once.
      if (model.build === undefined || builders.has(model.build)) continue;
      builders.add(model.build);
      const init = {
        modelPath: bundledModelFile(model.name),
        instanceName: `${model.name}_0`,
        intraOpThreads: 1,
        interOpThreads: 1,
      };
      const gpu = await startModelInstance({ init: { ...init, gpu: { deviceId: 0, provider: "webgpu" } } });
      const cpu = await startModelInstance({ init });
      try {
        assert.equal(gpu.info.provider, "webgpu", `${model.name}: ${gpu.info.fallback}`);
        assert.equal(cpu.info.provider, "cpu");
        const inputs = [...gpu.info.inputs];
        const outputs = gpu.info.outputs.map((o) => o.name);
        // resnet_like is the costly one on a software device: one image.
        const batch = model.name === "resnet_like" ? 1 : 4;
        const [onGpu, onCpu] = await Promise.all([
          runOn(gpu.instance, inputs, outputs, batch),
          runOn(cpu.instance, inputs, outputs, batch),
        ]);
        for (const [i, expected] of onCpu.outputs.entries()) {
          assertClose(model.name, onGpu.outputs[i]!, expected);
        }
      } finally {
        await gpu.instance.close();
        await cpu.instance.close();
      }
    }
    assert.equal(webGpuExecutorThreads(), 0, "the executor thread ends with its last session");
  });

  describe("a server with two GPU models", () => {
    let repo: FixtureRepository;
    let core: InferenceCoreHandle;
    const logger = createRecordingLogger();
    const gpuGroup = (count: number) => `\ninstance_group [ { count: ${count} kind: KIND_GPU } ]\n`;

    before(async () => {
      const mlp = bundledConfig("mlp").replace('name: "mlp"', 'name: "mlp_gpu"');
      repo = createFixtureRepository({
        mlp_gpu: { from: "mlp", config: mlp.replace(/instance_group \[[^\]]*\]/, "") + gpuGroup(2) },
        simple_gpu: {
          from: "simple",
          config:
            bundledConfig("simple").replace('name: "simple"', 'name: "simple_gpu"') +
            "\ndynamic_batching { max_queue_delay_microseconds: 500 }\n" +
            gpuGroup(1),
        },
      });
      core = await createInferenceCore({
        modelRepository: repo.dir,
        gpuExecutionProvider: "webgpu",
        crashWorkerParameter: "test_crash",
        logger,
      });
    });
    after(async () => {
      await core?.close();
      repo?.remove();
      assert.equal(webGpuExecutorThreads(), 0, "no executor thread is left after close");
    });

    const mlpInput = (k: number) =>
      Float32Array.from({ length: 64 }, (_, i) => Math.sin(k * 7.3 + i * 0.37) * 2);
    const simpleInputs = (k: number) => [
      Int32Array.from({ length: 16 }, (_, i) => k * 16 + i),
      Int32Array.from({ length: 16 }, (_, i) => (k % 97) - i),
    ];

    async function mlpAnswerIsItsOwn(k: number): Promise<void> {
      const data = mlpInput(k);
      const response = await core.infer({
        model: "mlp_gpu",
        inputs: [{ name: "input", datatype: "FP32", shape: [1, 64], data }],
      });
      const got = response.outputs[0]!.data as Float32Array;
      const expected = mlpForward(data);
      for (let i = 0; i < expected.length; i++) {
        const tolerance = 1e-5 + 1e-3 * Math.abs(expected[i]!);
        assert.ok(Math.abs(got[i]! - expected[i]!) <= tolerance, `mlp request ${k} element ${i}`);
      }
    }

    async function simpleAnswerIsItsOwn(k: number): Promise<void> {
      const [a, b] = simpleInputs(k);
      const response = await core.infer({
        model: "simple_gpu",
        inputs: [
          { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: a! },
          { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: b! },
        ],
      });
      const byName = new Map(response.outputs.map((o) => [o.name, o.data as Int32Array]));
      assert.deepEqual(
        [...byName.get("OUTPUT0")!],
        [...a!].map((x, i) => x + b![i]!),
        `simple request ${k}`,
      );
      assert.deepEqual(
        [...byName.get("OUTPUT1")!],
        [...a!].map((x, i) => x - b![i]!),
        `simple request ${k}`,
      );
    }

    it("says in the log that each GPU instance runs on WebGPU", () => {
      assert.ok(
        logger.lines.includes(
          "I model 'mlp_gpu' version 1 instances: mlp_gpu_0_0 (GPU 0) on WebGPU, mlp_gpu_0_1 (GPU 0) on WebGPU",
        ),
        logger.lines.join("\n"),
      );
      assert.ok(
        logger.lines.includes("I model 'simple_gpu' version 1 instances: simple_gpu_0_0 (GPU 0) on WebGPU"),
      );
      assert.ok(!logger.lines.some((line) => line.startsWith("W ")), logger.lines.join("\n"));
      // Three WebGPU sessions, one thread owning them all.
      assert.equal(webGpuExecutorThreads(), 1);
    });

    it("2000 concurrent requests across both models: none fails, each answer is its own input's", async () => {
      const requests = Array.from({ length: 2000 }, (_, k) =>
        k % 2 === 0 ? mlpAnswerIsItsOwn(k) : simpleAnswerIsItsOwn(k),
      );
      const results = await Promise.allSettled(requests);
      const failures = results.filter((r) => r.status === "rejected");
      assert.equal(failures.length, 0, String((failures[0] as PromiseRejectedResult | undefined)?.reason));
      const [mlp] = core.modelStatistics("mlp_gpu");
      const [simple] = core.modelStatistics("simple_gpu");
      assert.equal(mlp?.inference_count, 1000);
      assert.equal(simple?.inference_count, 1000);
      // The dynamic batcher fed the GPU executor batches, not single requests.
      assert.ok((mlp?.execution_count ?? 0) < 1000, `mlp_gpu ran ${mlp?.execution_count} batches`);
      assert.ok((simple?.execution_count ?? 0) < 1000, `simple_gpu ran ${simple?.execution_count} batches`);
      assert.equal(webGpuExecutorThreads(), 1);
    });

    it("a crash of the executor thread fails the batch it held; the GPU instances come back", async () => {
      const crashed = core.infer({
        model: "mlp_gpu",
        inputs: [{ name: "input", datatype: "FP32", shape: [1, 64], data: mlpInput(1) }],
        parameters: { test_crash: true },
      });
      await assert.rejects(crashed, { status: "INTERNAL", message: /died while running the request/ });
      // Every WebGPU instance shared the thread: all are replaced, on a new one, and answer again.
      await Promise.all([mlpAnswerIsItsOwn(3), simpleAnswerIsItsOwn(4), mlpAnswerIsItsOwn(5)]);
      assert.equal(core.isModelReady("mlp_gpu"), true);
      assert.equal(core.isModelReady("simple_gpu"), true);
      assert.equal(webGpuExecutorThreads(), 1);
      assert.ok(
        logger.lines.some((line) =>
          /^W model instance 'simple_gpu_0_0' \(GPU 0\) of 'simple_gpu' version 1 died/.test(line),
        ),
      );
    });
  });

  it("a sequence model's states stay in the executor thread, per session: interleaved running sums", async () => {
    const config = bundledConfig("sequence_accumulator")
      .replace("kind: KIND_CPU", "kind: KIND_GPU")
      .replace("count: 1", "count: 2")
      .replace("max_batch_size: 8", "max_batch_size: 2");
    const repo = createFixtureRepository({ sequence_accumulator: { config } });
    const core = await createInferenceCore({
      modelRepository: repo.dir,
      gpuExecutionProvider: "webgpu",
      logger: createRecordingLogger(),
    });
    try {
      // Five sequences on two sessions of two slots each: one waits in the backlog for a slot.
      const sums = await Promise.all(
        [1, 2, 3, 4, 5].map(async (n) => {
          let last = 0;
          for (const [i, value] of [n, n * 10, n * 100].entries()) {
            const response = await core.infer({
              model: "sequence_accumulator",
              inputs: [{ name: "INPUT", datatype: "INT32", shape: [1, 1], data: new Int32Array([value]) }],
              sequence: { id: BigInt(n), start: i === 0, end: i === 2 },
            });
            last = (response.outputs[0]!.data as Int32Array)[0]!;
          }
          return last;
        }),
      );
      assert.deepEqual(sums, [111, 222, 333, 444, 555]);
    } finally {
      await core.close();
      repo.remove();
    }
    assert.equal(webGpuExecutorThreads(), 0);
  });
});
