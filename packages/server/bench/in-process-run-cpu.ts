// The floor under target 3 (server CPU per `simple` request <= 1.5x a bare node:http handler): the CPU one
// `session.run()` of `simple` at batch 1 costs onnxruntime-node itself, in this process, with the threads
// the server gives an instance. No server that answers over node:http and runs the model can spend less
// than the bare handler's CPU plus this, so (bare + run) / bare is the best ratio any server could reach.
import { setTimeout as sleep } from "node:timers/promises";
import * as ort from "onnxruntime-node";

/** One session of a model whose inputs are INT32 rows of `width`, kept across rounds. */
export interface InProcessRunCpu {
  /** CPU µs (user + system, this process) per run over `runs` runs at batch 1. */
  measure(runs: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * Before each figure: a pause, then untimed runs. The first runs of a fresh session cost about twice the
 * settled CPU (111 µs a run over the first 500, 53 µs over the next 5,000), and right after the heavy
 * model's limit runs some thread still spins (process CPU above wall time) until about 100 ms of rest.
 */
const SETTLE_MS = 200;
const WARMUP_RUNS = 3000;

export async function createInProcessRunCpu(path: string, width: number): Promise<InProcessRunCpu> {
  const session = await ort.InferenceSession.create(path, {
    executionProviders: ["cpu"],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  const feed: Record<string, ort.Tensor> = {};
  for (const name of session.inputNames) {
    const data = new Int32Array(width);
    for (let i = 0; i < width; i++) data[i] = i;
    feed[name] = new ort.Tensor("int32", data, [1, width]);
  }
  return {
    async measure(runs) {
      await sleep(SETTLE_MS);
      for (let i = 0; i < WARMUP_RUNS; i++) await session.run(feed);
      const before = process.cpuUsage();
      for (let i = 0; i < runs; i++) await session.run(feed);
      const used = process.cpuUsage(before);
      return (used.user + used.system) / runs;
    },
    close: () => session.release(),
  };
}
