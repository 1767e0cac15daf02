/**
 * Values as they cross between threads (the HTTP front-end threads, the JSON decode threads): requests with
 * their tensors in buffers of their own, and errors as their kind, code and message, so that the receiving
 * thread answers them as the sending one would (describeError).
 */
import { ServerError, type ServerErrorStatus } from "../../core/server-error.js";
import { TRANSFER_MIN_BYTES } from "../../core/thread-transfer.js";
import type { InferenceRequest, InferenceResponse, Tensor, TensorData } from "../../core/types.js";
import { HttpError } from "../http-error.js";

/** A request as it crosses: no signal (a `cancel` message stands for it). */
export type PortableRequest = Omit<InferenceRequest, "signal">;

/** An error as it crosses. */
export interface PortableError {
  readonly kind: "server" | "http" | "other";
  readonly message: string;
  readonly serverStatus?: ServerErrorStatus;
  readonly httpStatus?: number;
}

/** What crosses for `error`. */
export function toPortableError(error: unknown): PortableError {
  if (error instanceof ServerError)
    return { kind: "server", message: error.message, serverStatus: error.status };
  if (error instanceof HttpError)
    return { kind: "http", message: error.message, httpStatus: error.statusCode };
  return { kind: "other", message: error instanceof Error ? error.message : String(error) };
}

/** The error a thread rethrows: describeError answers it as it answers the original. */
export function fromPortableError(error: PortableError): Error {
  if (error.kind === "server") return new ServerError(error.serverStatus ?? "INTERNAL", error.message);
  if (error.kind === "http") return new HttpError(error.httpStatus ?? 500, error.message);
  return new Error(error.message);
}

/** `request` ready to post: tensors in buffers of their own, the big ones listed in `transfer`. */
export function portableRequest(request: InferenceRequest, transfer: ArrayBuffer[]): PortableRequest {
  const { signal: _signal, ...rest } = request;
  return { ...rest, inputs: portableTensors(request.inputs, transfer) };
}

/** `response` ready to post, as portableRequest. */
export function portableResponse(response: InferenceResponse, transfer: ArrayBuffer[]): InferenceResponse {
  return { ...response, outputs: portableTensors(response.outputs, transfer) };
}

function portableTensors(tensors: readonly Tensor[], transfer: ArrayBuffer[]): Tensor[] {
  return tensors.map((tensor) => ({ ...tensor, data: portableData(tensor.data, transfer) }));
}

function portableData(data: TensorData, transfer: ArrayBuffer[]): TensorData {
  if (ArrayBuffer.isView(data)) return ownedView(data, transfer);
  return { count: data.count, wire: ownedView(data.wire, transfer) };
}

/**
 * `view` itself when it spans a buffer of its own, else a copy: posting a view of a larger buffer (the
 * request body, Node's shared 8 KiB Buffer pool) would clone that whole buffer, and transferring it would
 * take it from everything else that views it.
 */
function ownedView<T extends ArrayBufferView>(view: T, transfer: ArrayBuffer[]): T {
  const buffer = view.buffer;
  const owned =
    buffer instanceof ArrayBuffer && view.byteOffset === 0 && view.byteLength === buffer.byteLength;
  if (owned && !Buffer.isBuffer(view)) {
    if (buffer.byteLength >= TRANSFER_MIN_BYTES && !transfer.includes(buffer)) transfer.push(buffer);
    return view;
  }
  const bytes = new Uint8Array(view.byteLength);
  bytes.set(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
  if (bytes.byteLength >= TRANSFER_MIN_BYTES) transfer.push(bytes.buffer);
  // A Buffer arrives as a Uint8Array whatever is sent, so it becomes one here already.
  const Type = (Buffer.isBuffer(view) ? Uint8Array : view.constructor) as new (buffer: ArrayBuffer) => T;
  return new Type(bytes.buffer);
}
