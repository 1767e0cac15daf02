/**
 * Test clients for the gRPC front end, on @grpc/grpc-js directly: a generic client built from
 * @tbench/proto's generated method tables (decoded messages), a raw client whose serializers are the
 * identity (bytes in, bytes out: what the fuzz test sends), and a raw HTTP/2 call that writes gRPC frames
 * by hand (compressed flags, garbage, truncated frames).
 */
import { connect } from "node:http2";
import * as grpcJs from "@grpc/grpc-js";
import { grpcInferenceServiceMethods } from "@tbench/proto";

interface Generated {
  encode(m: unknown): { finish(): Uint8Array };
  decode(b: Uint8Array): unknown;
}

// biome-ignore lint/suspicious/noExplicitAny: decoded messages are read field by field in assertions
export type Any = Record<string, any>;

/** No size ceiling either way (the server has none). */
export const UNLIMITED = { "grpc.max_receive_message_length": -1, "grpc.max_send_message_length": -1 };

const definition: Record<string, grpcJs.MethodDefinition<unknown, unknown>> = {};
for (const [name, m] of Object.entries(grpcInferenceServiceMethods)) {
  const req = m.requestType as unknown as Generated;
  const res = m.responseType as unknown as Generated;
  definition[name] = {
    path: m.path,
    requestStream: m.requestStream,
    responseStream: m.responseStream,
    requestSerialize: (v: unknown) => Buffer.from(req.encode(v).finish()),
    requestDeserialize: (b: Buffer) => req.decode(b),
    responseSerialize: (v: unknown) => Buffer.from(res.encode(v).finish()),
    responseDeserialize: (b: Buffer) => res.decode(b),
  };
}

const InferenceClient = grpcJs.makeGenericClientConstructor(definition, "GRPCInferenceService");

/** A GRPCInferenceService client on `address`, with `options` (compression, ...). */
export function createTestClient(address: string, options: grpcJs.ChannelOptions = {}): grpcJs.Client & Any {
  return new InferenceClient(address, grpcJs.credentials.createInsecure(), {
    ...UNLIMITED,
    ...options,
  }) as grpcJs.Client & Any;
}

/** Calls a unary method; resolves to the decoded response, rejects with the ServiceError. */
export function unary(
  client: Any,
  method: string,
  request: Any,
  options: grpcJs.CallOptions = {},
): Promise<Any> {
  return new Promise((resolve, reject) => {
    client[method](request, new grpcJs.Metadata(), options, (error: grpcJs.ServiceError | null, r: Any) =>
      error ? reject(error) : resolve(r),
    );
  });
}

/** The outcome of a call: OK with the response, or the status it ended with. */
export interface CallOutcome {
  readonly code: number;
  readonly details: string;
  readonly response?: Uint8Array;
}

/** A ModelInfer client sending and receiving raw bytes (identity serializers). */
export function createRawInferClient(address: string): {
  infer(bytes: Uint8Array, deadlineMs: number): Promise<CallOutcome>;
  close(): void;
} {
  const client = new grpcJs.Client(address, grpcJs.credentials.createInsecure(), UNLIMITED);
  const identity = (b: Buffer) => b;
  return {
    infer(bytes, deadlineMs) {
      return new Promise((resolve) => {
        client.makeUnaryRequest(
          grpcInferenceServiceMethods.ModelInfer.path,
          (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength),
          identity,
          bytes,
          new grpcJs.Metadata(),
          { deadline: Date.now() + deadlineMs },
          (error: grpcJs.ServiceError | null, response?: Buffer) =>
            resolve(
              error
                ? { code: error.code, details: error.details }
                : { code: 0, details: "", ...(response ? { response } : {}) },
            ),
        );
      });
    },
    close: () => client.close(),
  };
}

/** One gRPC length-prefixed message: flag byte, 4-byte big-endian length, payload. */
export function grpcFrame(
  payload: Uint8Array,
  compressed = false,
  declaredLength = payload.byteLength,
): Buffer {
  const frame = Buffer.alloc(5 + payload.byteLength);
  frame.writeUInt8(compressed ? 1 : 0, 0);
  frame.writeUInt32BE(declaredLength, 1);
  frame.set(payload, 5);
  return frame;
}

/** The result of a hand-written HTTP/2 gRPC call. */
export interface RawHttp2Result {
  readonly grpcStatus: number | undefined;
  readonly grpcMessage: string;
  /** Response messages, each with its compressed flag. */
  readonly messages: { compressed: boolean; payload: Buffer }[];
}

/** Sends `body` (already framed) to `path` over a fresh HTTP/2 connection and reads the whole answer. */
export function rawHttp2Call(
  address: string,
  path: string,
  body: Buffer,
  headers: Record<string, string> = {},
): Promise<RawHttp2Result> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://${address}`);
    session.on("error", reject);
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      ...headers,
    });
    const chunks: Buffer[] = [];
    let status: number | undefined;
    let message = "";
    const take = (h: Record<string, unknown>) => {
      if (h["grpc-status"] !== undefined) status = Number(h["grpc-status"]);
      if (h["grpc-message"] !== undefined) message = decodeURIComponent(String(h["grpc-message"]));
    };
    stream.on("response", take);
    stream.on("trailers", take);
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("error", reject);
    stream.on("close", () => {
      session.close();
      const all = Buffer.concat(chunks);
      const messages: RawHttp2Result["messages"] = [];
      for (let at = 0; at + 5 <= all.length; ) {
        const length = all.readUInt32BE(at + 1);
        messages.push({ compressed: all[at] === 1, payload: all.subarray(at + 5, at + 5 + length) });
        at += 5 + length;
      }
      resolve({ grpcStatus: status, grpcMessage: message, messages });
    });
    stream.end(body);
  });
}
