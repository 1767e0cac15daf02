/**
 * A small in-memory InferenceCore for the HTTP layer's unit tests (passed through options, never used by
 * the real server): `simple` (INT32 add/sub, batched, max_batch_size 8), `identity_<type>` for every
 * datatype, and `scores` (FP32 [-1, 5] for classification). It validates requests with the core's kind of
 * messages so the front end's error mapping can be exercised; it does not pretend to be the real core.
 */
import { DATATYPES, type Datatype, type ModelConfig } from "@tbench/proto";
import { bytesDataFromStrings } from "../core/bytes-data.js";
import { ServerError } from "../core/server-error.js";
import type {
  InferenceCore,
  InferenceRequest,
  InferenceResponse,
  ModelMetadata,
  ModelMetricsSnapshot,
  ModelStatistics,
  RepositoryIndexEntry,
  Tensor,
} from "../core/types.js";

interface FakeModel {
  readonly inputs: readonly { name: string; datatype: Datatype; dims: number[] }[];
  readonly outputs: readonly { name: string; datatype: Datatype; dims: number[] }[];
  readonly maxBatchSize: number;
  readonly run: (inputs: ReadonlyMap<string, Tensor>) => Tensor[];
}

const zero = { count: 0, ns: 0 };

function fakeModels(): Map<string, FakeModel> {
  const models = new Map<string, FakeModel>();
  models.set("simple", {
    inputs: [
      { name: "INPUT0", datatype: "INT32", dims: [16] },
      { name: "INPUT1", datatype: "INT32", dims: [16] },
    ],
    outputs: [
      { name: "OUTPUT0", datatype: "INT32", dims: [16] },
      { name: "OUTPUT1", datatype: "INT32", dims: [16] },
    ],
    maxBatchSize: 8,
    run: (inputs) => {
      const a = inputs.get("INPUT0")!;
      const b = inputs.get("INPUT1")!;
      const x = a.data as Int32Array;
      const y = b.data as Int32Array;
      const sum = new Int32Array(x.length);
      const diff = new Int32Array(x.length);
      for (let i = 0; i < x.length; i++) {
        sum[i] = x[i]! + y[i]!;
        diff[i] = x[i]! - y[i]!;
      }
      return [
        { name: "OUTPUT0", datatype: "INT32", shape: a.shape, data: sum },
        { name: "OUTPUT1", datatype: "INT32", shape: a.shape, data: diff },
      ];
    },
  });
  for (const datatype of DATATYPES) {
    models.set(`identity_${datatype.toLowerCase()}`, {
      inputs: [{ name: "INPUT0", datatype, dims: [-1] }],
      outputs: [{ name: "OUTPUT0", datatype, dims: [-1] }],
      maxBatchSize: 8,
      run: (inputs) => {
        const t = inputs.get("INPUT0")!;
        return [{ name: "OUTPUT0", datatype, shape: t.shape, data: t.data }];
      },
    });
  }
  models.set("scores", {
    inputs: [{ name: "INPUT0", datatype: "FP32", dims: [5] }],
    outputs: [{ name: "OUTPUT0", datatype: "FP32", dims: [5] }],
    maxBatchSize: 4,
    run: (inputs) => {
      const t = inputs.get("INPUT0")!;
      return [{ name: "OUTPUT0", datatype: "FP32", shape: t.shape, data: t.data }];
    },
  });
  return models;
}

/** Top-k "value:index" strings per batch row (FP32 only; enough for the front end's encoding tests). */
function topK(tensor: Tensor, k: number): Tensor {
  const values = tensor.data as Float32Array;
  const rows = tensor.shape[0] ?? 1;
  const perRow = values.length / rows;
  const count = Math.min(k, perRow);
  const data: string[] = [];
  for (let r = 0; r < rows; r++) {
    const row = Array.from(values.subarray(r * perRow, (r + 1) * perRow), (v, i) => ({ v, i }));
    row.sort((a, b) => b.v - a.v || a.i - b.i);
    for (const { v, i } of row.slice(0, count)) data.push(`${v.toFixed(6)}:${i}`);
  }
  return { name: tensor.name, datatype: "BYTES", shape: [rows, count], data: bytesDataFromStrings(data) };
}

/** Options of the fake core. */
export interface FakeCoreOptions {
  /** Hold every valid infer until release() (or its signal aborts): in-flight and abort tests, no timers. */
  readonly holdInfer?: boolean;
}

/** The fake core plus what tests inspect. */
export interface FakeCore extends InferenceCore {
  /** Every request infer() received. */
  readonly received: InferenceRequest[];
  /** Requests whose signal was aborted while held. */
  aborted: number;
  /** Resolves once `count` requests are held (holdInfer). */
  waitForHeld(count: number): Promise<void>;
  /** Resolves once `count` held requests were aborted. */
  waitForAborted(count: number): Promise<void>;
  /** Lets every held request answer. */
  release(): void;
}

/** Creates the fake core. */
export function createFakeCore(options: FakeCoreOptions = {}): FakeCore {
  const models = fakeModels();
  const loaded = new Set(models.keys());
  const lookup = (name: string, version?: string): FakeModel => {
    // Triton's codes: a name never in the repository is INVALID_ARG, an unloaded one has no versions.
    const model = models.get(name);
    if (model === undefined)
      throw new ServerError("INVALID_ARG", `Request for unknown model: '${name}' is not found`);
    if (!loaded.has(name))
      throw new ServerError("NOT_FOUND", `Request for unknown model: '${name}' has no available versions`);
    if (version !== undefined && version !== "1") {
      throw new ServerError(
        "NOT_FOUND",
        `Request for unknown model: '${name}' version ${version} is not found`,
      );
    }
    return model;
  };
  const stats = (name: string): ModelStatistics => ({
    name,
    version: "1",
    last_inference: 0,
    inference_count: 0,
    execution_count: 0,
    inference_stats: {
      success: zero,
      fail: zero,
      queue: zero,
      compute_input: zero,
      compute_infer: zero,
      compute_output: zero,
      cache_hit: zero,
      cache_miss: zero,
    },
    response_stats: {},
    batch_stats: [],
    memory_usage: [],
  });
  const held: (() => void)[] = [];
  const waiters: { done: () => boolean; resolve: () => void }[] = [];
  const notify = () => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i]!.done()) waiters.splice(i, 1)[0]!.resolve();
    }
  };
  const waitFor = (done: () => boolean) =>
    new Promise<void>((resolve) => {
      if (done()) resolve();
      else waiters.push({ done, resolve });
    });
  const core: FakeCore = {
    received: [],
    aborted: 0,
    waitForHeld: (count) => waitFor(() => held.length >= count),
    waitForAborted: (count) => waitFor(() => core.aborted >= count),
    release() {
      for (const resolve of held.splice(0)) resolve();
    },
    serverMetadata: () => ({ name: "tbench-server", version: "0.1.0", extensions: ["binary_tensor_data"] }),
    isLive: () => true,
    isReady: () => true,
    isModelReady: (name, version) => loaded.has(name) && (version === undefined || version === "1"),
    modelMetadata(name, version): ModelMetadata {
      const model = lookup(name, version);
      const meta = (t: { name: string; datatype: Datatype; dims: number[] }) => ({
        name: t.name,
        datatype: t.datatype,
        shape: [-1, ...t.dims],
      });
      return {
        name,
        versions: ["1"],
        platform: "onnxruntime_onnx",
        inputs: model.inputs.map(meta),
        outputs: model.outputs.map(meta),
      };
    },
    modelConfig(name, version): ModelConfig {
      const model = lookup(name, version);
      return { name, platform: "onnxruntime_onnx", max_batch_size: model.maxBatchSize };
    },
    inferStream(request, sink) {
      // The fake models are not decoupled: one response, final.
      core.infer(request).then(
        (response) => sink.response(response, true),
        (error: unknown) => sink.error(error),
      );
    },
    isDecoupled(name, version) {
      lookup(name, version);
      return false;
    },
    async infer(request: InferenceRequest): Promise<InferenceResponse> {
      core.received.push(request);
      const model = lookup(request.model, request.version);
      const byName = new Map<string, Tensor>();
      for (const input of request.inputs) {
        const spec = model.inputs.find((i) => i.name === input.name);
        if (spec === undefined) {
          throw new ServerError(
            "INVALID_ARG",
            `[request id: <id_unknown>] unexpected inference input '${input.name}' for model '${request.model}'`,
          );
        }
        if (spec.datatype !== input.datatype) {
          throw new ServerError(
            "INVALID_ARG",
            `[request id: <id_unknown>] inference input '${input.name}' data-type is '${input.datatype}', but model '${request.model}' expects '${spec.datatype}'`,
          );
        }
        if ((input.shape[0] ?? 0) > model.maxBatchSize) {
          throw new ServerError(
            "INVALID_ARG",
            `[request id: <id_unknown>] inference request batch-size must be <= ${model.maxBatchSize} for '${request.model}'`,
          );
        }
        byName.set(input.name, input);
      }
      for (const spec of model.inputs) {
        if (!byName.has(spec.name)) {
          throw new ServerError(
            "INVALID_ARG",
            `[request id: <id_unknown>] expected ${model.inputs.length} inputs but got ${request.inputs.length} inputs for model '${request.model}'. Got input(s) [${request.inputs.map((i) => `'${i.name}'`).join(",")}], but missing required input(s) ['${spec.name}'].`,
          );
        }
      }
      for (const output of request.outputs ?? []) {
        if (!model.outputs.some((o) => o.name === output.name)) {
          throw new ServerError(
            "INVALID_ARG",
            `[request id: <id_unknown>] unexpected inference output '${output.name}' for model '${request.model}'`,
          );
        }
      }
      if (options.holdInfer === true) {
        await new Promise<void>((resolve) => {
          held.push(resolve);
          request.signal?.addEventListener("abort", () => {
            core.aborted++;
            resolve();
            notify();
          });
          notify();
        });
        if (request.signal?.aborted) throw new ServerError("CANCELLED", "request cancelled");
      }
      const outputs = model.run(byName).map((tensor) => {
        const k = request.outputs?.find((o) => o.name === tensor.name)?.classification ?? 0;
        return k > 0 ? topK(tensor, k) : tensor;
      });
      return {
        model: request.model,
        version: "1",
        ...(request.id !== undefined ? { id: request.id } : {}),
        outputs,
      };
    },
    modelStatistics(name) {
      if (name === undefined) return [...loaded].map(stats);
      lookup(name);
      return [stats(name)];
    },
    async repositoryIndex(): Promise<readonly RepositoryIndexEntry[]> {
      return [...models.keys()].map((name) =>
        loaded.has(name)
          ? { name, version: "1", state: "READY" }
          : { name, version: "1", state: "UNAVAILABLE", reason: "unloaded" },
      );
    },
    async loadModel(name) {
      if (!models.has(name))
        throw new ServerError("INTERNAL", `failed to load '${name}', failed to poll from model repository`);
      loaded.add(name);
    },
    async unloadModel(name) {
      loaded.delete(name);
    },
    metricsSnapshot: (): readonly ModelMetricsSnapshot[] => [],
  };
  return core;
}
