/**
 * Triton's model_warmup: before a version is READY, each warmup sample runs `count` times (default 1)
 * through the version's own scheduler, with inputs of zeros, random values, or the bytes of a file under
 * the model's `warmup/` directory. A sample that fails makes the load fail with Triton's words,
 * "failed to run warmup sample '<name>': <why>".
 */
import { readFile } from "node:fs/promises";
import { datatypeFromConfigType, datatypeInfo, type ModelConfig } from "@tbench/proto";
import type { Clock } from "../core/clock.js";
import { ServerError } from "../core/server-error.js";
import type { Tensor, TensorData } from "../core/types.js";
import { dimsToString } from "../repository/config-numbers.js";
import { confinedPath } from "../repository/confinement.js";
import type { ModelSpec } from "../repository/model-spec.js";
import type { Scheduler } from "../scheduler/scheduler.js";
import { validateRequest } from "./request-validation.js";

/** Most bytes one warmup input may take (a sample is a config's word, not a request, but still bounded). */
const MAX_WARMUP_INPUT_BYTES = 256 * 1024 * 1024;

/** An INVALID_ARG for sample `sample` of model `model`. */
function sampleError(sample: string, why: string): ServerError {
  return new ServerError("INVALID_ARG", `failed to run warmup sample '${sample}': ${why}`);
}

/** Tensor data of `count` elements of `datatype`: zeros, random values, or `file` bytes. */
function sampleData(
  datatype: NonNullable<ReturnType<typeof datatypeFromConfigType>>["datatype"],
  count: number,
  kind: "zero" | "random",
): TensorData {
  const info = datatypeInfo(datatype);
  if (datatype === "BYTES" || !info?.typedArray || info.byteSize === undefined) {
    // Zero and random BYTES elements are empty, as Triton makes them: four zero bytes of length each.
    return { count, wire: new Uint8Array(4 * count) };
  }
  const bytes = new Uint8Array(count * info.byteSize);
  if (kind === "random") {
    if (datatype === "FP32" || datatype === "FP64") {
      const values = new info.typedArray(bytes.buffer) as Float32Array | Float64Array;
      for (let i = 0; i < values.length; i++) values[i] = Math.random();
    } else if (datatype === "BOOL") {
      for (let i = 0; i < bytes.length; i++) bytes[i] = Math.random() < 0.5 ? 0 : 1;
    } else {
      for (let i = 0; i < bytes.length; i++) bytes[i] = (Math.random() * 128) | 0;
    }
  }
  return new info.typedArray(bytes.buffer) as TensorData;
}

/** Runs every warmup sample of `config` through `scheduler`; rejects with the first failure. */
export async function runWarmup(
  config: ModelConfig,
  spec: ModelSpec,
  scheduler: Scheduler,
  directory: string,
  clock: Clock,
): Promise<void> {
  for (const [index, sample] of (config.model_warmup ?? []).entries()) {
    const name = sample.name || `sample ${index}`;
    const batchSize = sample.batch_size ?? 0;
    if (spec.maxBatchSize > 0 && (batchSize < 1 || batchSize > spec.maxBatchSize)) {
      throw sampleError(
        name,
        `batch_size ${batchSize} must be from 1 to max_batch_size ${spec.maxBatchSize}`,
      );
    }
    const inputs: Tensor[] = [];
    for (const [input, data] of Object.entries(sample.inputs ?? {})) {
      const datatype = datatypeFromConfigType(data.data_type ?? "")?.datatype;
      if (!datatype) throw sampleError(name, `input '${input}' has no supported data_type`);
      const dims = (data.dims ?? []).map(Number);
      if (dims.some((d) => !Number.isSafeInteger(d) || d < 0)) {
        throw sampleError(name, `input '${input}' has invalid dims ${dimsToString(dims)}`);
      }
      const shape = spec.maxBatchSize > 0 ? [batchSize, ...dims] : dims;
      const count = shape.reduce((a, b) => a * b, 1);
      const byteSize = datatypeInfo(datatype)?.byteSize ?? 4;
      if (count * byteSize > MAX_WARMUP_INPUT_BYTES) {
        throw sampleError(name, `input '${input}' would take more than ${MAX_WARMUP_INPUT_BYTES} bytes`);
      }
      let tensorData: TensorData;
      if (data.input_data_file) {
        const path = await confinedPath(
          directory,
          "warmup",
          data.input_data_file,
          `input_data_file of '${input}'`,
        );
        const bytes = await readFile(path).catch(() => {
          throw sampleError(
            name,
            `unable to read input_data_file '${data.input_data_file}' of input '${input}'`,
          );
        });
        if (datatype === "BYTES") tensorData = { count, wire: new Uint8Array(bytes) };
        else {
          const info = datatypeInfo(datatype);
          if (bytes.byteLength !== count * byteSize || !info?.typedArray) {
            throw sampleError(
              name,
              `input_data_file '${data.input_data_file}' of input '${input}' has ${bytes.byteLength} bytes, ` +
                `expected ${count * byteSize}`,
            );
          }
          const copy = new Uint8Array(bytes);
          tensorData = new info.typedArray(copy.buffer) as TensorData;
        }
      } else {
        tensorData = sampleData(datatype, count, data.random_data ? "random" : "zero");
      }
      inputs.push({ name: input, datatype, shape, data: tensorData });
    }
    for (let run = 0; run < Math.max(1, sample.count ?? 1); run++) {
      try {
        const request = { model: spec.name, inputs };
        await scheduler.submit(validateRequest(spec, request), clock.nowNs());
      } catch (error) {
        throw sampleError(name, (error as Error).message);
      }
    }
  }
}
