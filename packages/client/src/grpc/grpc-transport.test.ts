// The gRPC transport against fake grpc-js servers on 127.0.0.1:0 (real sockets, real HTTP/2, answers made
// by hand): TLS and mTLS with certificates made in this process (testing/tls-certificates.ts), metadata and
// auth, retries, and stream answers a real server would not send (an unknown id, an error without an id, a
// stream ended with requests pending).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as grpcJs from "@grpc/grpc-js";
import { inference, grpcInferenceServiceMethods as M } from "@tbench/proto";
import {
  createTestCertificates,
  type TestCertificates,
  type TestPemName,
} from "../../../../scripts/testing/tls-certificates.js";
import {
  ConnectionError,
  InvalidArgumentError,
  MalformedResponseError,
  UnavailableError,
} from "../errors.js";
import type { InferInput } from "../tensor-types.js";
import { createGrpcClient } from "./grpc-client.js";
import type { GrpcClientOptions } from "./grpc-client-options.js";
import type { StreamResult } from "./grpc-inference-client.js";

const identity = (b: Buffer) => b;
const enc = <T>(type: { encode(m: T): { finish(): Uint8Array } }, m: T) =>
  Buffer.from(type.encode(m).finish());

type Handlers = Record<string, grpcJs.UntypedHandleCall>;

/** A grpc-js server with hand-written handlers (bytes in, bytes out) for the named methods. */
async function startFake(handlers: Handlers, credentials = grpcJs.ServerCredentials.createInsecure()) {
  const server = new grpcJs.Server();
  const definition: Record<string, grpcJs.MethodDefinition<Buffer, Buffer>> = {};
  for (const [name, m] of Object.entries(M)) {
    definition[name] = {
      path: m.path,
      requestStream: m.requestStream,
      responseStream: m.responseStream,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    };
  }
  const implementation: grpcJs.UntypedServiceImplementation = {};
  for (const name of Object.keys(M)) {
    implementation[name] =
      handlers[name] ??
      ((_call: unknown, callback: grpcJs.sendUnaryData<Buffer>) =>
        callback({ code: grpcJs.status.UNIMPLEMENTED, details: "not in this fake" }));
  }
  server.addService(definition as grpcJs.ServiceDefinition, implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", credentials, (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { address: `127.0.0.1:${port}`, port, close: () => server.forceShutdown() };
}

const live = (metadata: grpcJs.Metadata[] = []) => ({
  ServerLive: (call: grpcJs.ServerUnaryCall<Buffer, Buffer>, callback: grpcJs.sendUnaryData<Buffer>) => {
    metadata.push(call.metadata);
    callback(null, enc(inference.ServerLiveResponse, { live: true }));
  },
});

const inputs: InferInput[] = [{ name: "INPUT0", datatype: "FP32", shape: [1, 2], data: [1, 2] }];

describe("TLS and mTLS (certificates made in this process)", () => {
  let certs: TestCertificates;
  const pem = (name: TestPemName) => certs.pem(name);

  before(async () => {
    certs = await createTestCertificates({ serverDnsName: "inference.test" });
  });
  after(() => certs?.remove());

  const serverCredentials = (mtls: boolean) =>
    grpcJs.ServerCredentials.createSsl(
      mtls ? pem("ca.pem") : null,
      [{ private_key: pem("server.key"), cert_chain: pem("server.pem") }],
      mtls,
    );

  test("grpcs:// verifies the server against the CA; servername picks the certificate name", async () => {
    const fake = await startFake(live(), serverCredentials(false));
    const clients = [
      createGrpcClient({ url: `grpcs://${fake.address}`, tls: { ca: pem("ca.pem") } }),
      createGrpcClient({
        url: fake.address,
        tls: { ca: pem("ca.pem").toString(), servername: "inference.test" },
      }),
    ];
    const untrusted = createGrpcClient({
      url: `grpcs://${fake.address}`,
      tls: { ca: pem("other-ca.pem") },
      maxRetries: 0,
    });
    const plain = createGrpcClient({ url: fake.address, maxRetries: 0 });
    try {
      for (const c of clients) assert.equal(await c.isServerLive(), true);
      await assert.rejects(untrusted.isServerLive(), ConnectionError);
      await assert.rejects(plain.isServerLive(), ConnectionError);
    } finally {
      for (const c of [...clients, untrusted, plain]) await c.close();
      fake.close();
    }
  });

  test("mTLS: the client certificate is sent; without one the server refuses", async () => {
    const fake = await startFake(live(), serverCredentials(true));
    const withCert = createGrpcClient({
      url: `grpcs://${fake.address}`,
      tls: { ca: pem("ca.pem"), cert: pem("client.pem"), key: pem("client.key") },
    });
    const without = createGrpcClient({
      url: `grpcs://${fake.address}`,
      tls: { ca: pem("ca.pem") },
      maxRetries: 0,
    });
    try {
      assert.equal(await withCert.isServerLive(), true);
      await assert.rejects(without.isServerLive(), ConnectionError);
      assert.throws(
        () => createGrpcClient({ url: fake.address, tls: { cert: pem("client.pem") } }),
        (e: unknown) => e instanceof InvalidArgumentError && /both `cert` and `key`/.test(e.message),
      );
    } finally {
      await withCert.close();
      await without.close();
      fake.close();
    }
  });
});

describe("metadata, auth, channel options and retries", () => {
  test("client headers, bearer auth, per-call headers and an async auth hook arrive as metadata", async () => {
    const seen: grpcJs.Metadata[] = [];
    const fake = await startFake(live(seen));
    const options: GrpcClientOptions = {
      url: `grpc://${fake.address}`,
      headers: { "X-Team": "a" },
      auth: { type: "bearer", token: "t0k" },
      keepalive: { timeMs: 60_000, timeoutMs: 5000, permitWithoutCalls: false },
      channelOptions: { "grpc.primary_user_agent": "tbench-test" },
    };
    const c = createGrpcClient(options);
    const hooked = createGrpcClient({
      url: fake.address,
      auth: async (headers) => {
        await Promise.resolve();
        headers["authorization"] = "Bearer fresh";
      },
    });
    try {
      await c.isServerLive();
      await c.isServerLive({ headers: { "x-team": "b", "x-call": "1" } });
      await hooked.isServerLive();
      assert.deepEqual(seen[0]!.get("x-team"), ["a"]);
      assert.deepEqual(seen[0]!.get("authorization"), ["Bearer t0k"]);
      assert.match(String(seen[0]!.get("user-agent")[0]), /^tbench-test/);
      assert.deepEqual(seen[1]!.get("x-team"), ["b"]);
      assert.deepEqual(seen[1]!.get("x-call"), ["1"]);
      assert.deepEqual(seen[2]!.get("authorization"), ["Bearer fresh"]);
    } finally {
      await c.close();
      await hooked.close();
      fake.close();
    }
  });

  test("UNAVAILABLE is retried for idempotent calls, and for infer only when opted in", async () => {
    let lives = 0;
    let infers = 0;
    const fake = await startFake({
      ServerLive: (_call: unknown, callback: grpcJs.sendUnaryData<Buffer>) => {
        if (lives++ < 2) callback({ code: grpcJs.status.UNAVAILABLE, details: "Server is not ready" });
        else callback(null, enc(inference.ServerLiveResponse, { live: true }));
      },
      ModelInfer: (_call: unknown, callback: grpcJs.sendUnaryData<Buffer>) => {
        infers++;
        callback({ code: grpcJs.status.UNAVAILABLE, details: "Exceeds maximum queue size" });
      },
    });
    const c = createGrpcClient({
      url: fake.address,
      maxRetries: 2,
      backoff: { initialDelayMs: 1, maxDelayMs: 2 },
    });
    try {
      assert.equal(await c.isServerLive(), true);
      assert.equal(lives, 3);
      await assert.rejects(c.infer("m", { inputs }), UnavailableError);
      assert.equal(infers, 1, "infer is not retried unless asked");
      await assert.rejects(c.infer("m", { inputs }, { maxRetries: 2 }), UnavailableError);
      assert.equal(infers, 4);
    } finally {
      await c.close();
      fake.close();
    }
  });
});

describe("stream answers that cannot be matched end the stream with MalformedResponseError", () => {
  /** A stream server: request `index` gets `answer(request, index)`; null ends the call, undefined answers nothing. */
  const streamFake = (
    answer: (request: inference.ModelInferRequest, index: number) => Buffer | null | undefined,
  ) =>
    startFake({
      ModelStreamInfer: (call: grpcJs.ServerDuplexStream<Buffer, Buffer>) => {
        let index = 0;
        call.on("data", (bytes: Buffer) => {
          const reply = answer(inference.ModelInferRequest.decode(bytes), index++);
          if (reply === null) call.end();
          else if (reply !== undefined) call.write(reply);
        });
        call.on("end", () => call.end());
      },
    });
  const ok = (id: string) =>
    enc(inference.ModelStreamInferResponse, {
      infer_response: { model_name: "m", model_version: "1", id, outputs: [], raw_output_contents: [] },
    });

  // Request 0 is answered; request 1 gets the bad answer; request 2 is never answered.
  const cases: [string, Buffer | null, RegExp][] = [
    ["an answer for an id nobody sent", ok("stranger"), /"stranger", which no request waits for/],
    [
      "an error answer without an id",
      enc(inference.ModelStreamInferResponse, { error_message: "boom" }),
      /error answer \("boom"\) without an id/,
    ],
    [
      "the server ending the stream with requests pending",
      null,
      /ended the stream with 2 requests unanswered/,
    ],
  ];
  for (const [name, answer, message] of cases) {
    test(name, async () => {
      const fake = await streamFake((r, index) =>
        index === 0 ? ok(r.id) : index === 1 ? answer : undefined,
      );
      const c = createGrpcClient({ url: fake.address });
      try {
        const stream = c.stream("m");
        const first = await stream.infer({ inputs, id: "a" });
        assert.equal(first.id, "a");
        const second = stream.infer({ inputs, id: "b" }).catch((e: unknown) => e);
        const third = stream.write({ inputs, id: "c" });
        const seen: StreamResult[] = [];
        await assert.rejects(
          (async () => {
            for await (const r of stream) seen.push(r);
          })(),
          (e: unknown) => e instanceof MalformedResponseError && message.test(e.message),
        );
        const e2 = await second;
        assert.ok(e2 instanceof MalformedResponseError && message.test(e2.message), String(e2));
        assert.equal(seen.length, 1);
        assert.equal(seen[0]!.id, third);
        assert.ok(!seen[0]!.ok && seen[0]!.error instanceof MalformedResponseError);
      } finally {
        await c.close();
        fake.close();
      }
    });
  }
});
