/**
 * GPU metric families: Triton's names, units and label from nvidia-smi's CSV (a fake query stands in for
 * the tool), read at scrape time; absent, not zero, when no GPU answers at startup (a failing query, and
 * this machine's real nvidia-smi lookup when it has none).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parsePrometheusText } from "@tbench/proto";
import { silentLogger } from "../core/logger.js";
import { createFakeCore } from "../testing/fake-core.js";
import { nvidiaSmiQuery, parseNvidiaSmiCsv } from "./gpu-metrics.js";
import { createMetricsServer } from "./metrics-server.js";

const MIB = 1024 * 1024;

test("nvidia-smi's CSV becomes Triton's units: utilization 0..1, memory in bytes, power in watts", () => {
  const readings = parseNvidiaSmiCsv(
    "GPU-11111111-2222-3333-4444-555555555555, 45, 81559, 1024, 70.53\n" +
      "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee, 0, 16384, 0, [N/A]\n" +
      "No devices were found\n",
  );
  assert.deepEqual(readings, [
    {
      uuid: "GPU-11111111-2222-3333-4444-555555555555",
      utilization: 0.45,
      memoryTotalBytes: 81559 * MIB,
      memoryUsedBytes: 1024 * MIB,
      powerWatts: 70.53,
    },
    {
      uuid: "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
      utilization: 0,
      memoryTotalBytes: 16384 * MIB,
      memoryUsedBytes: 0,
      powerWatts: undefined,
    },
  ]);
});

test("with a GPU, the four families are served per gpu_uuid and read at each scrape", async () => {
  let used = 1024;
  let queries = 0;
  const gpuQuery = async () => {
    queries++;
    return `GPU-1234, 92, 81559, ${used}, 300.25\n`;
  };
  const server = await createMetricsServer({
    core: createFakeCore(),
    port: 0,
    address: "127.0.0.1",
    logger: silentLogger,
    gpuQuery,
  });
  try {
    const first = parsePrometheusText(await (await fetch(server.url)).text());
    const gpu = { gpu_uuid: "GPU-1234" };
    assert.equal(first.get("nv_gpu_utilization", gpu), 0.92);
    assert.equal(first.get("nv_gpu_memory_total_bytes", gpu), 81559 * MIB);
    assert.equal(first.get("nv_gpu_memory_used_bytes", gpu), 1024 * MIB);
    assert.equal(first.get("nv_gpu_power_usage", gpu), 300.25);
    // The startup probe, then one query for the scrape's four families.
    assert.equal(queries, 2);
    used = 2048;
    const second = parsePrometheusText(await (await fetch(server.url)).text());
    assert.equal(second.get("nv_gpu_memory_used_bytes", gpu), 2048 * MIB);
    assert.equal(queries, 3);
  } finally {
    await server.close();
  }
});

test("without a GPU the families are absent, not zero", async () => {
  const failing = await createMetricsServer({
    core: createFakeCore(),
    port: 0,
    address: "127.0.0.1",
    logger: silentLogger,
    gpuQuery: () => Promise.reject(new Error("spawn nvidia-smi ENOENT")),
  });
  try {
    const text = await (await fetch(failing.url)).text();
    assert.doesNotMatch(text, /nv_gpu_/);
    assert.match(text, /nv_cpu_utilization/);
  } finally {
    await failing.close();
  }
  // The real lookup: on a machine where nvidia-smi lists no GPU, nothing of them is served.
  const hasGpu = await nvidiaSmiQuery().then(
    (text) => parseNvidiaSmiCsv(text).length > 0,
    () => false,
  );
  const real = await createMetricsServer({
    core: createFakeCore(),
    port: 0,
    address: "127.0.0.1",
    logger: silentLogger,
  });
  try {
    const text = await (await fetch(real.url)).text();
    if (hasGpu) assert.match(text, /nv_gpu_utilization\{gpu_uuid="GPU-/);
    else assert.doesNotMatch(text, /nv_gpu_/);
  } finally {
    await real.close();
  }
});
