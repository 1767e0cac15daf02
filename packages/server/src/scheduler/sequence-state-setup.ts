/**
 * What the sequence batcher tells an instance's thread about a model's implicit states, once per thread
 * (the names, types, shapes and initial values: the thread keeps the states themselves), and the one thing
 * the main thread keeps of them: their shape, where the config leaves a dim variable (rows of one batch
 * must agree on it, and the model's state output decides it).
 */
import type { TensorData } from "../core/types.js";
import type { SequenceStateSetup } from "../instances/worker-protocol.js";
import type { SequenceBatchingSpec } from "../repository/sequence-batching.js";

/** The states' setup of a version: one object, sent by each instance's handle to its thread once. */
export function sequenceStateSetup(
  sequence: SequenceBatchingSpec,
  batching: boolean,
  initialStates: ReadonlyMap<string, TensorData> | undefined,
): SequenceStateSetup {
  return {
    slots: sequence.slotsPerInstance,
    batching,
    states: sequence.states.map((state) => {
      const initial = initialStates?.get(state.inputName);
      return {
        inputName: state.inputName,
        outputName: state.outputName,
        datatype: state.datatype,
        dims: state.dims,
        initialDims: state.initialDims,
        ...(initial !== undefined ? { initial } : {}),
      };
    }),
  };
}

/**
 * The key rows of one batch must agree on for their states' shapes, or undefined when every state has
 * fixed dims (then they always agree).
 */
export interface StateShapes {
  /** The key of the shapes a START (or a slot whose shape is not known yet) has: the initial dims. */
  readonly initialKey: string;
  /** The key of the state output dims an instance reported after a batch. */
  keyOf(dims: readonly (readonly number[])[]): string;
}

export function stateShapes(sequence: SequenceBatchingSpec): StateShapes | undefined {
  if (!sequence.states.some((state) => state.dims.includes(-1))) return undefined;
  const keyOf = (dims: readonly (readonly number[])[]) => dims.map((d) => d.join(",")).join("|");
  return { initialKey: keyOf(sequence.states.map((state) => state.initialDims)), keyOf };
}
