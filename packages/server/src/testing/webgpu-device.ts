/**
 * Test helper: whether this machine has a WebGPU device for onnxruntime (on Linux: a Vulkan driver; CI
 * installs Mesa's software one). Tests that need it skip with the reason where it is missing, except where
 * .ci/run requires every system tool (TBENCH_REQUIRE_SYSTEM_TOOLS): there the device can always be made, so
 * its absence is a broken setup and the tests run and fail.
 */
import { SKIP_PREFIX, systemToolsRequired } from "../../../../scripts/testing/system-tools.js";
import { startWebGpuInstance } from "../instances/webgpu-executor.js";
import { bundledModelFile } from "./test-fixtures.js";

const INSTALL_HINT =
  "on Debian 12: add the bookworm-backports suite, then apt-get install -t bookworm-backports " +
  "mesa-vulkan-drivers libvulkan1 (.ci/run does this)";

/** Creates and releases one tiny WebGPU session; the reason when it cannot. */
export async function probeWebGpu(): Promise<{ ok: true } | { ok: false; reason: string }> {
  try {
    const { instance } = await startWebGpuInstance({
      init: {
        modelPath: bundledModelFile("identity_fp32"),
        instanceName: "webgpu_probe",
        intraOpThreads: 1,
        interOpThreads: 1,
      },
    });
    await instance.close();
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

/** `skip` for node:test: false where the tests must run, else why they cannot. */
export async function webGpuSkip(): Promise<string | false> {
  const probe = await probeWebGpu();
  if (probe.ok || systemToolsRequired()) return false;
  return `${SKIP_PREFIX}vulkan (no WebGPU device here: ${probe.reason.trim()}; ${INSTALL_HINT})`;
}
