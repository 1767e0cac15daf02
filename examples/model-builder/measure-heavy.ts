/**
 * Measures the `heavy` model in-process with onnxruntime-node (one intra-op thread, as its config asks):
 * median run time at batch 1, 8, 16 and 32, and how many batch-1 runs each costs. Not a test; timings
 * depend on the machine. Run: `npx tsx --conditions=source examples/model-builder/measure-heavy.ts`.
 */
import { performance } from "node:perf_hooks";
import * as ort from "onnxruntime-node";
import { buildHeavyModel, HEAVY_SIZES } from "./models/heavy.js";
import { createMulberry32, uniformFloat32 } from "./prng.js";

async function medianRunMs(session: ort.InferenceSession, batch: number, runs: number): Promise<number> {
  const data = uniformFloat32(createMulberry32(batch), batch * HEAVY_SIZES.inputs, 1);
  const feeds = { input: new ort.Tensor("float32", data, [batch, HEAVY_SIZES.inputs]) };
  for (let i = 0; i < Math.max(3, runs / 10); i++) await session.run(feeds);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await session.run(feeds);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  // The median resists the odd slow run from a busy shared machine.
  return times[Math.floor(times.length / 2)]!;
}

async function main(): Promise<void> {
  const bytes = buildHeavyModel();
  const session = await ort.InferenceSession.create(bytes, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: "sequential",
  });
  const batch1Ms = await medianRunMs(session, 1, 400);
  const mib = (bytes.length / 1048576).toFixed(1);
  console.log(`heavy: ${mib} MiB, one intra-op thread, median of repeated in-process runs`);
  console.log(`batch 1:  ${batch1Ms.toFixed(3)} ms`);
  for (const batch of [8, 16, 32]) {
    const ms = await medianRunMs(session, batch, 100);
    const ratio = (ms / batch1Ms).toFixed(2);
    console.log(
      `batch ${batch}: ${ms.toFixed(3)} ms, ${ratio}x a batch-1 run (${batch}x would mean no gain)`,
    );
  }
  await session.release();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
