/**
 * Builds a batch's model inputs from its requests (one fresh buffer per input, handed to the worker by
 * transfer) and cuts the model's outputs back into one response per request (views, no copies). BYTES
 * cross in their wire form both ways (core/bytes-data.ts); only the worker makes strings of them.
 */
import { type Datatype, datatypeInfo, type OrtTensorType, type TensorTypedArray } from "@tbench/proto";
import { concatBytesData, splitBytesData } from "../core/bytes-data.js";
import { ServerError } from "../core/server-error.js";
import { worthTransferring } from "../core/thread-transfer.js";
import type { BytesData, Tensor } from "../core/types.js";
import type { ThreadTensor } from "../instances/worker-protocol.js";
import type { ModelSpec, TensorSpec } from "../repository/model-spec.js";
import type { ValidatedRequest } from "./scheduler.js";

/** The model inputs of a batch and the buffers to transfer. */
export interface AssembledBatch {
  readonly inputs: ThreadTensor[];
  readonly transfer: ArrayBuffer[];
}

function ortTypeOf(datatype: Datatype): OrtTensorType {
  const ortType = datatypeInfo(datatype)?.ortType;
  if (!ortType)
    throw new ServerError("UNSUPPORTED", `datatype ${datatype} has no onnxruntime-node tensor type`);
  return ortType;
}

/** Concatenates the requests' inputs along the batch dimension (max_batch_size 0: the single request's). */
export function assembleBatch(spec: ModelSpec, requests: readonly ValidatedRequest[]): AssembledBatch {
  const inputs: ThreadTensor[] = [];
  const transfer: ArrayBuffer[] = [];
  const total = requests.reduce((sum, r) => sum + r.batchSize, 0);
  const first = requests[0]!;
  first.inputs.forEach((input, index) => {
    const dims = spec.maxBatchSize > 0 ? [total, ...input.shape] : [...input.shape];
    const ortType = ortTypeOf(input.spec.datatype);
    if (input.spec.datatype === "BYTES") {
      // Still in wire form (validation checked it on its bytes); the worker makes the strings.
      const data = concatBytesData(
        requests.map((request) => request.inputs[index]!.tensor.data as BytesData),
      );
      inputs.push({ name: input.spec.name, ortType, dims, data });
      transfer.push(data.wire.buffer as ArrayBuffer);
      return;
    }
    const info = datatypeInfo(input.spec.datatype)!;
    const byteLength = requests.reduce(
      (sum, r) => sum + (r.inputs[index]!.tensor.data as ArrayBufferView).byteLength,
      0,
    );
    const bytes = new Uint8Array(byteLength);
    let offset = 0;
    for (const request of requests) {
      const data = request.inputs[index]!.tensor.data as ArrayBufferView;
      bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), offset);
      offset += data.byteLength;
    }
    const ctor = info.typedArray! as unknown as new (buffer: ArrayBuffer) => TensorTypedArray;
    inputs.push({ name: input.spec.name, ortType, dims, data: new ctor(bytes.buffer) });
    transfer.push(bytes.buffer);
  });
  return { inputs, transfer: worthTransferring(transfer) };
}

function outputShape(
  spec: ModelSpec,
  io: TensorSpec | undefined,
  dims: readonly number[],
  rows: number,
): number[] {
  const rest = spec.maxBatchSize > 0 ? dims.slice(1) : [...dims];
  // With a reshape the model produces reshape.shape; the client sees the config's dims.
  const shown = io?.reshape && !io.dims.includes(-1) ? [...io.dims] : rest;
  return spec.maxBatchSize > 0 ? [rows, ...shown] : shown;
}

/** Cuts each output of the batch into the per-request tensors, in request order. */
export function splitOutputs(
  spec: ModelSpec,
  requests: readonly ValidatedRequest[],
  outputs: readonly ThreadTensor[],
): Tensor[][] {
  const perRequest: Tensor[][] = requests.map(() => []);
  const total = requests.reduce((sum, r) => sum + r.batchSize, 0);
  for (const output of outputs) {
    const io = spec.outputs.find((o) => o.name === output.name);
    const datatype: Datatype = io?.datatype ?? "FP32";
    const elements = output.dims.reduce((a, b) => a * b, 1);
    if (spec.maxBatchSize > 0 && output.dims[0] !== total) {
      throw new ServerError(
        "INTERNAL",
        `output '${output.name}' of model '${spec.name}' has batch dimension ${output.dims[0]}, expected ${total}`,
      );
    }
    const perRow = spec.maxBatchSize > 0 && total > 0 ? elements / total : elements;
    const rowsOf = (request: ValidatedRequest) => (spec.maxBatchSize > 0 ? request.batchSize : 1);
    // BYTES: one walk over the batch's element lengths cuts it into per-request views.
    let bytesPieces: BytesData[] | undefined;
    if (!ArrayBuffer.isView(output.data)) {
      try {
        bytesPieces = splitBytesData(
          output.data as BytesData,
          requests.map((request) => rowsOf(request) * perRow),
        );
      } catch (error) {
        throw new ServerError(
          "INTERNAL",
          `output '${output.name}' of model '${spec.name}': ${(error as Error).message}`,
        );
      }
    }
    let row = 0;
    requests.forEach((request, index) => {
      const rows = rowsOf(request);
      const start = row * perRow;
      const end = start + rows * perRow;
      row += rows;
      let data: Tensor["data"];
      if (bytesPieces !== undefined) {
        data = bytesPieces[index]!;
      } else {
        const typed = output.data as TensorTypedArray;
        data = typed.subarray(start, end) as TensorTypedArray;
      }
      perRequest[index]!.push({
        name: output.name,
        datatype,
        shape: outputShape(spec, io, output.dims, rows),
        data,
      });
    });
  }
  return perRequest;
}
