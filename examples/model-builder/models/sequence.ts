/**
 * The two stateful models, for Triton's sequence batcher (`sequence_batching` in their configs):
 *  - `sequence_accumulator`: OUTPUT = INPUT + INPUT_STATE, and OUTPUT_STATE (the next request's
 *    INPUT_STATE) = OUTPUT. With the state starting at zero on START, OUTPUT is the running sum of the
 *    sequence's inputs: the server, not the model, keeps the sum between requests (implicit state).
 *  - `sequence_controls`: echoes the control inputs the server fills (START, END, READY as INT32 0/1,
 *    CORRID as UINT64) and its INPUT, so a test reads exactly what the model was given, row by row.
 * Every tensor is INT32 [batch, 1] except CORRID (UINT64 [batch, 1]).
 */
import { createGraphBuilder } from "../graph-builder.js";

const ROW = ["batch", 1];

/** Builds `sequence_accumulator/1/model.onnx`. */
export function buildSequenceAccumulatorModel(): Uint8Array {
  const g = createGraphBuilder({
    name: "sequence_accumulator",
    docString: "OUTPUT = INPUT + INPUT_STATE; OUTPUT_STATE = OUTPUT (a running sum kept as implicit state)",
  });
  g.input("INPUT", "INT32", ROW);
  g.input("INPUT_STATE", "INT32", ROW);
  g.node("Add", ["INPUT", "INPUT_STATE"], ["OUTPUT"]);
  g.node("Identity", ["OUTPUT"], ["OUTPUT_STATE"]);
  g.output("OUTPUT", "INT32", ROW);
  g.output("OUTPUT_STATE", "INT32", ROW);
  return g.build();
}

/** Builds `sequence_controls/1/model.onnx`. */
export function buildSequenceControlsModel(): Uint8Array {
  const g = createGraphBuilder({
    name: "sequence_controls",
    docString: "echoes INPUT and the sequence control inputs START, END, READY (INT32) and CORRID (UINT64)",
  });
  g.input("INPUT", "INT32", ROW);
  for (const control of ["START", "END", "READY"]) g.input(control, "INT32", ROW);
  g.input("CORRID", "UINT64", ROW);
  g.node("Identity", ["INPUT"], ["OUTPUT"]);
  g.output("OUTPUT", "INT32", ROW);
  for (const control of ["START", "END", "READY"]) {
    g.node("Identity", [control], [`OUT_${control}`]);
    g.output(`OUT_${control}`, "INT32", ROW);
  }
  g.node("Identity", ["CORRID"], ["OUT_CORRID"]);
  g.output("OUT_CORRID", "UINT64", ROW);
  return g.build();
}

/**
 * A running sum kept in a large state, for the benchmark of where implicit states live
 * (packages/server/bench/sequences.ts; not a bundled model): INPUT_STATE is INT32 [batch, elements], every
 * element the sequence's running sum. OUTPUT_STATE = INPUT_STATE + INPUT (broadcast over the row), and
 * OUTPUT = OUTPUT_STATE[:, 0:1], the running sum, as `sequence_accumulator` answers.
 */
export function buildLargeStateAccumulatorModel(elements: number): Uint8Array {
  const g = createGraphBuilder({
    name: "sequence_large_state",
    docString: `OUTPUT_STATE = INPUT_STATE + INPUT over ${elements} elements; OUTPUT = OUTPUT_STATE[:, 0:1]`,
  });
  g.input("INPUT", "INT32", ROW);
  g.input("INPUT_STATE", "INT32", ["batch", elements]);
  g.initializer("zero", "INT64", [1], new BigInt64Array([0n]));
  g.initializer("one", "INT64", [1], new BigInt64Array([1n]));
  g.node("Add", ["INPUT_STATE", "INPUT"], ["OUTPUT_STATE"]);
  // Slice(data, starts [0], ends [1], axes [1]): the first element of each row.
  g.node("Slice", ["OUTPUT_STATE", "zero", "one", "one"], ["OUTPUT"]);
  g.output("OUTPUT", "INT32", ROW);
  g.output("OUTPUT_STATE", "INT32", ["batch", elements]);
  return g.build();
}
