/**
 * Instance settings from instance groups, as Triton counts them (a KIND_GPU group has `count` instances on
 * each GPU it lists), and the provider plan of each --gpu-execution-provider choice.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { gpuProviderPlan, providerFailureReason } from "./gpu-provider-choice.js";
import { instanceInits } from "./instance-pool.js";

const base = { modelPath: "/m/1/model.onnx", intraOpThreads: 1 };

test("KIND_GPU: count instances on each listed GPU, named alike on each; KIND_CPU: count", () => {
  const inits = instanceInits({
    ...base,
    gpuExecutionProvider: "webgpu",
    groups: [
      { name: "g", kind: "KIND_GPU", count: 2, gpus: [0, 1] },
      { name: "c", kind: "KIND_CPU", count: 1, gpus: [] },
    ],
  });
  assert.deepEqual(
    inits.map((init) => [init.instanceName, init.gpu?.deviceId, init.gpu?.provider]),
    [
      ["g_0", 0, "webgpu"],
      ["g_0", 1, "webgpu"],
      ["g_1", 0, "webgpu"],
      ["g_1", 1, "webgpu"],
      ["c_0", undefined, undefined],
    ],
  );
});

test("KIND_GPU without gpus uses GPU 0; the provider choice defaults to auto", () => {
  const [init] = instanceInits({ ...base, groups: [{ name: "g", kind: "KIND_GPU", count: 1, gpus: [] }] });
  assert.deepEqual(init?.gpu, { deviceId: 0, provider: "auto" });
});

test("provider plans: auto tries CUDA only where installed, then WebGPU; explicit choices try one", () => {
  assert.deepEqual(gpuProviderPlan("auto", true), { attempts: ["cuda", "webgpu"], skipped: [] });
  const auto = gpuProviderPlan("auto", false);
  assert.deepEqual(auto.attempts, ["webgpu"]);
  assert.match(auto.skipped[0]!, /^CUDA: the CUDA execution provider is not installed/);
  assert.deepEqual(gpuProviderPlan("webgpu", true), { attempts: ["webgpu"], skipped: [] });
  assert.deepEqual(gpuProviderPlan("cuda", false), { attempts: ["cuda"], skipped: [] });
});

test("onnxruntime's failure messages lose their source location", () => {
  assert.equal(
    providerFailureReason(
      "/onnxruntime_src/onnxruntime/core/providers/webgpu/webgpu_context.cc:136 onnxruntime::webgpu::" +
        "WebGpuContext::Initialize(const onnxruntime::webgpu::WebGpuContextConfig&)::<lambda()> " +
        "adapter_result.status == wgpu::RequestAdapterStatus::Success was false. Failed to get a WebGPU " +
        "adapter: No supported adapters\n",
    ),
    "Failed to get a WebGPU adapter: No supported adapters",
  );
  assert.equal(
    providerFailureReason("OrtSessionOptionsAppendExecutionProvider_Cuda: Failed to load shared library"),
    "OrtSessionOptionsAppendExecutionProvider_Cuda: Failed to load shared library",
  );
});
