/**
 * The main thread's handle on one model instance, and where an instance is started on its execution
 * provider. A CPU instance is a worker thread of its own; a KIND_GPU instance tries the providers its
 * choice names (CUDA in a worker thread of its own, WebGPU in the process's one WebGPU executor thread)
 * and falls back to a CPU worker, reporting why. Either way the pool sees the same ModelInstance.
 */
import {
  cudaProviderInstalled,
  gpuProviderPlan,
  PROVIDER_LABEL,
  providerFailureReason,
} from "./gpu-provider-choice.js";
import type { ModelInstanceOptions, StartedInstance } from "./instance-types.js";
import { startWebGpuInstance } from "./webgpu-executor.js";
import { startWorkerInstance } from "./worker-instance.js";

export type {
  InstanceReadyInfo,
  InstanceRun,
  InstanceSequenceRun,
  ModelInstance,
  ModelInstanceOptions,
  StartedInstance,
} from "./instance-types.js";
export type { InstanceRunResult } from "./worker-protocol.js";

/**
 * Starts the instance and waits until its session is created. KIND_GPU: the first provider of its plan that
 * starts wins; when none does, a CPU instance with the reasons in `info.fallback`. Rejects when the CPU
 * session cannot be created either (the model's own problem, with onnxruntime's message).
 */
export async function startModelInstance(options: ModelInstanceOptions): Promise<StartedInstance> {
  const gpu = options.init.gpu;
  if (gpu === undefined) return startWorkerInstance(options, "cpu");
  const plan = gpuProviderPlan(gpu.provider, gpu.provider === "auto" && cudaProviderInstalled());
  const reasons = [...plan.skipped];
  for (const provider of plan.attempts) {
    try {
      return provider === "webgpu"
        ? await startWebGpuInstance(options)
        : await startWorkerInstance(options, "cuda");
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const where = provider === "cuda" ? ` (device ${gpu.deviceId})` : "";
      reasons.push(`${PROVIDER_LABEL[provider]}${where}: ${providerFailureReason(message)}`);
    }
  }
  const started = await startWorkerInstance(options, "cpu");
  return { instance: started.instance, info: { ...started.info, fallback: reasons.join("; ") } };
}
