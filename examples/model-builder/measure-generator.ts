/**
 * Measures `char_generator`'s step in-process with onnxruntime-node (one intra-op thread, as the server's
 * generation instance runs it): median step time at batch 1, 4, 16 and 32, and how many batch-1 steps each
 * costs. Not a test; timings depend on the machine. `--hidden 1024,2048` compares other state sizes (the
 * bundled model uses GENERATOR_SIZES.hidden).
 * Run: `npx tsx --conditions=source examples/model-builder/measure-generator.ts [--hidden H,H...]`.
 */
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";
import { buildCharGeneratorModel, GENERATOR_SIZES } from "./models/generator.js";
import { createMulberry32, uniformFloat32 } from "./prng.js";

async function medianStepMs(
  session: ort.InferenceSession,
  hidden: number,
  batch: number,
  runs: number,
): Promise<number> {
  const random = createMulberry32(batch);
  const ids = BigInt64Array.from({ length: batch }, () => BigInt(1 + Math.floor(random() * 95)));
  const feeds = {
    input_ids: new ort.Tensor("int64", ids, [batch, 1]),
    state: new ort.Tensor("float32", uniformFloat32(random, batch * hidden, 0.9), [batch, hidden]),
  };
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

async function measure(hidden: number): Promise<void> {
  const bytes = buildCharGeneratorModel(hidden);
  const session = await ort.InferenceSession.create(bytes, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: "sequential",
  });
  const batch1Ms = await medianStepMs(session, hidden, 1, 400);
  const mib = (bytes.length / 1048576).toFixed(1);
  console.log(
    `char_generator H=${hidden}: ${mib} MiB, one intra-op thread, median of repeated in-process steps`,
  );
  console.log(`batch 1:  ${batch1Ms.toFixed(3)} ms`);
  for (const batch of [4, 16, 32]) {
    const ms = await medianStepMs(session, hidden, batch, 100);
    const ratio = (ms / batch1Ms).toFixed(2);
    console.log(
      `batch ${batch}: ${ms.toFixed(3)} ms, ${ratio}x a batch-1 step (${batch}x would mean no gain)`,
    );
  }
  await session.release();
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { hidden: { type: "string" } }, strict: true });
  const sizes = (values.hidden ?? String(GENERATOR_SIZES.hidden)).split(",").map(Number);
  if (sizes.some((h) => !Number.isInteger(h) || h < 1))
    throw new Error(`--hidden: positive integers, got ${values.hidden}`);
  for (const hidden of sizes) await measure(hidden);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
