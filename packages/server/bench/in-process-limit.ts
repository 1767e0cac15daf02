// The in-process limit of the batching benchmark: how many rows per second onnxruntime-node itself runs a
// model at a given batch size, with the threads the model's config gives its instance (one session, the
// same intra-op and inter-op threads, CPU provider), back to back with nothing else in the way. A server
// in front of the same session cannot beat it; the benchmark measures it in every round, between the
// server runs, so that load from elsewhere hits both alike.
import * as ort from "onnxruntime-node";

/** What to measure: the model file and its one FP32 input of `width` values per row. */
export interface LimitModel {
  path: string;
  inputName: string;
  width: number;
  intraOpThreads: number;
  interOpThreads: number;
}

/** One session, kept across rounds; `measure` runs one batch size for a while and returns rows/s. */
export interface InProcessLimit {
  measure(batchSize: number, durationMs: number): Promise<number>;
  /**
   * CPU µs (user + system of this process) per run at `batchSize`, over at least `minMs` of runs: the
   * model's own cost, which the server benchmark subtracts from the server's CPU per request.
   */
  cpuPerRunUs(batchSize: number, minMs: number): Promise<number>;
  close(): Promise<void>;
}

/** Runs before a batch size is first timed: load the weights into cache, let allocations settle. */
const WARMUP_RUNS = 5;

export async function createInProcessLimit(model: LimitModel): Promise<InProcessLimit> {
  const session = await ort.InferenceSession.create(model.path, {
    executionProviders: ["cpu"],
    intraOpNumThreads: model.intraOpThreads,
    interOpNumThreads: model.interOpThreads,
  });
  const feeds = new Map<number, Record<string, ort.Tensor>>();
  const feedOf = async (batchSize: number) => {
    let feed = feeds.get(batchSize);
    if (feed === undefined) {
      const data = new Float32Array(batchSize * model.width);
      for (let i = 0; i < data.length; i++) data[i] = Math.sin(i);
      feed = { [model.inputName]: new ort.Tensor("float32", data, [batchSize, model.width]) };
      feeds.set(batchSize, feed);
      for (let i = 0; i < WARMUP_RUNS; i++) await session.run(feed);
    }
    return feed;
  };
  return {
    async measure(batchSize, durationMs) {
      const feed = await feedOf(batchSize);
      let runs = 0;
      const start = performance.now();
      let elapsed = 0;
      // At least a few runs, so a very short (quick) duration still yields a figure.
      while (elapsed < durationMs || runs < 3) {
        await session.run(feed);
        runs += 1;
        elapsed = performance.now() - start;
      }
      return (batchSize * runs * 1000) / elapsed;
    },
    async cpuPerRunUs(batchSize, minMs) {
      const feed = await feedOf(batchSize);
      let runs = 0;
      const start = performance.now();
      const before = process.cpuUsage();
      while (performance.now() - start < minMs || runs < 20) {
        await session.run(feed);
        runs += 1;
      }
      const used = process.cpuUsage(before);
      return (used.user + used.system) / runs;
    },
    close: () => session.release(),
  };
}
