/**
 * ModelInfer and ModelStreamInfer. Unary: decode, run through the core (aborted when the client cancels),
 * answer the encoded response or the error's status. Stream (Triton's non-decoupled stream handler): each
 * request runs on its own and gets exactly one ModelStreamInferResponse carrying its id; an error goes in
 * `error_message` with `infer_response.id` set and the stream stays open. When the client half-closes,
 * the stream ends once every request it sent is answered; when it goes away, what has not run is dropped.
 */
import type { inference } from "@tbench/proto";
import type { InferenceCore } from "../core/types.js";
import { grpcStatusOf } from "./grpc-status.js";
import { decodeGrpcInferRequest, wantsEmptyFinalResponse } from "./infer-request-decoder.js";
import { encodeGrpcInferResponse } from "./infer-response-encoder.js";

type ModelInferRequest = inference.ModelInferRequest;
type ModelInferResponse = inference.ModelInferResponse.$Properties;
type StreamResponse = inference.ModelStreamInferResponse.$Properties;

/** What the infer handlers need from the front end. */
export interface InferContext {
  readonly core: InferenceCore;
  readonly maxBytesTensorElements: number;
}

/** Runs one request; resolves to the response's properties, rejects with a ServerError (or other error). */
export async function runInfer(
  context: InferContext,
  request: ModelInferRequest,
  signal: AbortSignal,
): Promise<ModelInferResponse> {
  const decoded = decodeGrpcInferRequest(request, {
    maxBytesTensorElements: context.maxBytesTensorElements,
    signal,
  });
  return encodeGrpcInferResponse(await context.core.infer(decoded));
}

/** The part of a grpc-js duplex call the stream handler uses. */
export interface StreamCall {
  on(event: "data", listener: (request: ModelInferRequest) => void): unknown;
  on(event: "end" | "cancelled", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  write(response: StreamResponse): unknown;
  end(): void;
}

/** Serves one ModelStreamInfer call; resolves when the call is over. */
export function serveStream(context: InferContext, call: StreamCall): Promise<void> {
  const controller = new AbortController();
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
    const answer = (response: StreamResponse): void => {
      if (!over) call.write(response);
    };
    call.on("data", (request: ModelInferRequest) => {
      pending++;
      const id = request.id;
      const emptyFinal = wantsEmptyFinalResponse(request);
      runInfer(context, request, controller.signal)
        .then(
          (response) => {
            if (emptyFinal) {
              answer({
                error_message: "",
                infer_response: {
                  ...response,
                  parameters: { ...response.parameters, triton_final_response: { bool_param: true } },
                },
              });
            } else {
              answer({ error_message: "", infer_response: response });
            }
          },
          (error: unknown) => answer({ error_message: grpcStatusOf(error).details, infer_response: { id } }),
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
      controller.abort(new Error("client cancelled the stream"));
      finish();
    };
    call.on("cancelled", gone);
    call.on("error", gone);
  });
}
