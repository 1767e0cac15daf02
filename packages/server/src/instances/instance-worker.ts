/**
 * The body of one model-instance worker thread: owns one onnxruntime-node InferenceSession (session
 * creation and run() are synchronous native code that would block the main thread's event loop), runs the
 * batches the main thread sends and transfers the outputs back.
 */
import { parentPort, workerData } from "node:worker_threads";
import * as ort from "onnxruntime-node";
import { bytesDataFromStrings, bytesDataToStrings } from "../core/bytes-data.js";
import type { FromWorker, ToWorker, WireTensor, WireTensorInfo, WorkerInit } from "./worker-protocol.js";

const init = workerData as WorkerInit;
const port = parentPort;
if (!port) throw new Error("instance-worker must run in a worker thread");

function post(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

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

async function createSession(): Promise<{ session: ort.InferenceSession; cudaFallback?: string }> {
  const base: ort.InferenceSession.SessionOptions = {
    intraOpNumThreads: init.intraOpThreads,
    interOpNumThreads: init.interOpThreads,
  };
  if (init.cudaDeviceId === undefined) {
    return {
      session: await ort.InferenceSession.create(init.modelPath, { ...base, executionProviders: ["cpu"] }),
    };
  }
  try {
    // onnxruntime logs its own error when the CUDA provider is missing; the pool logs one clear line instead.
    ort.env.logLevel = "fatal";
    const session = await ort.InferenceSession.create(init.modelPath, {
      ...base,
      executionProviders: [{ name: "cuda", deviceId: init.cudaDeviceId }],
    });
    return { session };
  } catch (error) {
    const session = await ort.InferenceSession.create(init.modelPath, {
      ...base,
      executionProviders: ["cpu"],
    });
    return { session, cudaFallback: error instanceof Error ? error.message : String(error) };
  }
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

async function main(): Promise<void> {
  let session: ort.InferenceSession;
  try {
    const created = await createSession();
    session = created.session;
    post({
      type: "ready",
      inputs: describe(session.inputMetadata),
      outputs: describe(session.outputMetadata),
      ...(created.cudaFallback !== undefined ? { cudaFallback: created.cudaFallback } : {}),
    });
  } catch (error) {
    post({ type: "load-error", message: error instanceof Error ? error.message : String(error) });
    return;
  }
  port!.on("message", async (message: ToWorker) => {
    if (message.type === "close") {
      await session.release().catch(() => {});
      port!.close();
      return;
    }
    if (message.crash) process.exit(70);
    try {
      const t0 = performance.now();
      const feeds: Record<string, ort.Tensor> = {};
      for (const input of message.inputs) {
        // onnxruntime-node's string tensors take one JavaScript string per element: made here, off the
        // main thread, and bounded by --max-bytes-tensor-elements per request.
        const data = ArrayBuffer.isView(input.data) ? input.data : bytesDataToStrings(input.data);
        feeds[input.name] = new ort.Tensor(
          input.ortType,
          data as ort.Tensor.DataType,
          input.dims as number[],
        );
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
      post(
        {
          type: "result",
          id: message.id,
          outputs,
          inputNs: Math.round((t1 - t0) * 1e6),
          inferNs: Math.round((t2 - t1) * 1e6),
          outputNs: Math.round((t3 - t2) * 1e6),
        },
        [...transfer],
      );
    } catch (error) {
      post({
        type: "run-error",
        id: message.id,
        message: error instanceof Error ? error.message : String(error),
      });
    }
  });
}

void main();
