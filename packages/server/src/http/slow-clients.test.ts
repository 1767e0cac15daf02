/**
 * Slow clients against the real front end and core (issue 14): headers that never end and a body that
 * stops both answer 408 with a JSON error body at the configured limits and close the connection; a
 * client that never reads a large answer is cut after the send timeout, and while it is not reading, what
 * the server holds in its sockets stays under one send slice. The limit each test waits for is small
 * (hundreds of ms) so the tests are quick; every other limit is a minute, so a loaded machine cannot trip
 * it. They assert what happens, never how long it took.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { silentLogger } from "../core/logger.js";
import type { InferenceCore } from "../core/types.js";
import { createInferenceCore } from "../lifecycle/create-inference-core.js";
import { identityFp32Body, rawRequest } from "../testing/raw-http-client.js";
import { createRecordingLogger } from "../testing/test-fixtures.js";
import { createHttpFrontEnd, type HttpFrontEnd } from "./http-server.js";
import { SEND_SLICE_BYTES } from "./response-writer.js";

const REPOSITORY = new URL("../../../../examples/models", import.meta.url).pathname;

/**
 * The most one loopback connection's kernel buffers can take in before a sender's writes back up: the
 * sender's largest send buffer plus the receiver's largest receive buffer (Linux: the third figure of
 * tcp_wmem and tcp_rmem; the kernel autotunes up to these and no further). Elsewhere 64 MiB, above macOS's
 * default socket buffer limit.
 */
function kernelBufferLimitBytes(): number {
  try {
    const max = (file: string) => Number(readFileSync(file, "utf8").trim().split(/\s+/)[2]);
    const total = max("/proc/sys/net/ipv4/tcp_wmem") + max("/proc/sys/net/ipv4/tcp_rmem");
    if (Number.isFinite(total) && total > 0) return total;
  } catch {}
  return 64 * 1024 * 1024;
}
// An FP32 tensor each way, larger than the kernel can buffer (plus 4 MiB), so an answer that is not read
// must back up into the server whatever this machine's socket buffer settings are.
const ELEMENTS = Math.ceil((kernelBufferLimitBytes() + 4 * 1024 * 1024) / 4);

let core: InferenceCore & { close(): Promise<void> };
const LONG_MS = 60_000;
const frontEnds: HttpFrontEnd[] = [];
const logger = createRecordingLogger();

/** A front end on the shared core with the given timeouts (each a minute unless given). */
async function frontEnd(timeouts: {
  headerTimeoutMs?: number;
  requestTimeoutMs?: number;
  sendTimeoutMs?: number;
}): Promise<HttpFrontEnd> {
  const http = await createHttpFrontEnd({
    core,
    port: 0,
    address: "127.0.0.1",
    maxInputSize: ELEMENTS * 4 + 1024 * 1024,
    logger,
    headerTimeoutMs: LONG_MS,
    requestTimeoutMs: LONG_MS,
    sendTimeoutMs: LONG_MS,
    ...timeouts,
  });
  frontEnds.push(http);
  return http;
}

before(async () => {
  core = await createInferenceCore({
    modelRepository: REPOSITORY,
    modelControlMode: "explicit",
    loadModels: ["identity_fp32"],
    logger: silentLogger,
  });
});
after(async () => {
  for (const http of frontEnds) await http.close();
  await core.close();
});

function open(http: HttpFrontEnd): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(http.port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Everything the server sends until it closes the connection. */
function readToClose(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => {});
    socket.once("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
  });
}

function parseAnswer(text: string): { statusLine: string; body: unknown } {
  const end = text.indexOf("\r\n\r\n");
  return { statusLine: text.slice(0, text.indexOf("\r\n")), body: JSON.parse(text.slice(end + 4)) };
}

describe("slow clients", { timeout: 60_000 }, () => {
  test("headers that never end: 408 with a JSON error, connection closed", async () => {
    const socket = await open(await frontEnd({ headerTimeoutMs: 200 }));
    const answer = readToClose(socket);
    socket.write("GET /v2/health/ready HTTP/1.1\r\nHost: x\r\n");
    const { statusLine, body } = parseAnswer(await answer);
    assert.equal(statusLine, "HTTP/1.1 408 Request Timeout");
    assert.deepEqual(body, {
      error: "request headers not received within 200 ms (--http-header-timeout-ms)",
    });
  });

  test("a body that stops arriving: 408 with a JSON error, connection closed", async () => {
    const socket = await open(await frontEnd({ requestTimeoutMs: 400 }));
    const answer = readToClose(socket);
    socket.write(
      "POST /v2/models/identity_fp32/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" + '{"inputs":',
    );
    const { statusLine, body } = parseAnswer(await answer);
    assert.equal(statusLine, "HTTP/1.1 408 Request Timeout");
    assert.deepEqual(body, { error: "request not received whole within 400 ms (--http-request-timeout-ms)" });
  });

  test("a client that never reads a large answer is cut, holding at most a slice in the server", async () => {
    const http = await frontEnd({ sendTimeoutMs: 200 });
    const socket = await open(http);
    socket.pause(); // never reads: the answer backs up into the kernel, then into the server
    let closed = false;
    socket.once("close", () => {
      closed = true;
    });
    const { body, headerLength } = identityFp32Body(ELEMENTS, 0.5);
    socket.write(
      `POST /v2/models/identity_fp32/infer HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.byteLength}\r\n` +
        `Inference-Header-Content-Length: ${headerLength}\r\n\r\n`,
    );
    socket.write(body);
    let held = 0;
    const cut = () => logger.lines.some((line) => line.includes("connection cut"));
    while (!cut()) {
      assert.ok(!closed, `the connection closed before the send timeout cut it: ${logger.lines.join("; ")}`);
      held = Math.max(held, http.pendingResponseBytes());
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const line = logger.lines.find((line) => line.includes("connection cut"))!;
    const unsent = line.match(
      /^V HTTP POST \/v2\/models\/identity_fp32\/infer: connection cut, the client read nothing for 200 ms \(--http-send-timeout-ms\) with (\d+) bytes of the answer unsent$/,
    );
    assert.ok(unsent, line);
    // The answer is larger than the kernel can buffer, so part of it was still in the server when cut; the
    // samples above (an upper bound holds whenever they were taken) show how little of it the server held.
    assert.ok(Number(unsent[1]) > 0, "the answer never backed up into the server");
    assert.ok(held <= SEND_SLICE_BYTES + 64 * 1024, `the server held ${held} bytes for a client not reading`);
    // Reading now finds what the kernel held, then the end: never the whole answer.
    const received = readToClose(socket);
    socket.resume();
    assert.ok((await received).length < ELEMENTS * 4);
    assert.equal(http.pendingResponseBytes(), 0);
  });

  test("a client that reads gets the whole large answer, slice by slice", async () => {
    const { body, headerLength } = identityFp32Body(ELEMENTS, 0.5);
    const http = await frontEnd({});
    const res = await rawRequest(http.url, "/v2/models/identity_fp32/infer", {
      method: "POST",
      headers: { "Inference-Header-Content-Length": headerLength },
      body,
    });
    assert.equal(res.status, 200);
    const jsonLength = Number(res.headers["inference-header-content-length"]);
    const out = new Float32Array(new Uint8Array(res.body.subarray(jsonLength)).buffer);
    assert.equal(out.length, ELEMENTS);
    assert.ok(out.every((v) => v === 0.5));
  });
});
