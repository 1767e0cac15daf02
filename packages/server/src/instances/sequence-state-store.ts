/**
 * The implicit states of a sequence model, kept in the thread that owns its session (Triton keeps them in
 * the instance that runs the sequence): one entry per slot of the instance's batcher, so what it holds is
 * bounded by slots x state size. A batch's rows name their slots (sequence-batch-scheduler.ts); the store
 * concatenates the rows' states into the state inputs (a START row and a padding row get the initial
 * value), and after the run cuts the state outputs back into one copy per row. An END row's state is
 * dropped with its batch, a slot the idle reaper freed with the next batch (`released`), everything when
 * the session closes. Nothing of a state crosses back to the main thread: only the state output's dims,
 * when the config leaves them variable. Pure (no onnxruntime), so tests drive it as the thread does.
 */
import { datatypeInfo, type OrtTensorType, type TensorTypedArray } from "@tbench/proto";
import { bytesDataToStrings } from "../core/bytes-data.js";
import type { SequenceRun, SequenceStateInit, SequenceStateSetup } from "./worker-protocol.js";

/** A state's elements: numbers in their TypedArray, strings (BYTES) one per element. */
export type StateData = TensorTypedArray | readonly string[];

/** A state input to feed the session. */
export interface StateFeed {
  readonly name: string;
  readonly ortType: OrtTensorType;
  readonly dims: readonly number[];
  readonly data: StateData;
}

/** A state output as the session gave it (onnxruntime's Tensor fits). */
export interface StateOutput {
  readonly dims: readonly number[];
  readonly data: unknown;
}

/** One sequence's state: its shape without the batch dimension, and its elements (owned). */
interface StateValue {
  readonly dims: readonly number[];
  readonly data: StateData;
}

export interface SequenceStateStore {
  /**
   * Takes the batch's setup and released slots, and returns the state inputs of its rows and the state
   * outputs to ask for. A START row's slot is reset to the initial value first, so a failed run leaves
   * that, never the slot's previous sequence's state; a slot that holds nothing reads the initial value too
   * (its START's batch failed before it reached this thread). Throws when the rows cannot be served: no
   * setup yet, a slot out of range, rows whose states disagree on their shape.
   */
  begin(run: SequenceRun): { readonly feeds: StateFeed[]; readonly outputNames: readonly string[] };
  /**
   * Keeps each live row's state outputs (an END row's state is gone already); returns each state output's
   * dims when some state has variable dims. Throws when an output is missing or of the wrong size.
   */
  keep(run: SequenceRun, output: (name: string) => StateOutput | undefined): number[][] | undefined;
  /** Drops every state (the session closes). */
  clear(): void;
  /** The slots holding a state and the bytes their numeric elements take (tests). */
  held(): { readonly slots: number; readonly bytes: number };
}

function elementsOf(dims: readonly number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}

type TypedArrayClass = new (length: number) => TensorTypedArray;

function typedArrayOf(init: SequenceStateInit): TypedArrayClass | undefined {
  return datatypeInfo(init.datatype)?.typedArray as unknown as TypedArrayClass | undefined;
}

/** The initial value of a state, as the store holds it. */
function initialValue(init: SequenceStateInit): StateValue {
  const count = elementsOf(init.initialDims);
  const ctor = typedArrayOf(init);
  if (ctor === undefined) {
    const from = init.initial;
    const strings = from !== undefined && !ArrayBuffer.isView(from) ? bytesDataToStrings(from) : [];
    return { dims: init.initialDims, data: Array.from({ length: count }, (_, i) => strings[i] ?? "") };
  }
  const data = new ctor(count);
  if (init.initial !== undefined && ArrayBuffer.isView(init.initial)) {
    (data as unknown as { set(values: ArrayLike<unknown>): void }).set(
      init.initial as unknown as ArrayLike<unknown>,
    );
  }
  return { dims: init.initialDims, data };
}

const sameDims = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((d, i) => d === b[i]);

export function createSequenceStateStore(): SequenceStateStore {
  let setup: SequenceStateSetup | undefined;
  let initials: StateValue[] = [];
  let variable = false;
  const slots = new Map<number, readonly StateValue[]>();

  /** The state input of state `s` for `run`'s rows, `rowValues` the live rows' values (undefined: padding). */
  const feedOf = (s: number, rowValues: readonly (StateValue | undefined)[]): StateFeed => {
    const init = setup!.states[s]!;
    const ortType = datatypeInfo(init.datatype)!.ortType!;
    const live = rowValues.filter((v) => v !== undefined);
    const dims = live[0]?.dims ?? init.initialDims;
    if (live.some((v) => !sameDims(v.dims, dims))) {
      throw new Error(
        `the rows of a sequence batch disagree on the shape of state '${init.inputName}': ` +
          live.map((v) => `[${v.dims.join(",")}]`).join(", "),
      );
    }
    // A padding row reads the initial value when it has the batch's shape, zeros otherwise.
    const padding = sameDims(initials[s]!.dims, dims) ? initials[s]! : undefined;
    const batchDims = setup!.batching ? [rowValues.length, ...dims] : [...dims];
    const only = rowValues.length === 1 ? rowValues[0] : undefined;
    // One row: its own buffer is the input, no copy.
    if (only !== undefined) return { name: init.inputName, ortType, dims: batchDims, data: only.data };
    const perRow = elementsOf(dims);
    const ctor = typedArrayOf(init);
    if (ctor === undefined) {
      const data: string[] = [];
      for (const value of rowValues) {
        const from = (value ?? padding)?.data as readonly string[] | undefined;
        for (let i = 0; i < perRow; i++) data.push(from?.[i] ?? "");
      }
      return { name: init.inputName, ortType, dims: batchDims, data };
    }
    const data = new ctor(perRow * rowValues.length);
    const target = data as unknown as { set(values: ArrayLike<unknown>, offset: number): void };
    rowValues.forEach((value, row) => {
      const from = value ?? padding;
      if (from !== undefined) target.set(from.data as unknown as ArrayLike<unknown>, row * perRow);
    });
    return { name: init.inputName, ortType, dims: batchDims, data };
  };

  return {
    begin(run) {
      if (run.setup !== undefined) {
        setup = run.setup;
        slots.clear();
        initials = setup.states.map(initialValue);
        variable = setup.states.some((state) => state.dims.includes(-1));
      }
      const current = setup;
      if (current === undefined) throw new Error("a sequence batch came before the states' setup");
      for (const slot of run.released ?? []) slots.delete(slot);
      for (const row of run.rows) {
        if (row === null) continue;
        if (!Number.isInteger(row.slot) || row.slot < 0 || row.slot >= current.slots) {
          throw new Error(`sequence slot ${row.slot} is out of range: the instance has ${current.slots}`);
        }
      }
      for (const row of run.rows) if (row?.start) slots.delete(row.slot);
      const rowStates = run.rows.map((row) => (row === null ? undefined : (slots.get(row.slot) ?? initials)));
      const feeds = current.states.map((_, s) =>
        feedOf(
          s,
          rowStates.map((states) => states?.[s]),
        ),
      );
      // An END row's state goes now: its input is built, and a failed run must not keep it either.
      for (const row of run.rows) if (row?.end) slots.delete(row.slot);
      return { feeds, outputNames: current.states.map((state) => state.outputName) };
    },

    keep(run, output) {
      const current = setup!;
      const rows = run.rows.length;
      const kept: StateValue[][] = run.rows.map(() => []);
      const dimsOut: number[][] = [];
      for (const init of current.states) {
        const tensor = output(init.outputName);
        if (tensor === undefined) {
          throw new Error(`onnxruntime returned no state output '${init.outputName}'`);
        }
        const dims = current.batching ? tensor.dims.slice(1) : [...tensor.dims];
        dimsOut.push(dims);
        const perRow = elementsOf(dims);
        const data = tensor.data as StateData;
        const fits = dims.length === init.dims.length && init.dims.every((d, i) => d === -1 || d === dims[i]);
        if (!fits || (current.batching && tensor.dims[0] !== rows) || data.length !== perRow * rows) {
          throw new Error(
            `state output '${init.outputName}' has shape [${tensor.dims.join(",")}] for a batch of ${rows}, ` +
              `where state '${init.inputName}' has dims [${init.dims.join(",")}]`,
          );
        }
        run.rows.forEach((row, i) => {
          if (row === null || row.end) return;
          // Copies: a state outlives the batch, and must not hold the whole batch's buffer alive.
          const whole = rows === 1 && (Array.isArray(data) || isWholeBuffer(data as TensorTypedArray));
          kept[i]!.push({ dims, data: whole ? data : data.slice(i * perRow, (i + 1) * perRow) });
        });
      }
      run.rows.forEach((row, i) => {
        if (row !== null && !row.end) slots.set(row.slot, kept[i]!);
      });
      return variable ? dimsOut : undefined;
    },

    clear() {
      slots.clear();
    },

    held() {
      let bytes = 0;
      for (const states of slots.values()) {
        for (const value of states) {
          if (ArrayBuffer.isView(value.data)) bytes += (value.data as TensorTypedArray).byteLength;
        }
      }
      return { slots: slots.size, bytes };
    },
  };
}

function isWholeBuffer(data: TensorTypedArray): boolean {
  return data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
}
