/**
 * What every thread that owns onnxruntime-node sessions does the same way: create a session on exactly one
 * execution provider, describe its inputs and outputs, and run a batch that arrived by transfer, handing
 * the outputs back as owned buffers to transfer (no copy unless onnxruntime's buffer is shared), or one
 * that arrived in a slot (batch-slots.ts), answering in the slot when the result fits.
 * Imported only by thread bodies (instance-worker, webgpu-executor-worker), never by the main thread.
 */
import * as ort from "onnxruntime-node";
import { bytesDataFromStrings, bytesDataToStrings } from "../core/bytes-data.js";
import { worthTransferring } from "../core/thread-transfer.js";
import { decodeRun, encodeResult, type SlotIo, type SlotTimes, slotRunId } from "./batch-slot-codec.js";
import type { SequenceStateStore } from "./sequence-state-store.js";
import type {
  RunMessage,
  RunReply,
  SessionInit,
  SessionIo,
  SessionTensorInfo,
  ThreadTensor,
} from "./worker-protocol.js";

function describe(values: readonly ort.InferenceSession.ValueMetadata[]): SessionTensorInfo[] {
  return values.map((value) =>
    value.isTensor
      ? {
          name: value.name,
          ortType: value.type,
          dims: value.shape.map((d) => (typeof d === "number" && d >= 0 ? d : -1)),
        }
      : { name: value.name, ortType: undefined, dims: [] },
  );
}

/** The inputs and outputs a session declares. */
export function sessionIo(session: ort.InferenceSession): SessionIo {
  return { inputs: describe(session.inputMetadata), outputs: describe(session.outputMetadata) };
}

/**
 * The provider list for `init.provider` alone: onnxruntime still places the nodes a provider cannot run on
 * its CPU provider, but a provider that cannot start fails the creation (the caller falls back, saying why).
 */
function executionProviders(init: SessionInit): ort.InferenceSession.ExecutionProviderConfig[] {
  switch (init.provider) {
    case "cpu":
      return ["cpu"];
    case "cuda":
      return [{ name: "cuda", deviceId: init.gpu?.deviceId ?? 0 }];
    case "webgpu":
      // The provider object takes no device id (onnxruntime refuses `deviceId`): Dawn picks the adapter.
      return ["webgpu"];
  }
}

/** Creates the session of `init` on its provider; rejects with onnxruntime's reason when it cannot. */
export function createSession(init: SessionInit): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(init.modelPath, {
    intraOpNumThreads: init.intraOpThreads,
    interOpNumThreads: init.interOpThreads,
    executionProviders: executionProviders(init),
  });
}

/** The buffer of `data` if it is exactly and solely the view's, else a copy that is. */
function ownedView(data: ArrayBufferView): ArrayBufferView {
  const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
  if (whole && data.buffer instanceof ArrayBuffer) return data;
  const copy = new Uint8Array(data.byteLength);
  copy.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  const ctor = (data as unknown as { constructor: new (b: ArrayBuffer) => ArrayBufferView }).constructor;
  return new ctor(copy.buffer);
}

/** An error's message, for a reply. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A batch to run: a RunMessage, or one read from a slot. */
type BatchToRun = Pick<RunMessage, "inputs" | "outputNames" | "queuedAtMs" | "sequence">;

/** A finished run: onnxruntime's outputs in the order asked for, and when each step ended. */
interface SessionRun {
  readonly outputs: ort.Tensor[];
  readonly t0: number;
  readonly t1: number;
  readonly t2: number;
  readonly waitNs: number | undefined;
  /** A sequence batch's state output dims, when the model's states have variable dims. */
  readonly stateDims: number[][] | undefined;
}

/**
 * Feeds `batch` to `session` and runs it; throws with the message its run-error carries. `t0` is when
 * handling the batch began (feed creation and, for a slot, reading it count as compute input). A sequence
 * batch also gets its rows' states from `states` (the session's store), which keeps the state outputs:
 * only the outputs the batch asked for are returned.
 */
async function runOnSession(
  session: ort.InferenceSession,
  batch: BatchToRun,
  t0: number,
  states: SequenceStateStore | undefined,
): Promise<SessionRun> {
  // Both threads' timeOrigin + now() read the same wall clock, so the difference is the time in between.
  const waitNs =
    batch.queuedAtMs === undefined
      ? undefined
      : Math.max(0, Math.round((performance.timeOrigin + t0 - batch.queuedAtMs) * 1e6));
  const feeds: Record<string, ort.Tensor> = {};
  for (const input of batch.inputs) {
    // onnxruntime-node's string tensors take one JavaScript string per element: made here, off the
    // main thread, and bounded by --max-bytes-tensor-elements per request.
    const data = ArrayBuffer.isView(input.data) ? input.data : bytesDataToStrings(input.data);
    feeds[input.name] = new ort.Tensor(input.ortType, data as ort.Tensor.DataType, input.dims as number[]);
  }
  const sequence = batch.sequence;
  let names = batch.outputNames;
  if (sequence !== undefined) {
    if (states === undefined) throw new Error("a sequence batch reached a session without a state store");
    const begun = states.begin(sequence);
    for (const feed of begun.feeds) {
      const data = feed.data as ort.Tensor.DataType;
      feeds[feed.name] = new ort.Tensor(feed.ortType, data, feed.dims as number[]);
    }
    names = [...new Set([...batch.outputNames, ...begun.outputNames])];
  }
  const t1 = performance.now();
  const results = await session.run(feeds, names as string[]);
  const t2 = performance.now();
  const stateDims =
    sequence === undefined ? undefined : states!.keep(sequence, (name) => results[name] ?? undefined);
  const outputs = batch.outputNames.map((name) => {
    const tensor = results[name];
    if (!tensor) throw new Error(`onnxruntime returned no output '${name}'`);
    return tensor;
  });
  return { outputs, t0, t1, t2, waitNs, stateDims };
}

/** The durations of `run` whose outputs were extracted at `t3`. */
function timesOf(run: SessionRun, t3: number): SlotTimes {
  return {
    inputNs: Math.round((run.t1 - run.t0) * 1e6),
    inferNs: Math.round((run.t2 - run.t1) * 1e6),
    outputNs: Math.round((t3 - run.t2) * 1e6),
    ...(run.waitNs !== undefined ? { waitNs: run.waitNs } : {}),
  };
}

/** The object path's reply to run `id`: the outputs as owned buffers, the big ones to transfer. */
function resultReply(id: number, names: readonly string[], run: SessionRun): BatchReply {
  const outputs: ThreadTensor[] = [];
  const transfer = new Set<ArrayBuffer>();
  run.outputs.forEach((tensor, i) => {
    const name = names[i]!;
    if (tensor.type === "string") {
      // Back into one owned buffer in wire form, so strings never cross threads one by one.
      const data = bytesDataFromStrings(tensor.data as string[]);
      transfer.add(data.wire.buffer as ArrayBuffer);
      outputs.push({ name, ortType: "string", dims: [...tensor.dims], data });
    } else {
      const data = ownedView(tensor.data as unknown as ArrayBufferView);
      transfer.add(data.buffer as ArrayBuffer);
      outputs.push({ name, ortType: tensor.type as ThreadTensor["ortType"], dims: [...tensor.dims], data });
    }
  });
  const times = timesOf(run, performance.now());
  const stateDims = run.stateDims !== undefined ? { stateDims: run.stateDims } : {};
  return {
    reply: { type: "result", id, outputs, ...times, ...stateDims },
    transfer: worthTransferring(transfer),
  };
}

/** A reply and the buffers to transfer along with it. */
interface BatchReply {
  readonly reply: RunReply;
  readonly transfer: ArrayBuffer[];
}

const runError = (id: number, error: unknown): BatchReply => ({
  reply: { type: "run-error", id, message: messageOf(error) },
  transfer: [],
});

/**
 * Runs one batch on `session` and returns the reply with the buffers to transfer along with it; `states`
 * is the session's state store (sequence models).
 */
export async function runBatch(
  session: ort.InferenceSession,
  message: RunMessage,
  states?: SequenceStateStore,
): Promise<BatchReply> {
  try {
    const run = await runOnSession(session, message, performance.now(), states);
    return resultReply(message.id, message.outputNames, run);
  } catch (error) {
    return runError(message.id, error);
  }
}

/**
 * Runs the batch written in `region` (slot `slot`, batch-slots.ts) on `session`, whose declared inputs
 * and outputs `io` names. The result goes back into the region when it fits there (the reply is then
 * the slot's number), else as the object path's reply (also when state dims must go back); a failure, a
 * slot that cannot be read included, is the object path's run-error.
 */
export async function runSlotBatch(
  session: ort.InferenceSession,
  region: Uint8Array,
  io: SlotIo,
  slot: number,
  states?: SequenceStateStore,
): Promise<{ reply: RunReply | number; transfer: ArrayBuffer[] }> {
  const t0 = performance.now();
  const id = slotRunId(region);
  try {
    const batch = decodeRun(region, io);
    const run = await runOnSession(session, batch, t0, states);
    const times = timesOf(run, performance.now());
    if (
      run.stateDims === undefined &&
      encodeResult(region, batch.id, run.outputs, batch.outputIndices, times)
    )
      return { reply: slot, transfer: [] };
    return resultReply(batch.id, batch.outputNames, run);
  } catch (error) {
    return runError(id, error);
  }
}
