/**
 * Triton's classification extension: an output requested with `classification: k` comes back as a BYTES
 * tensor of the top k entries per batch row, each "<value>:<index>" or "<value>:<index>:<label>" (labels
 * from the output's label_filename), highest first.
 */
import { bfloat16BitsToFloat32, type Datatype, float16BitsToFloat32 } from "@tbench/proto";
import { bytesDataFromStrings, isBytesData } from "../core/bytes-data.js";
import { ServerError } from "../core/server-error.js";
import type { Tensor } from "../core/types.js";

/** How one element reads as a number: FP16/BF16 hold bit patterns, every other type its value. */
function elementReader(datatype: Datatype, values: ArrayLike<number | bigint>): (i: number) => number {
  if (datatype === "FP16") return (i) => float16BitsToFloat32(values[i] as number);
  if (datatype === "BF16") return (i) => bfloat16BitsToFloat32(values[i] as number);
  return (i) => Number(values[i]!);
}

const FLOATING: ReadonlySet<Datatype> = new Set(["FP16", "FP32", "FP64", "BF16"]);

/** Replaces `tensor` by its top-`k` classification; `batched`: the first dimension is the batch. */
export function classify(
  tensor: Tensor,
  k: number,
  batched: boolean,
  labels: readonly string[] | undefined,
): Tensor {
  if (isBytesData(tensor.data) || tensor.datatype === "BYTES") {
    throw new ServerError(
      "INVALID_ARG",
      `class result not available for output '${tensor.name}' due to unsupported type 'BYTES'`,
    );
  }
  const values = tensor.data as ArrayLike<number | bigint>;
  const read = elementReader(tensor.datatype, values);
  // Triton prints the value with std::to_string of its own type: six decimals for floats, none for
  // integers (whose raw value is printed, so INT64 beyond 2^53 stays exact).
  const format = FLOATING.has(tensor.datatype)
    ? (i: number) => read(i).toFixed(6)
    : (i: number) => String(values[i]);
  const rows = batched ? (tensor.shape[0] ?? 1) : 1;
  const perRow = rows > 0 ? values.length / rows : 0;
  const top = Math.min(k, perRow);
  const out: string[] = [];
  for (let r = 0; r < rows; r++) {
    const order: number[] = [];
    for (let i = 0; i < perRow; i++) order.push(i);
    const at = (i: number) => read(r * perRow + i);
    order.sort((a, b) => at(b) - at(a) || a - b);
    for (const index of order.slice(0, top)) {
      const label = labels?.[index];
      const text = `${format(r * perRow + index)}:${index}${label !== undefined && label !== "" ? `:${label}` : ""}`;
      out.push(text);
    }
  }
  return {
    name: tensor.name,
    datatype: "BYTES",
    shape: batched ? [rows, top] : [top],
    data: bytesDataFromStrings(out),
  };
}
