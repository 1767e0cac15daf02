/**
 * The tensors the sequence batcher adds to a batch, as pure functions: the control inputs (START, END,
 * READY as the configured false/true pair, CORRID in its configured type; one value per row, a padding row
 * not ready), and the zeros of a padding row. Triton gives a padding row uninitialised inputs; zeros are
 * one such value, and the same on every run. (The implicit states are the instance thread's:
 * instances/sequence-state-store.ts.)
 */
import { type Datatype, datatypeInfo, type TensorTypedArray } from "@tbench/proto";
import { bytesDataFromStrings } from "../core/bytes-data.js";
import type { TensorData } from "../core/types.js";
import type { ThreadTensor } from "../instances/worker-protocol.js";
import type { SequenceControlSpec } from "../repository/sequence-batching.js";

/** What one row of a sequence batch is, for its control inputs. */
export interface RowFlags {
  /** False for a padding row: START, END and READY false, CORRID 0. */
  readonly ready: boolean;
  readonly start: boolean;
  readonly end: boolean;
  /** The correlation id (0n for a padding row). */
  readonly id: bigint | string;
}

function ortTypeOf(datatype: Datatype) {
  return datatypeInfo(datatype)!.ortType!;
}

/** `count` zero elements of `datatype` (BYTES: empty strings). */
export function zeroData(datatype: Datatype, count: number): TensorData {
  if (datatype === "BYTES") return { count, wire: new Uint8Array(4 * count) };
  const ctor = datatypeInfo(datatype)!.typedArray as unknown as new (length: number) => TensorTypedArray;
  return new ctor(count);
}

/** The correlation id as a CORRID control of `datatype` holds it (32-bit types: the low 32 bits). */
function corrIdValue(id: bigint | string, datatype: Datatype): bigint | number {
  const value = typeof id === "bigint" ? id : 0n;
  if (datatype === "UINT64") return BigInt.asUintN(64, value);
  if (datatype === "INT64") return BigInt.asIntN(64, value);
  if (datatype === "UINT32") return Number(BigInt.asUintN(32, value));
  return Number(BigInt.asIntN(32, value));
}

/**
 * The control input tensors of a batch whose rows are `rows`: shape [rows, 1] when the model batches,
 * [1] when it does not (a batch of one).
 */
export function controlTensors(
  controls: readonly SequenceControlSpec[],
  rows: readonly RowFlags[],
  batching: boolean,
): ThreadTensor[] {
  const dims = batching ? [rows.length, 1] : [1];
  return controls.map((control) => {
    if (control.kind === "CORRID") {
      if (control.datatype === "BYTES") {
        const data = bytesDataFromStrings(
          rows.map((row) => (typeof row.id === "string" && row.ready ? row.id : "")),
        );
        return { name: control.name, ortType: ortTypeOf("BYTES"), dims, data };
      }
      const data = zeroData(control.datatype, rows.length) as TensorTypedArray;
      for (const [i, row] of rows.entries()) {
        if (row.ready) (data as unknown as (bigint | number)[])[i] = corrIdValue(row.id, control.datatype);
      }
      return { name: control.name, ortType: ortTypeOf(control.datatype), dims, data };
    }
    const data = zeroData(control.datatype, rows.length) as TensorTypedArray;
    for (const [i, row] of rows.entries()) {
      const on =
        control.kind === "READY" ? row.ready : row.ready && (control.kind === "START" ? row.start : row.end);
      const value = control.values[on ? 1 : 0];
      (data as unknown as number[])[i] = typeof value === "boolean" ? (value ? 1 : 0) : value;
    }
    return { name: control.name, ortType: ortTypeOf(control.datatype), dims, data };
  });
}
