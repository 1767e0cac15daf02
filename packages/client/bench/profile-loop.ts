// A bare loop of client calls for profiling (not a benchmark result): 16 calls in flight against
// tbench-server in a child process, for a few seconds, printing calls/s. Profile it with e.g.
//   node --cpu-prof --cpu-prof-dir=/tmp/prof --conditions=source --import tsx \
//     packages/client/bench/profile-loop.ts health|infer-binary|infer-json [seconds] [undici|wire]

import { startTbenchServer } from "@tbench/bench-kit";
import { createHttpClient } from "../src/index.js";

const target = process.argv[2] ?? "health";
const seconds = Number(process.argv[3] ?? 5);
const engine = process.argv[4] === "wire" ? "wire" : "undici";
const IN_FLIGHT = 16;

const server = await startTbenchServer({ from: "source", models: ["identity_fp32"] });
const client = createHttpClient({ url: server.httpUrl, connections: IN_FLIGHT, maxRetries: 0, engine });
const binary = target === "infer-binary";
const prepared = client.prepareInfer("identity_fp32", {
  inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, 1], data: Float32Array.of(1.5) }],
  binaryInputs: binary,
  binaryOutputs: binary,
});
const call = target === "health" ? () => client.isServerReady() : () => prepared.send();
let calls = 0;
let stop = false;
const loop = async () => {
  while (!stop) {
    await call();
    calls++;
  }
};
const loops = Array.from({ length: IN_FLIGHT }, loop);
await new Promise((resolve) => setTimeout(resolve, 500));
const before = calls;
const t0 = performance.now();
await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
const rate = ((calls - before) / (performance.now() - t0)) * 1000;
stop = true;
await Promise.all(loops);
process.stdout.write(`${target} (${engine}): ${rate.toFixed(0)} calls/s\n`);
await client.close();
await server.close();
