/**
 * Triton's GPU metric families (nv_gpu_utilization, nv_gpu_memory_total_bytes, nv_gpu_memory_used_bytes,
 * nv_gpu_power_usage; label gpu_uuid), read from `nvidia-smi --query-gpu` at scrape time. npm has no
 * maintained NVML binding, and nvidia-smi reads NVML and ships with every NVIDIA driver. Where no NVIDIA
 * GPU answers when the metrics endpoint starts, the families are not registered at all: absent, not zero
 * (as in Triton without GPUs). WebGPU devices of other vendors (and Mesa's software Vulkan device) have no
 * such counters.
 */
import { execFile } from "node:child_process";
import { Gauge, type Registry } from "prom-client";

/** One GPU's reading; a value nvidia-smi reports as unsupported is undefined. */
export interface GpuReading {
  readonly uuid: string;
  /** 0.0 to 1.0, as Triton reports it. */
  readonly utilization: number | undefined;
  readonly memoryTotalBytes: number | undefined;
  readonly memoryUsedBytes: number | undefined;
  readonly powerWatts: number | undefined;
}

/** Runs the query and resolves with its CSV text; rejects when it cannot (no driver, no tool). */
export type GpuQuery = () => Promise<string>;

const QUERY_FIELDS = "uuid,utilization.gpu,memory.total,memory.used,power.draw";
const QUERY_TIMEOUT_MS = 2000;
const MIB = 1024 * 1024;

/** nvidia-smi, asked for the five fields, CSV without header or units. */
export const nvidiaSmiQuery: GpuQuery = () =>
  new Promise((resolve, reject) => {
    execFile(
      "nvidia-smi",
      [`--query-gpu=${QUERY_FIELDS}`, "--format=csv,noheader,nounits"],
      { timeout: QUERY_TIMEOUT_MS, windowsHide: true },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });

function numberOrUndefined(field: string | undefined, scale: number): number | undefined {
  const value = Number(field?.trim());
  return field === undefined || field.trim() === "" || !Number.isFinite(value) ? undefined : value * scale;
}

/** The readings in nvidia-smi's CSV: one line per GPU, "[N/A]" or "[Not Supported]" for a missing value. */
export function parseNvidiaSmiCsv(text: string): GpuReading[] {
  const readings: GpuReading[] = [];
  for (const line of text.split(/\r?\n/)) {
    const fields = line.split(",").map((field) => field.trim());
    const uuid = fields[0];
    if (uuid === undefined || !uuid.startsWith("GPU-")) continue;
    readings.push({
      uuid,
      utilization: numberOrUndefined(fields[1], 0.01),
      memoryTotalBytes: numberOrUndefined(fields[2], MIB),
      memoryUsedBytes: numberOrUndefined(fields[3], MIB),
      powerWatts: numberOrUndefined(fields[4], 1),
    });
  }
  return readings;
}

/** Where the GPU families read from. */
export interface GpuMetricsSource {
  /** The GPUs' readings now (an empty list when the query fails after startup). */
  read(): Promise<readonly GpuReading[]>;
}

/** Asks once; a source when at least one GPU answered, undefined when none did (no GPU families then). */
export async function probeGpuMetrics(
  query: GpuQuery = nvidiaSmiQuery,
): Promise<GpuMetricsSource | undefined> {
  const first = await query().then(parseNvidiaSmiCsv, () => []);
  if (first.length === 0) return undefined;
  // prom-client starts every family's collect in the same tick: they share the query in flight, so one
  // scrape runs nvidia-smi once and the next scrape runs it anew.
  let inFlight: Promise<readonly GpuReading[]> | undefined;
  return {
    read() {
      inFlight ??= query()
        .then(parseNvidiaSmiCsv, () => [])
        .finally(() => {
          inFlight = undefined;
        });
      return inFlight;
    },
  };
}

/** Registers the four families on `registry`, each set from the source at scrape time. */
export function registerGpuMetrics(registry: Registry, source: GpuMetricsSource): void {
  const family = (name: string, help: string, value: (reading: GpuReading) => number | undefined) =>
    new Gauge<"gpu_uuid">({
      name,
      help,
      labelNames: ["gpu_uuid"],
      registers: [registry],
      async collect() {
        const readings = await source.read();
        this.reset();
        for (const reading of readings) {
          const v = value(reading);
          if (v !== undefined) this.set({ gpu_uuid: reading.uuid }, v);
        }
      },
    });
  family("nv_gpu_utilization", "GPU utilization rate [0.0 - 1.0)", (r) => r.utilization);
  family("nv_gpu_memory_total_bytes", "GPU total memory, in bytes", (r) => r.memoryTotalBytes);
  family("nv_gpu_memory_used_bytes", "GPU used memory, in bytes", (r) => r.memoryUsedBytes);
  family("nv_gpu_power_usage", "GPU power usage in watts", (r) => r.powerWatts);
}
