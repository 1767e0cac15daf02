/**
 * Triton's classification extension: an output requested with `classification: k` comes back as a BYTES
 * tensor of the top k entries per batch row, each "<value>:<index>" or "<value>:<index>:<label>" (labels
 * from the output's label_filename), highest first.
 */
import { ServerError } from "../core/server-error.js";
import type { Tensor } from "../core/types.js";

const encoder = new TextEncoder();

/** Replaces `tensor` by its top-`k` classification; `batched`: the first dimension is the batch. */
export function classify(
  tensor: Tensor,
  k: number,
  batched: boolean,
  labels: readonly string[] | undefined,
): Tensor {
  if (Array.isArray(tensor.data) || tensor.datatype === "BYTES") {
    throw new ServerError(
      "INVALID_ARG",
      `class result not available for output '${tensor.name}' due to unsupported type 'BYTES'`,
    );
  }
  const values = tensor.data as ArrayLike<number | bigint>;
  const rows = batched ? (tensor.shape[0] ?? 1) : 1;
  const perRow = rows > 0 ? values.length / rows : 0;
  const top = Math.min(k, perRow);
  const out: Uint8Array[] = [];
  for (let r = 0; r < rows; r++) {
    const order: number[] = [];
    for (let i = 0; i < perRow; i++) order.push(i);
    const at = (i: number) => Number(values[r * perRow + i]!);
    order.sort((a, b) => at(b) - at(a) || a - b);
    for (const index of order.slice(0, top)) {
      const label = labels?.[index];
      const text = `${at(index).toFixed(6)}:${index}${label !== undefined && label !== "" ? `:${label}` : ""}`;
      out.push(encoder.encode(text));
    }
  }
  return { name: tensor.name, datatype: "BYTES", shape: batched ? [rows, top] : [top], data: out };
}
