/**
 * tbench-server's gRPC front end: inference.GRPCInferenceService and grpc.health.v1.Health on
 * @grpc/grpc-js, with the serializers protobufjs generated in @tbench/proto (no runtime .proto loading).
 * Like http/, it only decodes and encodes; the InferenceCore does the rest. Message sizes are bounded
 * both ways (--grpc-max-receive-message-size, --grpc-max-send-message-size, 128 MiB by default; Triton sets
 * INT32_MAX): grpc-js refuses a larger request from its length prefix, before buffering it, and an infer
 * response is measured once encoded and refused naming its model. Requests compressed with gzip or
 * deflate are accepted (grpc-js decompresses them, within the same bound).
 *
 * close() is Triton's graceful stop (GracefulStop: Shutdown, DisableNewConnections, wait up to
 * --exit-timeout-secs): no new calls or connections; an infer request that still arrives, on an open
 * stream or an existing connection, is refused with UNAVAILABLE "GRPC server is shutting down and has
 * stopped accepting new requests." (Triton's words); in-flight unary calls and every request already sent
 * on a stream are answered; a stream ends when its client half-closes it. What is still open after the
 * grace period (closeGraceMs, default 30 s as Triton's exit timeout and the HTTP side's) is cancelled.
 * destroy() cancels everything now.
 */
import * as grpcJs from "@grpc/grpc-js";
import { grpcInferenceServiceMethods, healthServiceMethods } from "@tbench/proto";
import { Cancellation, type CancelSignal } from "../core/cancel-signal.js";
import { createSystemClock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { RestrictedApis } from "../core/restricted-api.js";
import { createSummarizingLog } from "../core/summarizing-log.js";
import type { InferenceCore } from "../core/types.js";
import { API_HANDLERS, healthCheck } from "./api-handlers.js";
import { type GrpcServerSettings, grpcChannelOptions, ignoredGrpcSettings } from "./grpc-server-settings.js";
import { grpcStatusOf } from "./grpc-status.js";
import { type GrpcTlsOptions, serverCredentials } from "./grpc-tls.js";
import { type InferContext, runUnaryInfer } from "./infer-handlers.js";
import { createProtocolGuard, type RpcName } from "./restricted-protocols.js";
import { type StreamCall, serveStream } from "./stream-infer-handler.js";

/** Options of createGrpcFrontEnd. */
export interface GrpcFrontEndOptions {
  readonly core: InferenceCore;
  /** 0 picks a free port. */
  readonly port: number;
  /** Default 127.0.0.1. */
  readonly address?: string;
  readonly logger: Logger;
  /** Most elements one BYTES input may have (--max-bytes-tensor-elements). */
  readonly maxBytesTensorElements: number;
  /** Keepalive, connection age and response compression under Triton's names (its defaults otherwise). */
  readonly settings?: GrpcServerSettings;
  /** Extra grpc-js server options; they win over `settings`. */
  readonly channelOptions?: grpcJs.ChannelOptions;
  /** How long close() waits for open calls and streams before cancelling them. Default 30000. */
  readonly closeGraceMs?: number;
  /** `--grpc-restricted-protocol`: RPC groups that need `triton-grpc-protocol-<key>` metadata. */
  readonly restrictedProtocols?: RestrictedApis;
  /** TLS of the endpoint (`--grpc-use-ssl*`); plaintext when absent. */
  readonly tls?: GrpcTlsOptions;
}

/** Codes of failures on the server's side, logged as errors (the others are the client's). */
const LOGGED_CODES = new Set<number>([
  grpcJs.status.INTERNAL,
  grpcJs.status.UNKNOWN,
  grpcJs.status.UNIMPLEMENTED,
]);

/** Default grace period of close(): Triton's --exit-timeout-secs default (30 s), as on the HTTP side. */
export const DEFAULT_GRPC_CLOSE_GRACE_MS = 30_000;

/** A listening gRPC front end. */
export interface GrpcFrontEnd {
  /** host:port it listens on (the port actually bound). */
  readonly address: string;
  readonly port: number;
  /**
   * Stops accepting calls; resolves when in-flight calls and open streams have finished, or when the grace
   * period is over and what remained was cancelled. Idempotent.
   */
  close(): Promise<void>;
  /** Cancels every call and closes every connection now. */
  destroy(): void;
  [Symbol.asyncDispose](): Promise<void>;
}

interface GeneratedType<T> {
  encode(message: T): { finish(): Uint8Array };
  decode(bytes: Uint8Array): T;
}

interface MethodTable {
  readonly path: string;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
  readonly requestType: unknown;
  readonly responseType: unknown;
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A grpc-js service definition from one of @tbench/proto's generated method tables. */
function serviceDefinition(table: Readonly<Record<string, MethodTable>>): grpcJs.ServiceDefinition {
  const definition: Record<string, grpcJs.MethodDefinition<unknown, unknown>> = {};
  for (const [name, method] of Object.entries(table)) {
    const requestType = method.requestType as GeneratedType<unknown>;
    const responseType = method.responseType as GeneratedType<unknown>;
    definition[name] = {
      path: method.path,
      requestStream: method.requestStream,
      responseStream: method.responseStream,
      requestSerialize: (value) => toBuffer(requestType.encode(value).finish()),
      requestDeserialize: (bytes) => requestType.decode(bytes),
      // An infer response arrives encoded already (its size was checked against the send bound).
      responseSerialize: (value) =>
        Buffer.isBuffer(value) ? value : toBuffer(responseType.encode(value).finish()),
      responseDeserialize: (bytes) => responseType.decode(bytes),
      originalName: name,
    };
  }
  return definition as grpcJs.ServiceDefinition;
}

type UnaryCall = grpcJs.ServerUnaryCall<unknown, unknown>;
type Callback = grpcJs.sendUnaryData<unknown>;

/** Starts the gRPC front end on `address:port`; resolves once it listens. */
export async function createGrpcFrontEnd(options: GrpcFrontEndOptions): Promise<GrpcFrontEnd> {
  const { core, logger } = options;
  const settings = options.settings ?? {};
  // Checked before anything is started: a bad certificate fails startup with its name.
  const credentials = serverCredentials(options.tls);
  const channelOptions: grpcJs.ChannelOptions = {
    ...grpcChannelOptions(settings),
    ...options.channelOptions,
  };
  const server = new grpcJs.Server(channelOptions);
  for (const ignored of ignoredGrpcSettings(settings))
    logger.warn(`gRPC: ${ignored} is accepted but has no effect (@grpc/grpc-js does not support it)`);
  let accepting = true;
  const context: InferContext = {
    core,
    maxBytesTensorElements: options.maxBytesTensorElements,
    maxSendMessageBytes: channelOptions["grpc.max_send_message_length"] ?? -1,
    accepting: () => accepting,
  };
  const inFlight = new Set<Cancellation>();
  // Server-side failures (as HTTP logs its 500s), bounded against a client repeating one (summarizing-log.ts).
  const errors = createSummarizingLog({
    write: (line) => logger.error(line),
    clock: createSystemClock(),
    summary: (count, period, groups) =>
      `${count} more gRPC error${count === 1 ? "" : "s"} in the last ${period}, not written one by one: ${groups}`,
  });

  const guard = createProtocolGuard(options.restrictedProtocols ?? {});

  /** Wraps a handler that returns the response (or throws) into a grpc-js unary handler. */
  const unary =
    (method: RpcName, serve: (request: unknown, signal: CancelSignal) => unknown) =>
    (call: UnaryCall, callback: Callback): void => {
      // Triton answers a shutting-down server's infer before its restriction (infer_handler.cc).
      const refused = method === "ModelInfer" && !accepting ? undefined : guard(method, call.metadata);
      if (refused !== undefined) {
        callback({ code: refused.code, details: refused.details, name: "", message: refused.details });
        return;
      }
      // A Cancellation, not an AbortController: Node 20 takes ~16 µs to make one (core/cancel-signal.ts).
      const cancellation = new Cancellation();
      inFlight.add(cancellation);
      call.on("cancelled", () => cancellation.abort());
      Promise.resolve()
        .then(() => serve(call.request, cancellation))
        .then(
          (response) => callback(null, response),
          (error: unknown) => {
            const status = grpcStatusOf(error, call.request);
            if (LOGGED_CODES.has(status.code)) errors.record(`gRPC ${method}: ${status.details}`);
            callback({ code: status.code, details: status.details, name: "", message: status.details });
          },
        )
        .finally(() => inFlight.delete(cancellation));
    };

  const implementation: grpcJs.UntypedServiceImplementation = {};
  for (const name of Object.keys(API_HANDLERS) as (keyof typeof API_HANDLERS)[]) {
    const handler = API_HANDLERS[name] as (c: InferenceCore, r: unknown) => unknown;
    implementation[name] = unary(name, (request) => handler(core, request));
  }
  implementation["ModelInfer"] = unary("ModelInfer", (request, signal) =>
    runUnaryInfer(context, request as Parameters<typeof runUnaryInfer>[1], signal),
  );
  // destroy() cancels open streams through grpc-js (forceShutdown), which aborts what they have queued.
  implementation["ModelStreamInfer"] = (call: grpcJs.ServerDuplexStream<unknown, unknown>) => {
    // A restricted stream is refused as it opens, before any request is read (stream_infer_handler.cc).
    const refused = guard("ModelStreamInfer", call.metadata);
    if (refused !== undefined) {
      call.emit("error", { code: refused.code, details: refused.details, message: refused.details });
      return;
    }
    void serveStream(context, call as unknown as StreamCall);
  };
  server.addService(serviceDefinition(grpcInferenceServiceMethods), implementation);
  server.addService(serviceDefinition({ Check: healthServiceMethods.Check }), {
    Check: unary("Check", () => healthCheck(core)),
  });

  const host = options.address ?? "127.0.0.1";
  const target = host.includes(":") ? `[${host}]:${options.port}` : `${host}:${options.port}`;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(target, credentials, (error, bound) => {
      if (error) reject(error);
      else resolve(bound);
    });
  });
  const address = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  logger.info(
    `Started GRPCInferenceService at ${address}` +
      (options.tls === undefined
        ? ""
        : options.tls.mutual
          ? " (TLS, client certificates required)"
          : " (TLS)"),
  );

  let closed: Promise<void> | undefined;
  const destroy = (): void => {
    errors.close();
    for (const cancellation of inFlight) cancellation.abort();
    server.forceShutdown();
  };
  const graceMs = options.closeGraceMs ?? DEFAULT_GRPC_CLOSE_GRACE_MS;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      accepting = false;
      const timer = setTimeout(() => {
        logger.warn(`gRPC: calls still open ${graceMs} ms after shutdown began are cancelled`);
        destroy();
        resolve();
      }, graceMs);
      timer.unref();
      server.tryShutdown(() => {
        clearTimeout(timer);
        errors.close();
        resolve();
      });
    });
    return closed;
  };
  return { address, port, close, destroy, [Symbol.asyncDispose]: close };
}
