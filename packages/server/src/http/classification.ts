/**
 * Triton's classification extension: an output asked for with `classification: k` comes back as BYTES
 * strings "value:index" for the k highest values of each batch row, highest first. Values print as C++
 * std::to_string does (six decimals for floating point types, plain integers otherwise).
 */
import type { Tensor, TensorData } from "../core/types.js";
import { badRequest } from "./http-error.js";

const textEncoder = new TextEncoder();

function formatValue(value: number | bigint, floating: boolean): string {
  return floating ? (value as number).toFixed(6) : String(value);
}

/**
 * The classification tensor for `output`: shape [batch, k'] where the model batches (`batched`), else [k'],
 * with k' = min(k, classes per row).
 */
export function classifyOutput(output: Tensor, k: number, batched: boolean): Tensor {
  const data: TensorData = output.data;
  if (Array.isArray(data)) {
    throw badRequest(`classification is not supported for BYTES output '${output.name}'`);
  }
  if (output.datatype === "FP16" || output.datatype === "BF16") {
    throw badRequest(`classification is not supported for ${output.datatype} output '${output.name}'`);
  }
  const values = data as ArrayLike<number | bigint>;
  const floating = output.datatype === "FP32" || output.datatype === "FP64";
  const batchSize = batched && output.shape.length > 0 ? (output.shape[0] ?? 1) : 0;
  const rows = Math.max(1, batchSize);
  const perRow = rows > 0 ? Math.floor(values.length / rows) : 0;
  const count = Math.min(k, perRow);
  const strings: Uint8Array[] = [];
  const order: number[] = new Array(perRow);
  for (let row = 0; row < rows; row++) {
    const base = row * perRow;
    for (let i = 0; i < perRow; i++) order[i] = i;
    // Stable: equal values keep index order.
    order.sort((a, b) => {
      const va = values[base + a]!;
      const vb = values[base + b]!;
      return va > vb ? -1 : va < vb ? 1 : a - b;
    });
    for (let i = 0; i < count; i++) {
      const index = order[i]!;
      strings.push(textEncoder.encode(`${formatValue(values[base + index]!, floating)}:${index}`));
    }
  }
  return {
    name: output.name,
    datatype: "BYTES",
    shape: batchSize > 0 ? [batchSize, count] : [count],
    data: strings,
  };
}
