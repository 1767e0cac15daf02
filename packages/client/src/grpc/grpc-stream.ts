/**
 * InferStream over one ModelStreamInfer call. Every request carries an id (the caller's, or a generated
 * one) and Triton answers each with exactly one ModelStreamInferResponse carrying that id (in request order
 * for a non-decoupled model; the client does not rely on the order); an error answer has `error_message`
 * set and the id in `infer_response`.
 * Answers are matched to requests by id: a request sent with infer() or prepare().send() settles its own
 * promise; one sent with write() is yielded by the iterator. An answer whose id matches no request, or an
 * error answer without an id, cannot be matched and would leave a request waiting forever (a known failure
 * of other clients), so it ends the stream: every pending request gets a MalformedResponseError.
 *
 * How the stream ends: after end() once the server has answered everything and closed the call (the
 * iterator finishes); by cancel(), an aborted signal or breaking out of `for await` (the call is cancelled on
 * the wire, pending requests get AbortedError, the iterator finishes quietly); or by a failure (deadline,
 * connection, malformed answer, client destroyed): pending requests get the error, and the iterator throws
 * it after yielding what it holds.
 *
 * A stream error answer carries only a message (no status code), so its class comes from the message
 * (UNKNOWN refined by the message: unknown model, queue full, timeout), UnknownError otherwise; its
 * `grpcStatus` is undefined.
 */
import { randomUUID } from "node:crypto";
import type * as grpcJs from "@grpc/grpc-js";
import { grpcInferenceServiceMethods, inference } from "@tbench/proto";
import { errorForKind, refineKind } from "../error-mapping.js";
import {
  AbortedError,
  type InferenceError,
  InvalidArgumentError,
  MalformedResponseError,
} from "../errors.js";
import type { InferResult } from "../infer-result.js";
import type { InferRequest } from "../tensor-types.js";
import type { Cancellable, GrpcChannel } from "./grpc-channel.js";
import { errorFromGrpcFailure } from "./grpc-errors.js";
import { encodeGrpcInferRequestWithoutId, inferResultOf, withId } from "./grpc-infer-codec.js";
import type { InferStream, StreamOptions, StreamResult } from "./grpc-inference-client.js";

const PATH = grpcInferenceServiceMethods.ModelStreamInfer.path;
const identity = (bytes: Buffer): Buffer => bytes;

/** Where an answer goes: the iterator, or the promise of infer() / send(). */
type Waiter = { resolve(result: InferResult): void; reject(error: InferenceError): void } | null;

export class GrpcInferStream implements InferStream, Cancellable {
  readonly #channel: GrpcChannel;
  readonly #model: string;
  readonly #what: string;
  readonly #timeoutMs: number | undefined;
  readonly #signal: AbortSignal | undefined;
  #call: grpcJs.ClientDuplexStream<Buffer, Buffer> | undefined;
  /** Requests written before the call exists (an async auth hook is still running). */
  #backlog: Buffer[] | undefined;
  readonly #pending = new Map<string, Waiter>();
  readonly #queue: StreamResult[] = [];
  #wake: (() => void) | undefined;
  readonly #idPrefix = `${randomUUID().slice(0, 8)}-`;
  #nextId = 0;
  #ended = false;
  #finished = false;
  #quiet = false;
  #failure: InferenceError | undefined;
  #failureThrown = false;
  #done: Promise<void>;
  #resolveDone!: () => void;

  constructor(channel: GrpcChannel, model: string, options: StreamOptions | undefined) {
    if (typeof model !== "string" || model === "") {
      throw new InvalidArgumentError("stream: model must be a non-empty string");
    }
    this.#channel = channel;
    this.#model = model;
    this.#what = `ModelStreamInfer ${model}`;
    this.#timeoutMs = options?.timeoutMs ?? channel.options.timeoutMs;
    this.#signal = options?.signal;
    this.#done = new Promise<void>((resolve) => (this.#resolveDone = resolve));
    const closed = channel.closedError();
    if (closed !== undefined) {
      this.#finish(closed, false);
      return;
    }
    channel.track(this);
    if (this.#signal?.aborted) {
      this.cancel(this.#signal.reason);
      return;
    }
    this.#signal?.addEventListener("abort", this.#onAbort, { once: true });
    const metadata = channel.metadata(options?.headers);
    if (metadata instanceof Promise) {
      this.#backlog = [];
      metadata.then(
        (m) => this.#open(m),
        (error: unknown) =>
          this.fail(new InvalidArgumentError(`${this.#what}: the auth hook failed`, { cause: error })),
      );
    } else this.#open(metadata);
  }

  readonly #onAbort = (): void => this.cancel(this.#signal?.reason);

  #open(metadata: grpcJs.Metadata): void {
    if (this.#finished) return;
    const deadline = this.#timeoutMs === undefined ? undefined : Date.now() + this.#timeoutMs;
    const call = this.#channel.client.makeBidiStreamRequest(
      PATH,
      identity,
      identity,
      metadata,
      deadline === undefined ? {} : { deadline },
    );
    this.#call = call;
    call.on("data", (bytes: Buffer) => this.#onAnswer(bytes));
    call.on("error", (error: grpcJs.ServiceError) => {
      if (!this.#finished) {
        this.#finish(errorFromGrpcFailure(error, { what: this.#what, timeoutMs: this.#timeoutMs }), false);
      }
    });
    call.on("status", () => this.#onStatus());
    for (const bytes of this.#backlog ?? []) call.write(bytes);
    this.#backlog = undefined;
    if (this.#ended) call.end();
  }

  // ---- sending -------------------------------------------------------------------------------------

  #register(id: string, waiter: Waiter): void {
    if (this.#ended) throw new InvalidArgumentError(`${this.#what}: write after end()`);
    if (this.#finished) throw this.#failure ?? new AbortedError(`${this.#what}: the stream is over`);
    if (this.#pending.has(id)) {
      throw new InvalidArgumentError(
        `${this.#what}: request id ${JSON.stringify(id)} is already waiting for its answer`,
      );
    }
    this.#pending.set(id, waiter);
  }

  #send(bytes: Buffer): void {
    if (this.#call !== undefined) this.#call.write(bytes);
    else this.#backlog?.push(bytes);
  }

  #encode(request: InferRequest): { id: string; bytes: Buffer } {
    const id = request.id ?? this.#freshId();
    return { id, bytes: withId(encodeGrpcInferRequestWithoutId(this.#model, request), id) };
  }

  #freshId(): string {
    return this.#idPrefix + (this.#nextId++).toString(36);
  }

  write(request: InferRequest): string {
    const { id, bytes } = this.#encode(request);
    this.#register(id, null);
    this.#send(bytes);
    return id;
  }

  infer(request: InferRequest): Promise<InferResult> {
    return new Promise<InferResult>((resolve, reject) => {
      const { id, bytes } = this.#encode(request);
      this.#register(id, { resolve, reject });
      this.#send(bytes);
    });
  }

  prepare(request: InferRequest): { readonly byteLength: number; send(): Promise<InferResult> } {
    const body = encodeGrpcInferRequestWithoutId(this.#model, request);
    return {
      byteLength: body.length,
      send: () =>
        new Promise<InferResult>((resolve, reject) => {
          const id = this.#freshId();
          this.#register(id, { resolve, reject });
          this.#send(withId(body, id));
        }),
    };
  }

  end(): void {
    if (this.#ended || this.#finished) return;
    this.#ended = true;
    this.#call?.end();
  }

  cancel(reason?: unknown): void {
    if (this.#finished) return;
    this.#finish(new AbortedError(`${this.#what}: cancelled`, { cause: reason }), true);
  }

  /** Cancellable: ends the stream with `error` (destroy()). */
  fail(error: InferenceError): void {
    if (!this.#finished) this.#finish(error, false);
  }

  // ---- answers -------------------------------------------------------------------------------------

  #onAnswer(bytes: Buffer): void {
    if (this.#finished) return;
    let answer: inference.ModelStreamInferResponse;
    try {
      answer = inference.ModelStreamInferResponse.decode(bytes);
    } catch (error) {
      this.#finish(
        new MalformedResponseError(`${this.#what}: an answer does not parse`, { cause: error }),
        false,
      );
      return;
    }
    const response = answer.infer_response;
    const id = response?.id ?? "";
    const message = answer.error_message ?? "";
    if (!this.#pending.has(id)) {
      const what = message === "" ? "an answer" : `an error answer (${JSON.stringify(message)})`;
      const which = id === "" ? "without an id" : `for id ${JSON.stringify(id)}, which no request waits for`;
      this.#finish(
        new MalformedResponseError(`${this.#what}: ${what} ${which}; the stream cannot match it`),
        false,
      );
      return;
    }
    if (message !== "") {
      // Triton's error answer on a stream has a message and no status: the message alone names the kind.
      this.#settle(id, errorForKind(refineKind("UNKNOWN", message), message, { requestId: id }));
      return;
    }
    let result: InferResult;
    try {
      result = inferResultOf(response!);
    } catch (error) {
      this.#settle(id, error as InferenceError);
      return;
    }
    this.#settle(id, result);
  }

  #settle(id: string, outcome: InferResult | InferenceError): void {
    const waiter = this.#pending.get(id);
    this.#pending.delete(id);
    const failed = outcome instanceof Error;
    if (waiter === null || waiter === undefined) {
      this.#queue.push(failed ? { id, ok: false, error: outcome } : { id, ok: true, result: outcome });
      this.#wake?.();
    } else if (failed) waiter.reject(outcome);
    else waiter.resolve(outcome);
  }

  #onStatus(): void {
    if (this.#finished) {
      this.#channel.untrack(this);
      return;
    }
    // The server closed the call with OK: anything still pending was never answered.
    const unanswered = this.#pending.size;
    this.#finish(
      unanswered === 0
        ? undefined
        : new MalformedResponseError(
            `${this.#what}: the server ended the stream with ${unanswered} requests unanswered`,
          ),
      false,
    );
    this.#channel.untrack(this);
  }

  /** Ends the stream: pending requests get `error`; a failure is kept for the iterator to throw. */
  #finish(error: InferenceError | undefined, quiet: boolean): void {
    this.#finished = true;
    this.#quiet = quiet;
    this.#signal?.removeEventListener("abort", this.#onAbort);
    if (error !== undefined) {
      if (!quiet) this.#failure = error;
      for (const id of [...this.#pending.keys()]) this.#settle(id, error);
      if (this.#call !== undefined) this.#call.cancel();
      else this.#channel.untrack(this); // no call, so no status will come
    }
    this.#wake?.();
    this.#resolveDone();
  }

  // ---- reading -------------------------------------------------------------------------------------

  [Symbol.asyncIterator](): AsyncIterator<StreamResult> {
    return {
      next: async (): Promise<IteratorResult<StreamResult>> => {
        for (;;) {
          const item = this.#queue.shift();
          if (item !== undefined) return { value: item, done: false };
          if (this.#finished) {
            if (this.#failure !== undefined && !this.#quiet && !this.#failureThrown) {
              this.#failureThrown = true;
              throw this.#failure;
            }
            return { value: undefined, done: true };
          }
          await new Promise<void>((resolve) => (this.#wake = resolve));
          this.#wake = undefined;
        }
      },
      return: async (): Promise<IteratorResult<StreamResult>> => {
        this.cancel(new Error("the loop reading the stream ended"));
        return { value: undefined, done: true };
      },
    };
  }

  /** Half-closes and waits for the stream to be over. */
  async [Symbol.asyncDispose](): Promise<void> {
    this.end();
    await this.#done;
  }
}
