/**
 * Which execution providers a KIND_GPU instance tries, in order, for --gpu-execution-provider: `cuda` and
 * `webgpu` try that one; `auto` tries CUDA when its binaries are installed, then WebGPU. Whatever is
 * tried and fails leaves its reason; the instance then runs on CPU and the pool logs the reasons.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { arch, platform } from "node:os";
import { dirname, join } from "node:path";
import type { GpuExecutionProvider } from "./worker-protocol.js";

/** The default of --gpu-execution-provider. */
export const DEFAULT_GPU_EXECUTION_PROVIDER: GpuExecutionProvider = "auto";

/** Every accepted value of --gpu-execution-provider. */
export const GPU_EXECUTION_PROVIDERS: readonly GpuExecutionProvider[] = ["auto", "webgpu", "cuda"];

/** Human names, for log lines. */
export const PROVIDER_LABEL = { cpu: "CPU", cuda: "CUDA", webgpu: "WebGPU" } as const;

const CUDA_NOT_INSTALLED =
  "the CUDA execution provider is not installed (onnxruntime-node downloads it only when installed with " +
  "--onnxruntime-node-install=cuda12)";

/**
 * True when onnxruntime-node's CUDA provider library sits next to its native binding, where its install
 * script puts it (bin/napi-v6/<platform>/<arch>/); the bundled package has none.
 */
export function cudaProviderInstalled(): boolean {
  try {
    const require = createRequire(import.meta.url);
    const packageDir = dirname(require.resolve("onnxruntime-node/package.json"));
    const binDir = join(packageDir, "bin", "napi-v6", platform(), arch());
    const file =
      platform() === "win32" ? "onnxruntime_providers_cuda.dll" : "libonnxruntime_providers_cuda.so";
    return existsSync(join(binDir, file));
  } catch {
    return false;
  }
}

/** What to try for one KIND_GPU instance, and why a provider `auto` would try is left out. */
export interface GpuProviderPlan {
  readonly attempts: readonly ("cuda" | "webgpu")[];
  readonly skipped: readonly string[];
}

/** The providers to try for `choice`; `cudaInstalled` says whether auto may try CUDA. */
export function gpuProviderPlan(choice: GpuExecutionProvider, cudaInstalled: boolean): GpuProviderPlan {
  switch (choice) {
    case "cuda":
      return { attempts: ["cuda"], skipped: [] };
    case "webgpu":
      return { attempts: ["webgpu"], skipped: [] };
    case "auto":
      return cudaInstalled
        ? { attempts: ["cuda", "webgpu"], skipped: [] }
        : { attempts: ["webgpu"], skipped: [`CUDA: ${CUDA_NOT_INSTALLED}`] };
  }
}

/**
 * onnxruntime's message without the source location it starts with
 * ("/onnxruntime_src/.../webgpu_context.cc:136 ... was false. Failed to get a WebGPU adapter: ...").
 */
export function providerFailureReason(message: string): string {
  const trimmed = message.trim();
  const located = /^\/\S+:\d+ .*? was false\. (.+)$/s.exec(trimmed);
  return (located?.[1] ?? trimmed).trim();
}
