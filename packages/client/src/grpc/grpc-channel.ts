/**
 * The client's one grpc-js Channel and the unary calls on it: metadata, the deadline (one absolute gRPC
 * deadline for all attempts, so `timeoutMs` and grpc-js's deadline are the same clock), the caller's
 * AbortSignal (cancels the call on the wire), retries by the shared policy, and the lifetime: close() lets
 * calls and streams in flight finish, then closes the channel; destroy() cancels them. Messages are
 * encoded and decoded by the caller, so grpc-js only moves bytes (identity serializers).
 */
import * as grpcJs from "@grpc/grpc-js";
import { AbortedError, ClientClosedError, type InferenceError } from "../errors.js";
import type { CallOptions } from "../inference-client.js";
import { isRetryable, retryDelayMs } from "../retry-policy.js";
import type { ResolvedGrpcClientOptions } from "./grpc-client-options.js";
import { errorFromGrpcFailure } from "./grpc-errors.js";

const identity = (bytes: Buffer): Buffer => bytes;

/** Something in flight that destroy() can end: a unary call or a stream. */
export interface Cancellable {
  /** Ends it now with `error` (rejecting what waits on it) and cancels it on the wire. */
  fail(error: InferenceError): void;
}

/** How one unary call is made. */
export interface UnarySpec {
  /** Full method path, e.g. `/inference.GRPCInferenceService/ModelInfer`. */
  readonly path: string;
  /** For messages: e.g. "ModelInfer simple". */
  readonly what: string;
  readonly idempotent: boolean;
  /** Retries when the call options do not say (0: one attempt). */
  readonly maxRetries: number;
  readonly requestId?: string | undefined;
}

/** One attempt in flight. */
class Attempt implements Cancellable {
  call: grpcJs.ClientUnaryCall | undefined;
  done = false;
  constructor(
    readonly resolve: (value: Buffer) => void,
    readonly reject: (error: InferenceError) => void,
  ) {}
  fail(error: InferenceError): void {
    if (this.done) return;
    this.done = true;
    this.reject(error);
    this.call?.cancel();
  }
}

/** The channel and the calls on it. */
export class GrpcChannel {
  readonly options: ResolvedGrpcClientOptions;
  readonly client: grpcJs.Client;
  /** Calls and streams in flight. */
  readonly #inflight = new Set<Cancellable>();
  #closing = false;
  #destroyedBy: InferenceError | undefined;
  #idle: (() => void) | undefined;
  #closed: Promise<void> | undefined;
  readonly #base: grpcJs.Metadata;

  constructor(options: ResolvedGrpcClientOptions) {
    this.options = options;
    this.client = new grpcJs.Client(options.target, options.credentials, { ...options.channelOptions });
    this.#base = new grpcJs.Metadata();
    for (const [k, v] of Object.entries(options.headers)) this.#base.set(k, v);
  }

  get closed(): boolean {
    return this.#closing;
  }

  /** The error a call started now fails with, or undefined when calls may start. */
  closedError(): InferenceError | undefined {
    if (!this.#closing) return undefined;
    return new ClientClosedError(
      "the client is closed",
      this.#destroyedBy === undefined ? undefined : { cause: this.#destroyedBy.cause },
    );
  }

  /** The metadata of one call: the client's, then the call's headers, then the auth hook's changes. */
  metadata(extra: Readonly<Record<string, string>> | undefined): grpcJs.Metadata | Promise<grpcJs.Metadata> {
    const hook = this.options.authHook;
    if (extra === undefined && hook === undefined) return this.#base.clone(); // grpc-js adds to it
    const headers: Record<string, string> = { ...this.options.headers };
    if (extra !== undefined) for (const [k, v] of Object.entries(extra)) headers[k.toLowerCase()] = v;
    const build = (): grpcJs.Metadata => {
      const metadata = new grpcJs.Metadata();
      for (const [k, v] of Object.entries(headers)) metadata.set(k, v);
      return metadata;
    };
    if (hook === undefined) return build();
    const done = hook(headers);
    return done instanceof Promise ? done.then(build) : build();
  }

  track(item: Cancellable): void {
    this.#inflight.add(item);
  }

  untrack(item: Cancellable): void {
    this.#inflight.delete(item);
    if (this.#inflight.size === 0) this.#idle?.();
  }

  /** Makes a unary call with `request` (encoded) and resolves with the answer's bytes. */
  unary(spec: UnarySpec, request: Buffer, options: CallOptions | undefined): Promise<Buffer> {
    const closed = this.closedError();
    if (closed !== undefined) return Promise.reject(closed);
    const timeoutMs = options?.timeoutMs ?? this.options.timeoutMs;
    const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
    const maxRetries = options?.maxRetries ?? spec.maxRetries;
    const metadata = this.metadata(options?.headers);
    if (maxRetries === 0 && !(metadata instanceof Promise)) {
      return this.#attempt(spec, request, metadata, deadline, timeoutMs, options?.signal);
    }
    return this.#withRetries(spec, request, metadata, deadline, timeoutMs, options?.signal, maxRetries);
  }

  async #withRetries(
    spec: UnarySpec,
    request: Buffer,
    metadata: grpcJs.Metadata | Promise<grpcJs.Metadata>,
    deadline: number | undefined,
    timeoutMs: number | undefined,
    signal: AbortSignal | undefined,
    maxRetries: number,
  ): Promise<Buffer> {
    const first = await metadata;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#attempt(
          spec,
          request,
          attempt === 0 ? first : first.clone(),
          deadline,
          timeoutMs,
          signal,
        );
      } catch (error) {
        const e = error as InferenceError;
        if (attempt >= maxRetries || !isRetryable(e, spec.idempotent) || this.#closing) throw e;
        const wait = retryDelayMs(attempt, this.options.backoff, e);
        if (deadline !== undefined && Date.now() + wait >= deadline) throw e;
        await sleep(wait, signal, spec.what);
      }
    }
  }

  #attempt(
    spec: UnarySpec,
    request: Buffer,
    metadata: grpcJs.Metadata,
    deadline: number | undefined,
    timeoutMs: number | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const closed = this.closedError();
      if (closed !== undefined) return reject(closed);
      if (signal?.aborted) return reject(new AbortedError(`${spec.what}: aborted`, { cause: signal.reason }));
      const attempt = new Attempt(resolve, reject);
      const onAbort = (): void =>
        attempt.fail(new AbortedError(`${spec.what}: aborted`, { cause: signal?.reason }));
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#inflight.add(attempt);
      attempt.call = this.client.makeUnaryRequest(
        spec.path,
        identity,
        identity,
        request,
        metadata,
        deadline === undefined ? {} : { deadline },
        (error, response) => {
          signal?.removeEventListener("abort", onAbort);
          this.untrack(attempt);
          if (attempt.done) return;
          attempt.done = true;
          if (error) {
            reject(errorFromGrpcFailure(error, { what: spec.what, timeoutMs, requestId: spec.requestId }));
          } else resolve(response!);
        },
      );
    });
  }

  /** Lets what is in flight finish, then closes the channel. Idempotent. */
  close(): Promise<void> {
    this.#closing = true;
    this.#closed ??= (async () => {
      if (this.#inflight.size > 0) await new Promise<void>((resolve) => (this.#idle = resolve));
      this.client.close();
    })();
    return this.#closed;
  }

  /** Ends everything in flight with ClientClosedError (cause `error`), then closes the channel. */
  destroy(error?: Error): Promise<void> {
    this.#closing = true;
    const closedError = new ClientClosedError(
      "the client was destroyed",
      error === undefined ? undefined : { cause: error },
    );
    this.#destroyedBy ??= closedError;
    for (const item of [...this.#inflight]) item.fail(closedError);
    this.#inflight.clear();
    this.#idle?.();
    return this.close();
  }
}

/** Waits `ms` between attempts; the caller's signal cuts the wait short with AbortedError. */
function sleep(ms: number, signal: AbortSignal | undefined, what: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError(`${what}: aborted`, { cause: signal.reason }));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortedError(`${what}: aborted`, { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
