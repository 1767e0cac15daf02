// The two ways of running IMAGE -> resnet_like -> label_head -> LABEL that bench:models compares, each
// driven as a closed loop of N concurrent chains through @tbench/client (HTTP, binary tensors both ways,
// one keep-alive connection per chain):
//   - "ensemble": one request to ensemble_pipeline, the server hands EMBED from step to step;
//   - "client chain": resnet_like, then label_head with the EMBED the client got back (what an application
//     does without ensembles: one more round trip, EMBED over the wire twice).
// Each chain sends its own fixed image; the image request is encoded once (prepareInfer) on both sides,
// so the contenders differ only in what chaining costs.

import { median } from "@tbench/bench-kit";
import { createHttpClient, type InferenceClient, type PreparedInfer } from "@tbench/client";

export const CONTENDERS = ["ensemble", "client chain"] as const;
export type Contender = (typeof CONTENDERS)[number];

/** ensemble_pipeline's and its members' tensors (examples/models). */
const IMAGE_DIMS = [3, 224, 224] as const;
const IMAGE_ELEMENTS = IMAGE_DIMS[0] * IMAGE_DIMS[1] * IMAGE_DIMS[2];

/** One measured run of one contender. */
export interface ChainRun {
  contender: Contender;
  /** Chains (LABELs) answered per second inside the measured window. */
  chainsPerSec: number;
  /** Chains answered inside the measured window. */
  completed: number;
  /** Failed chains (whole run, warmup included), and the first failure's message. */
  errors: number;
  firstError: string | null;
  /** The measured window, ms (after the warmup). */
  windowMs: number;
  /** Latency of one whole chain, over the chains answered inside the window. */
  p50Ms: number;
  p99Ms: number;
  /** resnet_like's inferences / executions over the run (its statistics): the batches its batcher made. */
  resnetAvgBatch: number | null;
}

export interface PipelineDriverOptions {
  url: string;
  /** Concurrent chains (and keep-alive connections). */
  concurrency: number;
}

export interface PipelineDriver {
  /**
   * Sends each chain's image both ways once and returns how many answers agree (LABEL from the ensemble
   * equals label from the client chain); a benchmark whose contenders disagree measures nothing.
   */
  checkAnswers(): Promise<{ agreeing: number; checked: number }>;
  /** Runs `contender` for warmupMs, then counts the chains answered during the next windowMs (a closed
   * loop: each chain sends again as soon as it is answered); answers after the window are not counted. */
  run(contender: Contender, warmupMs: number, windowMs: number): Promise<ChainRun>;
  close(): Promise<void>;
}

/** A deterministic image per chain (a 32-bit LCG), so every run sends the same bytes. */
function makeImage(seed: number): Float32Array {
  const image = new Float32Array(IMAGE_ELEMENTS);
  let state = (seed * 2654435761 + 1) >>> 0;
  for (let i = 0; i < image.length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    image[i] = state / 0x1_0000_0000 - 0.5;
  }
  return image;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export function createPipelineDriver(options: PipelineDriverOptions): PipelineDriver {
  const client: InferenceClient = createHttpClient({ url: options.url, connections: options.concurrency });
  const images = Array.from({ length: options.concurrency }, (_, i) => makeImage(i));
  const imageInput = (data: Float32Array) => ({
    datatype: "FP32" as const,
    shape: [1, ...IMAGE_DIMS],
    data,
  });
  const ensembleCalls: PreparedInfer[] = images.map((data) =>
    client.prepareInfer("ensemble_pipeline", {
      inputs: [{ name: "IMAGE", ...imageInput(data) }],
      outputs: [{ name: "LABEL", binary: true }],
    }),
  );
  const resnetCalls: PreparedInfer[] = images.map((data) =>
    client.prepareInfer("resnet_like", {
      inputs: [{ name: "input", ...imageInput(data) }],
      outputs: [{ name: "output", binary: true }],
    }),
  );

  const labelOf = (output: { as(d: "INT64"): BigInt64Array } | undefined, model: string): bigint => {
    const label = output?.as("INT64")[0];
    if (label === undefined) throw new Error(`${model}: expected a label in the answer, got none`);
    return label;
  };
  const chains: Record<Contender, (i: number) => Promise<bigint>> = {
    ensemble: async (i) => labelOf((await ensembleCalls[i]!.send()).output("LABEL"), "ensemble_pipeline"),
    "client chain": async (i) => {
      const embed = (await resnetCalls[i]!.send()).output("output");
      if (embed === undefined)
        throw new Error("resnet_like: expected output 'output' in the answer, got none");
      const head = await client.infer("label_head", {
        inputs: [{ name: "emb", datatype: "FP32", shape: [...embed.shape], data: embed.as("FP32") }],
        outputs: [{ name: "label", binary: true }],
      });
      return labelOf(head.output("label"), "label_head");
    },
  };

  const resnetCounts = async () => {
    const stats = (await client.modelStatistics("resnet_like"))[0];
    return { inferences: stats?.inferenceCount ?? 0, executions: stats?.executionCount ?? 0 };
  };

  return {
    async checkAnswers() {
      let agreeing = 0;
      for (let i = 0; i < images.length; i++) {
        const [viaEnsemble, viaClient] = await Promise.all([chains.ensemble(i), chains["client chain"](i)]);
        if (viaEnsemble === viaClient) agreeing++;
      }
      return { agreeing, checked: images.length };
    },

    async run(contender, warmupMs, windowMs) {
      const chain = chains[contender];
      const before = await resnetCounts();
      const start = performance.now();
      const measureFrom = start + warmupMs;
      const end = measureFrom + windowMs;
      const latencies: number[] = [];
      let errors = 0;
      let firstError: string | null = null;
      const loop = async (i: number) => {
        while (performance.now() < end) {
          const sent = performance.now();
          try {
            await chain(i);
            const done = performance.now();
            if (done >= measureFrom && done <= end) latencies.push(done - sent);
          } catch (error) {
            errors++;
            firstError ??= (error as Error).message;
          }
        }
      };
      await Promise.all(images.map((_, i) => loop(i)));
      const after = await resnetCounts();
      const executions = after.executions - before.executions;
      const sorted = latencies.sort((a, b) => a - b);
      return {
        contender,
        chainsPerSec: latencies.length / (windowMs / 1000),
        completed: latencies.length,
        errors,
        firstError,
        windowMs,
        p50Ms: sorted.length > 0 ? median(sorted) : Number.NaN,
        p99Ms: quantile(sorted, 0.99),
        resnetAvgBatch: executions > 0 ? (after.inferences - before.inferences) / executions : null,
      };
    },

    close: () => client.close(),
  };
}
