/**
 * KIND_GPU when no GPU provider can start: the instances run on CPU, answer correctly, and the log says
 * once per model version why. The WebGPU failure is real: this test file's process points the Vulkan
 * loader at a driver list that does not exist (before anything creates a WebGPU device), so Dawn finds no
 * adapter, as on a machine without a Vulkan driver. The CUDA failure is real where onnxruntime-node was
 * installed without its CUDA binaries (the default here).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { mlpForward } from "@tbench/model-builder";
import { createInferenceCore } from "../lifecycle/create-inference-core.js";
import {
  bundledConfig,
  createFixtureRepository,
  createRecordingLogger,
  type FixtureRepository,
} from "../testing/test-fixtures.js";
import { cudaProviderInstalled } from "./gpu-provider-choice.js";
import { webGpuExecutorThreads } from "./webgpu-executor.js";
import type { GpuExecutionProvider } from "./worker-protocol.js";

// Read by the Vulkan loader when Dawn creates its instance, in the executor thread, after this line.
process.env["VK_ICD_FILENAMES"] = "/nonexistent/tbench-no-vulkan-driver.json";
process.env["VK_DRIVER_FILES"] = "/nonexistent/tbench-no-vulkan-driver.json";

const NO_ADAPTER = "WebGPU: Failed to get a WebGPU adapter: No supported adapters";
const CUDA_NOT_INSTALLED =
  "CUDA: the CUDA execution provider is not installed (onnxruntime-node downloads it only when installed " +
  "with --onnxruntime-node-install=cuda12)";

describe("KIND_GPU falls back to CPU, saying why", () => {
  let repo: FixtureRepository;
  before(() => {
    repo = createFixtureRepository({
      mlp_gpu: {
        from: "mlp",
        config:
          bundledConfig("mlp")
            .replace('name: "mlp"', 'name: "mlp_gpu"')
            .replace(/instance_group \[[^\]]*\]/, "") + "\ninstance_group [ { count: 2 kind: KIND_GPU } ]\n",
      },
    });
  });
  after(() => repo?.remove());

  async function loadWith(provider: GpuExecutionProvider) {
    const logger = createRecordingLogger();
    const core = await createInferenceCore({
      modelRepository: repo.dir,
      gpuExecutionProvider: provider,
      logger,
    });
    try {
      assert.equal(core.isModelReady("mlp_gpu"), true);
      const data = Float32Array.from({ length: 128 }, (_, i) => Math.cos(i * 0.21));
      const response = await core.infer({
        model: "mlp_gpu",
        inputs: [{ name: "input", datatype: "FP32", shape: [2, 64], data }],
      });
      const got = response.outputs[0]!.data as Float32Array;
      const expected = mlpForward(data);
      for (let i = 0; i < expected.length; i++)
        assert.ok(Math.abs(got[i]! - expected[i]!) < 1e-5, `element ${i}`);
    } finally {
      await core.close();
    }
    assert.equal(webGpuExecutorThreads(), 0, "a WebGPU attempt that failed leaves no thread behind");
    return logger.lines;
  }

  it("auto: CUDA not installed, no WebGPU adapter: one warning naming both, instances on CPU", async (t) => {
    if (cudaProviderInstalled()) t.skip("onnxruntime-node's CUDA provider is installed here: auto tries it");
    const lines = await loadWith("auto");
    assert.deepEqual(
      lines.filter((line) => line.startsWith("W ")),
      [
        "W model 'mlp_gpu' version 1 asked for KIND_GPU (--gpu-execution-provider auto) but no GPU execution " +
          "provider could start, so instances mlp_gpu_0_0 (GPU 0), mlp_gpu_0_1 (GPU 0) run on CPU: " +
          `${CUDA_NOT_INSTALLED}; ${NO_ADAPTER}`,
      ],
    );
    assert.ok(
      lines.includes(
        "I model 'mlp_gpu' version 1 instances: mlp_gpu_0_0 (GPU 0) on CPU, mlp_gpu_0_1 (GPU 0) on CPU",
      ),
    );
  });

  it("webgpu: no adapter: the WebGPU reason alone", async () => {
    const lines = await loadWith("webgpu");
    assert.deepEqual(
      lines.filter((line) => line.startsWith("W ")),
      [
        "W model 'mlp_gpu' version 1 asked for KIND_GPU (--gpu-execution-provider webgpu) but no GPU execution " +
          `provider could start, so instances mlp_gpu_0_0 (GPU 0), mlp_gpu_0_1 (GPU 0) run on CPU: ${NO_ADAPTER}`,
      ],
    );
  });

  it("cuda without its binaries: onnxruntime's reason, naming the device", async (t) => {
    if (cudaProviderInstalled()) t.skip("onnxruntime-node's CUDA provider is installed here");
    const lines = await loadWith("cuda");
    const warnings = lines.filter((line) => line.startsWith("W "));
    assert.equal(warnings.length, 1, lines.join("\n"));
    assert.match(
      warnings[0]!,
      /^W model 'mlp_gpu' version 1 asked for KIND_GPU \(--gpu-execution-provider cuda\) but no GPU execution provider could start, so instances mlp_gpu_0_0 \(GPU 0\), mlp_gpu_0_1 \(GPU 0\) run on CPU: CUDA \(device 0\): .+/,
    );
  });
});
