/**
 * createSequence(): one stateful sequence (Triton's sequence batcher) over any InferenceClient, HTTP or
 * gRPC. Every request carries the sequence id; the first carries START, the one sent with end() carries
 * END. Requests go one at a time, each only after the previous one was answered (Triton's direct strategy
 * requires it), in the order infer() / end() were called.
 *
 * A sequence is not left half-open silently. When a request fails (an error answer, a transport failure, a
 * deadline, its own signal) or the sequence's signal aborts, the sequence is over for the caller, and if
 * the server may hold it, the helper releases it with one more request before the failed call settles:
 * END with the last request the server answered (as it is then), or, when none was answered yet, START and
 * END with the failed first request (a START ends an earlier sequence with the same id on Triton).
 * `state` then tells whether the server may still hold it: "ended" when the release was answered, "failed"
 * when it was not (the server drops it after the model's max_sequence_idle_microseconds); close() tries the
 * release again and rejects with its error. A request the client refused before sending (an
 * InvalidArgumentError without a status) or that never reached a connection does not count as sent.
 */
import { AbortedError, ConnectionError, InvalidArgumentError } from "./errors.js";
import type { InferResult } from "./infer-result.js";
import type { CallOptions, InferenceClient } from "./inference-client.js";
import { checkSequenceId, sequenceIdText } from "./sequence-parameters.js";
import type { InferRequest, SequenceId } from "./tensor-types.js";

/** A request of a sequence: an InferRequest without the sequence fields, which the sequence sets. */
export type SequenceRequest = Omit<InferRequest, "sequenceId" | "sequenceStart" | "sequenceEnd">;

/** Options of {@link createSequence}. */
export interface SequenceOptions {
  /** The sequence's correlation id: a safe integer >= 1, a bigint in 1..2^64-1 or 1 to 128 characters. */
  sequenceId: SequenceId;
  /**
   * Aborts the sequence: the request in flight rejects with AbortedError (`cause` = `signal.reason`), calls
   * still queued reject with it too, and the sequence is released as after a failed request.
   */
  signal?: AbortSignal;
  /** Deadline of each request, the release included, in ms; a call's own `timeoutMs` wins. */
  timeoutMs?: number;
  /** Headers (HTTP) or metadata (gRPC) of each request, the release included; a call's own win. */
  headers?: Record<string, string>;
}

/**
 * Where a sequence stands: "idle" (nothing sent), "open" (the server may hold it; more requests may
 * follow), "ended" (over; the server holds nothing: an END was answered, or nothing was ever sent), "failed"
 * (over after a failure or an abort whose release was not answered: the server may still hold it).
 */
export type SequenceState = "idle" | "open" | "ended" | "failed";

/** One stateful sequence of one model; see {@link createSequence}. */
export interface Sequence extends AsyncDisposable {
  /** The correlation id, as given. */
  readonly sequenceId: SequenceId;
  /** The model the requests go to. */
  readonly model: string;
  /** Where the sequence stands (see {@link SequenceState}). */
  readonly state: SequenceState;
  /** Sends the next request (START when it is the first) once the previous one was answered. */
  infer(request: SequenceRequest, options?: CallOptions): Promise<InferResult>;
  /** Sends the last request, with END (and START when it is the first); the sequence is then over. */
  end(request: SequenceRequest, options?: CallOptions): Promise<InferResult>;
  /**
   * Ends the sequence without a request of the caller's: after the calls already made, when the server may
   * hold it ("open", "failed"), sends the release END (see the module comment) and resolves once it was
   * answered; rejects with the release's error otherwise. Later calls are refused. `await using` calls it.
   */
  close(): Promise<void>;
}

const noop = (): void => {};

/** Whether a failed call's request certainly never reached the server. */
function neverSent(error: unknown): boolean {
  if (error instanceof ConnectionError) return !error.requestSent;
  // The client's own refusal (bad tensor, bad option): thrown before sending, so no status of a server.
  return (
    error instanceof InvalidArgumentError && error.status === undefined && error.grpcStatus === undefined
  );
}

class InferSequence implements Sequence {
  readonly sequenceId: SequenceId;
  readonly model: string;
  readonly #client: Pick<InferenceClient, "infer">;
  readonly #options: SequenceOptions;
  readonly #what: string;
  #state: SequenceState = "idle";
  /** No more requests of the caller's: ended, failed, closed or aborted. */
  #over = false;
  /** Why the sequence is over, when a request failed (the cause of later refusals). */
  #failure: unknown;
  /** Whether a request may have reached the server since the last answered END. */
  #mayHold = false;
  /** The last request the server answered, which the release sends again with END. */
  #lastAnswered: SequenceRequest | undefined;
  /** The first request, when it failed after it may have reached the server (released with START + END). */
  #firstFailed: SequenceRequest | undefined;
  /** The calls made so far, in order; each runs once the one before it settled. */
  #tail: Promise<void> = Promise.resolve();

  constructor(client: Pick<InferenceClient, "infer">, model: string, options: SequenceOptions) {
    if (typeof client?.infer !== "function") {
      throw new InvalidArgumentError("createSequence: client must be an InferenceClient (it has no infer())");
    }
    if (typeof model !== "string" || model === "") {
      throw new InvalidArgumentError("createSequence: model must be a non-empty string");
    }
    checkSequenceId(options?.sequenceId, "createSequence");
    this.#client = client;
    this.model = model;
    this.sequenceId = options.sequenceId;
    this.#options = options;
    this.#what = `sequence ${sequenceIdText(options.sequenceId)} of model '${model}'`;
    const signal = options.signal;
    if (signal?.aborted) {
      this.#over = true;
      this.#state = "ended";
    } else signal?.addEventListener("abort", this.#onAbort, { once: true });
  }

  get state(): SequenceState {
    return this.#state;
  }

  infer(request: SequenceRequest, options?: CallOptions): Promise<InferResult> {
    return this.#enqueue(() => this.#step(request, false, options));
  }

  end(request: SequenceRequest, options?: CallOptions): Promise<InferResult> {
    return this.#enqueue(() => this.#step(request, true, options));
  }

  close(): Promise<void> {
    return this.#enqueue(async () => {
      this.#finish();
      if (this.#mayHold) await this.#release();
      else this.#state = "ended";
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #enqueue<T>(run: () => Promise<T>): Promise<T> {
    const call = this.#tail.then(run);
    this.#tail = call.then(noop, noop);
    return call;
  }

  readonly #onAbort = (): void => {
    this.#over = true;
    // A request in flight fails through its signal and releases; an open sequence between requests is
    // released here, after the calls already made (which now reject with AbortedError).
    this.#enqueue(async () => {
      this.#finish();
      if (this.#state === "idle") this.#state = "ended";
      else if (this.#state === "open" && this.#mayHold) await this.#release();
    }).catch(noop); // a failed release leaves state "failed"; close() reports it
  };

  /** No more requests of the caller's; stops listening to the signal. */
  #finish(): void {
    this.#over = true;
    this.#options.signal?.removeEventListener("abort", this.#onAbort);
  }

  #overError(): Error {
    const signal = this.#options.signal;
    if (signal?.aborted) return new AbortedError(`${this.#what}: aborted`, { cause: signal.reason });
    if (this.#failure !== undefined) {
      const message = this.#failure instanceof Error ? this.#failure.message : String(this.#failure);
      return new InvalidArgumentError(`${this.#what} is over: a request of it failed (${message})`, {
        cause: this.#failure,
      });
    }
    return new InvalidArgumentError(`${this.#what} is over (${this.#state}); create a new sequence`);
  }

  #callOptions(options: CallOptions | undefined, withSignal: boolean): CallOptions {
    const own = this.#options;
    const merged: CallOptions = { ...options };
    if (merged.timeoutMs === undefined && own.timeoutMs !== undefined) merged.timeoutMs = own.timeoutMs;
    if (own.headers !== undefined) merged.headers = { ...own.headers, ...options?.headers };
    if (withSignal && own.signal !== undefined) {
      merged.signal =
        options?.signal === undefined ? own.signal : AbortSignal.any([own.signal, options.signal]);
    }
    return merged;
  }

  async #step(
    request: SequenceRequest,
    last: boolean,
    options: CallOptions | undefined,
  ): Promise<InferResult> {
    if (this.#over) throw this.#overError();
    const first = this.#state === "idle";
    const sent: InferRequest = {
      ...request,
      sequenceId: this.sequenceId,
      sequenceStart: first,
      sequenceEnd: last,
    };
    const callOptions = this.#callOptions(options, true);
    let handedOver = false;
    let result: InferResult;
    try {
      const signal = callOptions.signal;
      if (signal?.aborted) throw new AbortedError(`${this.#what}: aborted`, { cause: signal.reason });
      handedOver = true;
      result = await this.#client.infer(this.model, sent, callOptions);
    } catch (error) {
      this.#failure = error;
      this.#finish();
      if (handedOver && !neverSent(error)) {
        this.#mayHold = true;
        if (this.#lastAnswered === undefined) this.#firstFailed ??= request;
      }
      if (this.#mayHold) await this.#release().catch(noop);
      else this.#state = "ended";
      throw error;
    }
    this.#lastAnswered = request;
    this.#mayHold = !last;
    this.#state = last ? "ended" : "open";
    if (last) this.#finish();
    return result;
  }

  /**
   * Sends the release: END with the last answered request, or START + END with the failed first one.
   * "ended" once answered; "failed" and the release's error otherwise.
   */
  async #release(): Promise<void> {
    const base = this.#lastAnswered ?? this.#firstFailed;
    if (base === undefined) {
      this.#mayHold = false;
      this.#state = "ended";
      return;
    }
    const request: InferRequest = {
      ...base,
      sequenceId: this.sequenceId,
      sequenceStart: this.#lastAnswered === undefined,
      sequenceEnd: true,
    };
    try {
      await this.#client.infer(this.model, request, this.#callOptions(undefined, false));
    } catch (error) {
      this.#state = "failed";
      throw error;
    }
    this.#mayHold = false;
    this.#state = "ended";
  }
}

/**
 * A stateful sequence of `model` over `client` (any InferenceClient: only its `infer` is used). The id is
 * checked here (InvalidArgumentError). Requests are sent in call order, one at a time; see the module
 * comment for what a failure or an abort does.
 *
 * @example
 * await using seq = createSequence(client, "sequence_accumulator", { sequenceId: 42 });
 * await seq.infer({ inputs: [{ name: "INPUT", datatype: "INT32", shape: [1], data: [1] }] });
 * const sum = await seq.end({ inputs: [{ name: "INPUT", datatype: "INT32", shape: [1], data: [2] }] });
 */
export function createSequence(
  client: Pick<InferenceClient, "infer">,
  model: string,
  options: SequenceOptions,
): Sequence {
  return new InferSequence(client, model, options);
}
