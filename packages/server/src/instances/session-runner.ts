/**
 * What every thread that owns onnxruntime-node sessions does the same way: create a session on exactly one
 * execution provider, describe its inputs and outputs, and run a batch that arrived by transfer, handing
 * the outputs back as owned buffers to transfer (no copy unless onnxruntime's buffer is shared).
 * Imported only by thread bodies (instance-worker, webgpu-executor-worker), never by the main thread.
 */
import * as ort from "onnxruntime-node";
import { bytesDataFromStrings, bytesDataToStrings } from "../core/bytes-data.js";
import {
  type RunMessage,
  type RunReply,
  type SessionInit,
  type SessionIo,
  type WireTensor,
  type WireTensorInfo,
  worthTransferring,
} from "./worker-protocol.js";

function describe(values: readonly ort.InferenceSession.ValueMetadata[]): WireTensorInfo[] {
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

/** Runs one batch on `session` and returns the reply with the buffers to transfer along with it. */
export async function runBatch(
  session: ort.InferenceSession,
  message: RunMessage,
): Promise<{ reply: RunReply; transfer: ArrayBuffer[] }> {
  try {
    const t0 = performance.now();
    // Both threads' timeOrigin + now() read the same wall clock, so the difference is the time in between.
    const waitNs =
      message.queuedAtMs === undefined
        ? undefined
        : Math.max(0, Math.round((performance.timeOrigin + t0 - message.queuedAtMs) * 1e6));
    const feeds: Record<string, ort.Tensor> = {};
    for (const input of message.inputs) {
      // onnxruntime-node's string tensors take one JavaScript string per element: made here, off the
      // main thread, and bounded by --max-bytes-tensor-elements per request.
      const data = ArrayBuffer.isView(input.data) ? input.data : bytesDataToStrings(input.data);
      feeds[input.name] = new ort.Tensor(input.ortType, data as ort.Tensor.DataType, input.dims as number[]);
    }
    const t1 = performance.now();
    const results = await session.run(feeds, message.outputNames as string[]);
    const t2 = performance.now();
    const outputs: WireTensor[] = [];
    const transfer = new Set<ArrayBuffer>();
    for (const name of message.outputNames) {
      const tensor = results[name];
      if (!tensor) throw new Error(`onnxruntime returned no output '${name}'`);
      if (tensor.type === "string") {
        // Back into one owned buffer in wire form, so strings never cross threads one by one.
        const data = bytesDataFromStrings(tensor.data as string[]);
        transfer.add(data.wire.buffer as ArrayBuffer);
        outputs.push({ name, ortType: "string", dims: [...tensor.dims], data });
      } else {
        const data = ownedView(tensor.data as unknown as ArrayBufferView);
        transfer.add(data.buffer as ArrayBuffer);
        outputs.push({ name, ortType: tensor.type as WireTensor["ortType"], dims: [...tensor.dims], data });
      }
    }
    const t3 = performance.now();
    return {
      reply: {
        type: "result",
        id: message.id,
        outputs,
        inputNs: Math.round((t1 - t0) * 1e6),
        inferNs: Math.round((t2 - t1) * 1e6),
        outputNs: Math.round((t3 - t2) * 1e6),
        ...(waitNs !== undefined ? { waitNs } : {}),
      },
      transfer: worthTransferring(transfer),
    };
  } catch (error) {
    return { reply: { type: "run-error", id: message.id, message: messageOf(error) }, transfer: [] };
  }
}
