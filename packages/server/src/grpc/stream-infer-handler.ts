/**
 * ModelStreamInfer, as Triton's non-decoupled stream handler (server src/grpc/stream_infer_handler.cc):
 * each request runs on its own and gets exactly one ModelStreamInferResponse carrying its id; an error goes
 * in `error_message` with `infer_response.id` set and the stream stays open. Answers are written in the
 * order the requests came, errors included (Triton queues each request for its answer and writes only the
 * front of that queue: GrpcStreamContext's EnqueueForResponse / WriteResponseIfReady), so a fast error or
 * a request batched early waits behind the answers of the requests sent before it. When the client half-closes,
 * the stream ends with OK once every request it sent is answered; when it goes away, what has not run is
 * cancelled and nothing more is written.
 *
 * `triton_grpc_error: true` in the stream's metadata (Triton's ExtractStateFromHeaders) changes one thing:
 * an error that comes back from a request already issued to the core (its execution failed, its queue
 * timeout expired) ends the stream with that error's gRPC status, once; every other request in flight on
 * the stream is cancelled and its answer dropped (IssueRequestCancellation). Errors found before the
 * request is issued (decoding, unknown model, validation, a full queue: what TRITONSERVER_ServerInferAsync
 * returns itself) are still answered in `error_message` there, and the stream stays open.
 *
 * A request to a decoupled model (Triton's decoupled stream handling) is answered by as many responses as
 * the model sends, each written as soon as it is made (not in request order), each with
 * `triton_final_response` saying whether it is the last; a final flag with no response becomes an empty
 * response (id, model, version) only when the request set `triton_enable_empty_final_response`.
 */
import { inference } from "@tbench/proto";
import { failedAfterIssue } from "../core/failed-after-issue.js";
import { grpcStatusOf, versionFromString } from "./grpc-status.js";
import { decodeInfer, encodeWithinSendBound, type InferContext, runInfer } from "./infer-handlers.js";
import { wantsEmptyFinalResponse } from "./infer-request-decoder.js";
import { encodeGrpcInferResponse } from "./infer-response-encoder.js";

type ModelInferRequest = inference.ModelInferRequest;
type StreamResponse = inference.ModelStreamInferResponse.$Properties;

/** The part of a grpc-js duplex call the stream handler uses. */
export interface StreamCall {
  readonly metadata: { get(key: string): readonly (string | Buffer)[] };
  on(event: "data", listener: (request: ModelInferRequest) => void): unknown;
  on(event: "end" | "cancelled", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  /** A response's properties, or its bytes already encoded (the front end's serializer passes them on). */
  write(response: StreamResponse | Buffer): unknown;
  end(): void;
  /** grpc-js ends a server stream with the status of an emitted error (ServerDuplexStreamImpl). */
  emit(event: "error", error: { code: number; details: string; message: string }): boolean;
}

/** The header that asks for Triton's gRPC-status error mode on a stream. */
export const TRITON_GRPC_ERROR_HEADER = "triton_grpc_error";

function grpcErrorMode(call: StreamCall): boolean {
  const values = call.metadata.get(TRITON_GRPC_ERROR_HEADER);
  return values.length > 0 && String(values[0]) === "true";
}

/** Serves one ModelStreamInfer call; resolves when the call is over. */
export function serveStream(context: InferContext, call: StreamCall): Promise<void> {
  const controller = new AbortController();
  const errorMode = grpcErrorMode(call);
  let pending = 0;
  let halfClosed = false;
  let over = false;
  return new Promise<void>((resolve) => {
    const finish = (): void => {
      if (over) return;
      over = true;
      resolve();
    };
    const maybeEnd = (): void => {
      if (halfClosed && pending === 0 && !over) {
        call.end();
        finish();
      }
    };
    // Answers in request order: each request holds a slot; a slot's answer is written once every slot
    // before it has been written.
    const slots: Array<{ response: StreamResponse | Buffer | undefined }> = [];
    const flush = (): void => {
      while (slots.length > 0 && slots[0]?.response !== undefined) {
        const { response } = slots.shift() as { response: StreamResponse | Buffer };
        if (!over) call.write(response);
      }
    };
    const endWithError = (error: unknown, request: ModelInferRequest): void => {
      if (over) return;
      const status = grpcStatusOf(error, request);
      finish();
      controller.abort(new Error("the stream ended with an error (triton_grpc_error)"));
      call.emit("error", { code: status.code, details: status.details, message: status.details });
    };
    call.on("data", (request: ModelInferRequest) => {
      if (over) return;
      pending++;
      const id = request.id;
      const slot: { response: StreamResponse | Buffer | undefined } = { response: undefined };
      slots.push(slot);
      const answer = (response: StreamResponse | Buffer): void => {
        slot.response = response;
        flush();
      };
      const fail = (error: unknown): void =>
        answer({ error_message: grpcStatusOf(error, request).details, infer_response: { id } });
      // A response over the send bound is answered as an error in the stream, which stays open.
      const answerWithinBound = (
        message: StreamResponse,
        response: inference.ModelInferResponse.$Properties,
      ) => {
        let bytes: Buffer;
        try {
          bytes = encodeWithinSendBound(context, inference.ModelStreamInferResponse, message, response);
        } catch (error) {
          fail(error);
          return;
        }
        answer(bytes);
      };
      const emptyFinal = wantsEmptyFinalResponse(request);
      if (isDecoupled(context, request)) {
        // Its answers do not wait for earlier requests' and later ones do not wait for them.
        slots.splice(slots.indexOf(slot), 1);
        flush();
        const done = (): void => {
          pending--;
          maybeEnd();
        };
        const write = (message: StreamResponse | Buffer): void => {
          if (!over) call.write(message);
        };
        const writeFailure = (error: unknown): void =>
          write({ error_message: grpcStatusOf(error, request).details, infer_response: { id } });
        let decoded: ReturnType<typeof decodeInfer>;
        try {
          decoded = decodeInfer(context, request, controller.signal);
        } catch (error) {
          writeFailure(error);
          done();
          return;
        }
        context.core.inferStream(decoded, {
          response(response, final) {
            const encoded = encodeGrpcInferResponse(response);
            const infer_response = {
              ...encoded,
              parameters: { ...encoded.parameters, triton_final_response: { bool_param: final } },
            };
            try {
              write(
                encodeWithinSendBound(
                  context,
                  inference.ModelStreamInferResponse,
                  { error_message: "", infer_response },
                  encoded,
                ),
              );
            } catch (error) {
              writeFailure(error);
            }
            if (final) done();
          },
          end() {
            if (emptyFinal) {
              write({
                error_message: "",
                infer_response: {
                  id,
                  model_name: request.model_name,
                  model_version: request.model_version,
                  parameters: { triton_final_response: { bool_param: true } },
                },
              });
            }
            done();
          },
          error(error) {
            if (errorMode && failedAfterIssue(error)) endWithError(error, request);
            else writeFailure(error);
            done();
          },
        });
        return;
      }
      runInfer(context, request, controller.signal)
        .then(
          (response) => {
            const infer_response = emptyFinal
              ? {
                  ...response,
                  parameters: { ...response.parameters, triton_final_response: { bool_param: true } },
                }
              : response;
            answerWithinBound({ error_message: "", infer_response }, response);
          },
          (error: unknown) => {
            // Marked by the scheduler that had accepted the request (core/failed-after-issue.ts).
            if (errorMode && failedAfterIssue(error)) endWithError(error, request);
            else fail(error);
          },
        )
        .finally(() => {
          pending--;
          maybeEnd();
        });
    });
    call.on("end", () => {
      halfClosed = true;
      maybeEnd();
    });
    const gone = (): void => {
      if (over) return;
      controller.abort(new Error("client cancelled the stream"));
      finish();
    };
    call.on("cancelled", gone);
    call.on("error", gone);
  });
}

/** Whether the request's model is decoupled; a lookup that fails is left to the ordinary path to report. */
function isDecoupled(context: InferContext, request: ModelInferRequest): boolean {
  try {
    return context.core.isDecoupled(request.model_name, versionFromString(request.model_version));
  } catch {
    return false;
  }
}
