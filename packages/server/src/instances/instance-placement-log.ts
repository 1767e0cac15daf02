/**
 * The log lines that say where a model's KIND_GPU instances run: one line per model version naming each
 * instance's provider, and one warning per model version and reason when GPU instances fell back to CPU.
 */

import { PROVIDER_LABEL } from "./gpu-provider-choice.js";
import type { InstanceReadyInfo } from "./instance-types.js";
import type { WorkerInit } from "./worker-protocol.js";

/** A started instance as the pool holds it. */
export interface PlacedInstance {
  readonly init: WorkerInit;
  readonly info: InstanceReadyInfo | undefined;
}

/** The model version the lines are about. */
export interface PlacementIdentity {
  readonly modelName: string;
  readonly version: string;
}

function instanceLabel(init: WorkerInit): string {
  return init.gpu === undefined ? init.instanceName : `${init.instanceName} (GPU ${init.gpu.deviceId})`;
}

/**
 * `model 'm' version 1 instances: m_0_0 (GPU 0) on WebGPU, ...`, for a version with KIND_GPU instances
 * (a KIND_CPU-only version says nothing: its instances run on CPU); undefined otherwise.
 */
export function describePlacement(
  identity: PlacementIdentity,
  instances: readonly PlacedInstance[],
): string | undefined {
  if (!instances.some((instance) => instance.init.gpu !== undefined)) return undefined;
  const parts = instances
    .filter((instance) => instance.info !== undefined)
    .map((instance) => `${instanceLabel(instance.init)} on ${PROVIDER_LABEL[instance.info!.provider]}`);
  const otherDevice = instances.some(
    (instance) => instance.info?.provider === "webgpu" && (instance.init.gpu?.deviceId ?? 0) !== 0,
  );
  const note = otherDevice
    ? "; WebGPU cannot choose a device (onnxruntime takes no device id for it), so every WebGPU " +
      "instance runs on the adapter Dawn picks"
    : "";
  return `model '${identity.modelName}' version ${identity.version} instances: ${parts.join(", ")}${note}`;
}

/**
 * One warning per distinct reason for the KIND_GPU instances that run on CPU: which instances, the
 * provider choice, and each tried provider's reason.
 */
export function describeFallbacks(
  identity: PlacementIdentity,
  instances: readonly PlacedInstance[],
): string[] {
  const byReason = new Map<string, PlacedInstance[]>();
  for (const instance of instances) {
    const reason = instance.info?.fallback;
    if (reason === undefined || instance.init.gpu === undefined) continue;
    const key = `${instance.init.gpu.provider}\u0000${reason}`;
    byReason.set(key, [...(byReason.get(key) ?? []), instance]);
  }
  return [...byReason.values()].map((group) => {
    const first = group[0]!;
    const names = group.map((instance) => instanceLabel(instance.init)).join(", ");
    const verb = group.length === 1 ? `instance ${names} runs` : `instances ${names} run`;
    return (
      `model '${identity.modelName}' version ${identity.version} asked for KIND_GPU ` +
      `(--gpu-execution-provider ${first.init.gpu!.provider}) but no GPU execution provider could start, so ` +
      `${verb} on CPU: ${first.info!.fallback}`
    );
  });
}
