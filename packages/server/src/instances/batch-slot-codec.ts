/**
 * The compact form of a small batch and of its result, written into one region of bytes (a slot of the
 * instance's SharedArrayBuffer, batch-slots.ts) instead of crossing threads as an object graph: the
 * thing that crosses is then the slot's number. Only numeric tensors are written; names are not, since
 * a session's inputs and outputs are fixed: a tensor names its input or output by its index in the
 * session's declared list. Whatever cannot be written (BYTES, a type or view the object path would
 * carry differently, a name the session does not declare, more than fits) makes the encoder say no, and
 * the caller sends the object path's message instead, so the session sees exactly what it would have.
 *
 * A sequence batch's rows (slot, START, END; padding) and released slots are written too; its states'
 * setup is not (it goes once, by message).
 *
 * Layout, little-endian, every part 8-aligned:
 * - run:    u32 RUN_TAG, u32 byte length, f64 id, f64 queuedAtMs (NaN: none), u16 input count,
 *           u16 output count, u16 sequence row count (0: not a sequence batch), u16 released slot count,
 *           the requested outputs (u16 index each), the sequence rows (i32 each: -1 padding, else
 *           slot * 4 + START * 2 + END) and released slots (i32 each), then the tensors;
 * - result: u32 RESULT_TAG, u32 byte length, f64 id, f64 inputNs, inferNs, outputNs, waitNs (NaN: none),
 *           u16 output count, u16 0, u32 0, then the tensors;
 * - tensors: every tensor's head (u16 index, u8 ONNX data type, u8 rank, u32 data bytes, rank x f64
 *           dims), then every tensor's data, each starting 8-aligned.
 */
import { allDatatypes, type OrtTensorType, type TensorTypedArray } from "@tbench/proto";
import type {
  InstanceRunResult,
  SequenceRow,
  SequenceRun,
  SessionIo,
  ThreadTensor,
} from "./worker-protocol.js";

const RUN_TAG = 0x314e5552; // "RUN1"
const RESULT_TAG = 0x31534552; // "RES1"
const RUN_HEAD_BYTES = 32;
const RESULT_HEAD_BYTES = 56;
const TENSOR_HEAD_BYTES = 8;
const MAX_RANK = 255;
const MAX_COUNT = 0xffff;
/** The largest slot a sequence row can name (slot * 4 + flags fits an i32). */
const MAX_SEQUENCE_SLOT = 0x1fffffff;
const PADDING_ROW = -1;

type TypedArrayClass = new (
  buffer: ArrayBufferLike,
  byteOffset?: number,
  length?: number,
) => TensorTypedArray;

interface NumericType {
  readonly ortType: OrtTensorType;
  readonly code: number;
  readonly byteSize: number;
  readonly typedArray: TypedArrayClass;
}

// The numeric rows of the datatype table that onnxruntime-node has a tensor type for, by both keys.
const byOrtType = new Map<string, NumericType>();
const byCode = new Map<number, NumericType>();
for (const info of allDatatypes()) {
  if (!info.ortType || !info.byteSize || !info.typedArray) continue;
  const type: NumericType = {
    ortType: info.ortType,
    code: info.onnxType,
    byteSize: info.byteSize,
    typedArray: info.typedArray as unknown as TypedArrayClass,
  };
  byOrtType.set(type.ortType, type);
  byCode.set(type.code, type);
}

/** A session's declared input and output names, and the index of each, on both sides of the slot. */
export interface SlotIo {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly inputIndex: ReadonlyMap<string, number>;
  readonly outputIndex: ReadonlyMap<string, number>;
}

/** The names and indices of what `io` declares. */
export function slotIo(io: SessionIo): SlotIo {
  const inputNames = io.inputs.map((t) => t.name);
  const outputNames = io.outputs.map((t) => t.name);
  return {
    inputNames,
    outputNames,
    inputIndex: new Map(inputNames.map((name, i) => [name, i])),
    outputIndex: new Map(outputNames.map((name, i) => [name, i])),
  };
}

/** One batch as the session's thread runs it (the object path's RunMessage, less its type and hooks). */
export interface SlotRun {
  readonly id: number;
  readonly inputs: readonly ThreadTensor[];
  readonly outputNames: readonly string[];
  readonly queuedAtMs?: number;
  readonly sequence?: SequenceRun;
}

/** A tensor for the codec: which declared input or output, its type, shape and data. */
interface IndexedTensor {
  readonly index: number;
  readonly type: NumericType;
  readonly dims: readonly number[];
  readonly data: ArrayBufferView;
}

const align8 = (n: number) => (n + 7) & ~7;

/**
 * The tensor as the codec writes it, or undefined where the object path must carry it: a type without
 * fixed-size elements, data in another TypedArray class than the type's (the session would be handed a
 * different object), dims that are not counts, or a data length that disagrees with them (onnxruntime's
 * own error then says so, as it does today).
 */
function indexed(index: number | undefined, ortType: string, dims: readonly number[], data: unknown) {
  const type = byOrtType.get(ortType);
  if (index === undefined || index > MAX_COUNT || type === undefined) return undefined;
  if (!ArrayBuffer.isView(data) || data.constructor !== type.typedArray) return undefined;
  if (dims.length > MAX_RANK) return undefined;
  let elements = 1;
  for (const d of dims) {
    if (!Number.isSafeInteger(d) || d < 0) return undefined;
    elements *= d;
  }
  if (elements * type.byteSize !== data.byteLength) return undefined;
  return { index, type, dims, data } satisfies IndexedTensor;
}

function tensorsBytes(tensors: readonly IndexedTensor[]): number {
  let bytes = 0;
  for (const t of tensors) bytes += TENSOR_HEAD_BYTES + 8 * t.dims.length + align8(t.data.byteLength);
  return bytes;
}

function writeTensors(region: Uint8Array, view: DataView, at: number, tensors: readonly IndexedTensor[]) {
  let head = at;
  for (const t of tensors) {
    view.setUint16(head, t.index, true);
    view.setUint8(head + 2, t.type.code);
    view.setUint8(head + 3, t.dims.length);
    view.setUint32(head + 4, t.data.byteLength, true);
    head += TENSOR_HEAD_BYTES;
    for (const d of t.dims) {
      view.setFloat64(head, d, true);
      head += 8;
    }
  }
  let data = head;
  for (const t of tensors) {
    region.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), data);
    data += align8(t.data.byteLength);
  }
  return data;
}

/** A tensor's head as read back, and where its data lies in the region. */
interface ReadTensor {
  readonly index: number;
  readonly type: NumericType;
  readonly dims: number[];
  dataAt: number;
  readonly byteLength: number;
}

function malformed(what: string): Error {
  return new Error(`malformed batch slot: ${what}`);
}

/** Reads `count` tensor heads from `at`, checking each against `names` and the region's `end`. */
function readTensors(view: DataView, at: number, end: number, count: number, names: readonly string[]) {
  const tensors: ReadTensor[] = [];
  let head = at;
  for (let i = 0; i < count; i++) {
    if (head + TENSOR_HEAD_BYTES > end) throw malformed(`tensor ${i} head runs past the end (${end} bytes)`);
    const index = view.getUint16(head, true);
    const code = view.getUint8(head + 2);
    const rank = view.getUint8(head + 3);
    const byteLength = view.getUint32(head + 4, true);
    head += TENSOR_HEAD_BYTES;
    if (index >= names.length) throw malformed(`tensor ${i} names index ${index} of ${names.length}`);
    const type = byCode.get(code);
    if (type === undefined) throw malformed(`tensor ${i} has unknown data type ${code}`);
    if (head + 8 * rank > end) throw malformed(`tensor ${i} dims run past the end (${end} bytes)`);
    const dims: number[] = [];
    let elements = 1;
    for (let r = 0; r < rank; r++) {
      const d = view.getFloat64(head, true);
      head += 8;
      if (!Number.isSafeInteger(d) || d < 0) throw malformed(`tensor ${i} has dim ${d}`);
      dims.push(d);
      elements *= d;
    }
    if (elements * type.byteSize !== byteLength) {
      throw malformed(
        `tensor ${i} has ${byteLength} data bytes for dims [${dims.join(", ")}] of ${type.ortType}`,
      );
    }
    tensors.push({ index, type, dims, dataAt: 0, byteLength });
  }
  let dataAt = head;
  for (const [i, tensor] of tensors.entries()) {
    if (dataAt + tensor.byteLength > end)
      throw malformed(`tensor ${i} data runs past the end (${end} bytes)`);
    tensor.dataAt = dataAt;
    dataAt += align8(tensor.byteLength);
  }
  return { tensors, dataStart: head };
}

/** The checked tag and byte length of a region holding `tag`. */
function readHead(region: Uint8Array, view: DataView, tag: number, headBytes: number, what: string) {
  if (region.byteLength < headBytes) throw malformed(`${region.byteLength} bytes, less than a ${what} head`);
  const found = view.getUint32(0, true);
  if (found !== tag) throw malformed(`tag 0x${found.toString(16)} where a ${what} belongs`);
  const end = view.getUint32(4, true);
  if (end < headBytes || end > region.byteLength) {
    throw malformed(`${what} of ${end} bytes in a region of ${region.byteLength}`);
  }
  return end;
}

const viewOf = (region: Uint8Array) => new DataView(region.buffer, region.byteOffset, region.byteLength);

/**
 * Writes `run` into `region` and returns true, or returns false having written nothing when any of its
 * tensors or names cannot be written or the whole would not fit: the object path carries it then.
 */
export function encodeRun(region: Uint8Array, run: SlotRun, io: SlotIo): boolean {
  if (run.inputs.length > MAX_COUNT || run.outputNames.length > MAX_COUNT) return false;
  const sequence = sequenceWords(run.sequence);
  if (sequence === undefined) return false;
  const tensors: IndexedTensor[] = [];
  for (const input of run.inputs) {
    const tensor = indexed(io.inputIndex.get(input.name), input.ortType, input.dims, input.data);
    if (tensor === undefined) return false;
    tensors.push(tensor);
  }
  const outputs: number[] = [];
  for (const name of run.outputNames) {
    const index = io.outputIndex.get(name);
    if (index === undefined || index > MAX_COUNT) return false;
    outputs.push(index);
  }
  const sequenceAt = RUN_HEAD_BYTES + align8(2 * outputs.length);
  const tensorsAt = sequenceAt + align8(4 * (sequence.rows.length + sequence.released.length));
  const bytes = tensorsAt + tensorsBytes(tensors);
  if (bytes > region.byteLength) return false;
  const view = viewOf(region);
  view.setUint32(0, RUN_TAG, true);
  view.setUint32(4, bytes, true);
  view.setFloat64(8, run.id, true);
  view.setFloat64(16, run.queuedAtMs ?? Number.NaN, true);
  view.setUint16(24, tensors.length, true);
  view.setUint16(26, outputs.length, true);
  view.setUint16(28, sequence.rows.length, true);
  view.setUint16(30, sequence.released.length, true);
  for (const [i, index] of outputs.entries()) view.setUint16(RUN_HEAD_BYTES + 2 * i, index, true);
  for (const [i, word] of [...sequence.rows, ...sequence.released].entries()) {
    view.setInt32(sequenceAt + 4 * i, word, true);
  }
  writeTensors(region, view, tensorsAt, tensors);
  return true;
}

/**
 * A sequence batch's rows and released slots as the words the region holds (none for another batch), or
 * undefined when they cannot be written: a setup to send, too many rows, a slot out of range.
 */
function sequenceWords(sequence: SequenceRun | undefined) {
  if (sequence === undefined) return { rows: [], released: [] };
  const released = sequence.released ?? [];
  const rows = sequence.rows;
  if (sequence.setup !== undefined || rows.length === 0 || rows.length > MAX_COUNT) return undefined;
  if (released.length > MAX_COUNT) return undefined;
  const fits = (slot: number) => Number.isInteger(slot) && slot >= 0 && slot <= MAX_SEQUENCE_SLOT;
  if (!rows.every((row) => row === null || fits(row.slot)) || !released.every(fits)) return undefined;
  return {
    rows: rows.map((row) =>
      row === null ? PADDING_ROW : row.slot * 4 + (row.start ? 2 : 0) + (row.end ? 1 : 0),
    ),
    released,
  };
}

function sequenceRowOf(word: number): SequenceRow | null {
  if (word === PADDING_ROW) return null;
  if (word < 0) throw malformed(`sequence row ${word}`);
  return { slot: word >>> 2, start: (word & 2) !== 0, end: (word & 1) !== 0 };
}

/** The id a run region carries (readable even where the rest is not: the run's error goes to it). */
export function slotRunId(region: Uint8Array): number {
  return region.byteLength >= 16 ? viewOf(region).getFloat64(8, true) : Number.NaN;
}

/** A run read back, with the index of each requested output in the session's declared outputs. */
export interface DecodedRun extends SlotRun {
  readonly outputIndices: readonly number[];
}

/**
 * Reads a run from `region`: its inputs in one fresh buffer of their own (onnxruntime-node refuses views
 * of a SharedArrayBuffer, and the slot is reused), named by `io`. Throws `malformed batch slot: ...`.
 */
export function decodeRun(region: Uint8Array, io: SlotIo): DecodedRun {
  const view = viewOf(region);
  const end = readHead(region, view, RUN_TAG, RUN_HEAD_BYTES, "run");
  const id = view.getFloat64(8, true);
  const queuedAtMs = view.getFloat64(16, true);
  const inputCount = view.getUint16(24, true);
  const outputCount = view.getUint16(26, true);
  const rowCount = view.getUint16(28, true);
  const releasedCount = view.getUint16(30, true);
  const sequenceAt = RUN_HEAD_BYTES + align8(2 * outputCount);
  if (sequenceAt > end) throw malformed(`${outputCount} outputs run past the end (${end} bytes)`);
  const tensorsAt = sequenceAt + align8(4 * (rowCount + releasedCount));
  if (tensorsAt > end) throw malformed(`${rowCount} sequence rows run past the end (${end} bytes)`);
  const outputIndices: number[] = [];
  const outputNames: string[] = [];
  for (let i = 0; i < outputCount; i++) {
    const index = view.getUint16(RUN_HEAD_BYTES + 2 * i, true);
    const name = io.outputNames[index];
    if (name === undefined) throw malformed(`output ${i} names index ${index} of ${io.outputNames.length}`);
    outputIndices.push(index);
    outputNames.push(name);
  }
  const { tensors, dataStart } = readTensors(view, tensorsAt, end, inputCount, io.inputNames);
  const data = region.slice(dataStart, end).buffer;
  const inputs: ThreadTensor[] = tensors.map((t) => ({
    name: io.inputNames[t.index]!,
    ortType: t.type.ortType,
    dims: t.dims,
    data: new t.type.typedArray(data, t.dataAt - dataStart, t.byteLength / t.type.byteSize),
  }));
  const word = (i: number) => view.getInt32(sequenceAt + 4 * i, true);
  const sequence: SequenceRun | undefined =
    rowCount === 0
      ? undefined
      : {
          rows: Array.from({ length: rowCount }, (_, i) => sequenceRowOf(word(i))),
          ...(releasedCount > 0
            ? { released: Array.from({ length: releasedCount }, (_, i) => word(rowCount + i)) }
            : {}),
        };
  return {
    id,
    inputs,
    outputNames,
    outputIndices,
    ...(Number.isNaN(queuedAtMs) ? {} : { queuedAtMs }),
    ...(sequence !== undefined ? { sequence } : {}),
  };
}

/** An output as the session gave it (onnxruntime's Tensor fits: `type`, `dims`, `data`). */
export interface SlotOutput {
  readonly type: string;
  readonly dims: readonly number[];
  readonly data: unknown;
}

/** The durations a result carries (InstanceRunResult's). */
export type SlotTimes = Omit<InstanceRunResult, "outputs">;

/**
 * Writes the result of run `id` into `region` and returns true, or returns false having written nothing
 * when an output cannot be written (strings, another TypedArray class) or the whole would not fit.
 * `outputIndices[i]` is the declared index of `outputs[i]`.
 */
export function encodeResult(
  region: Uint8Array,
  id: number,
  outputs: readonly SlotOutput[],
  outputIndices: readonly number[],
  times: SlotTimes,
): boolean {
  if (outputs.length > MAX_COUNT || outputs.length !== outputIndices.length) return false;
  const tensors: IndexedTensor[] = [];
  for (const [i, output] of outputs.entries()) {
    const tensor = indexed(outputIndices[i], output.type, output.dims, output.data);
    if (tensor === undefined) return false;
    tensors.push(tensor);
  }
  const bytes = RESULT_HEAD_BYTES + tensorsBytes(tensors);
  if (bytes > region.byteLength) return false;
  const view = viewOf(region);
  view.setUint32(0, RESULT_TAG, true);
  view.setUint32(4, bytes, true);
  view.setFloat64(8, id, true);
  view.setFloat64(16, times.inputNs, true);
  view.setFloat64(24, times.inferNs, true);
  view.setFloat64(32, times.outputNs, true);
  view.setFloat64(40, times.waitNs ?? Number.NaN, true);
  view.setUint16(48, tensors.length, true);
  view.setUint16(50, 0, true);
  view.setUint32(52, 0, true);
  writeTensors(region, view, RESULT_HEAD_BYTES, tensors);
  return true;
}

/**
 * Reads a result from `region`: each output copied into a fresh buffer of its own (the slot is reused by
 * the next batch while responses still hold views of these), named by `io`. Throws `malformed batch
 * slot: ...`.
 */
export function decodeResult(region: Uint8Array, io: SlotIo): { id: number; result: InstanceRunResult } {
  const view = viewOf(region);
  const end = readHead(region, view, RESULT_TAG, RESULT_HEAD_BYTES, "result");
  const count = view.getUint16(48, true);
  const { tensors } = readTensors(view, RESULT_HEAD_BYTES, end, count, io.outputNames);
  const outputs: ThreadTensor[] = tensors.map((t) => ({
    name: io.outputNames[t.index]!,
    ortType: t.type.ortType,
    dims: t.dims,
    data: new t.type.typedArray(region.slice(t.dataAt, t.dataAt + t.byteLength).buffer),
  }));
  const waitNs = view.getFloat64(40, true);
  return {
    id: view.getFloat64(8, true),
    result: {
      outputs,
      inputNs: view.getFloat64(16, true),
      inferNs: view.getFloat64(24, true),
      outputNs: view.getFloat64(32, true),
      ...(Number.isNaN(waitNs) ? {} : { waitNs }),
    },
  };
}
