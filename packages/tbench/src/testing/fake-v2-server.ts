// Test helper: a small node:http server speaking just enough of the KServe v2 HTTP protocol for tbench
// (model metadata and config, infer answered in JSON, readiness) for one tiny model, with an optional stall.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** Options of {@link startFakeV2Server}. */
export interface FakeV2ServerOptions {
  /** Hold the response to the infer request with this 1-based number for `stallMs`. */
  stallOnRequest?: number;
  stallMs?: number;
  /** Answer infer requests with this status instead of 200 (every `failEvery`-th request). */
  failStatus?: number;
  failEvery?: number;
  /** Answer every infer request this many milliseconds after it arrived (a server of fixed latency). */
  latencyMs?: number;
}

/** A running fake server. */
export interface FakeV2Server {
  url: string;
  /** Infer requests received so far. */
  readonly inferCount: number;
  close(): Promise<void>;
}

const MODEL = "tiny";
const metadata = {
  name: MODEL,
  versions: ["1"],
  platform: "onnxruntime_onnx",
  inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1] }],
  outputs: [{ name: "OUTPUT0", datatype: "FP32", shape: [1] }],
};
const config = { name: MODEL, platform: "onnxruntime_onnx", max_batch_size: 0, input: [], output: [] };
const inferBody = JSON.stringify({
  model_name: MODEL,
  model_version: "1",
  outputs: [{ name: "OUTPUT0", datatype: "FP32", shape: [1], data: [0] }],
});

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Starts the fake server on 127.0.0.1, port 0. */
export async function startFakeV2Server(options: FakeV2ServerOptions = {}): Promise<FakeV2Server> {
  let inferCount = 0;
  const timers = new Set<NodeJS.Timeout>();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? "/";
    if (req.method === "GET" && url === "/v2/health/ready") return send(res, 200, "");
    if (req.method === "GET" && url === `/v2/models/${MODEL}`) return send(res, 200, metadata);
    if (req.method === "GET" && url === `/v2/models/${MODEL}/config`) return send(res, 200, config);
    if (req.method === "POST" && url === `/v2/models/${MODEL}/infer`) {
      inferCount += 1;
      const n = inferCount;
      if (options.failStatus !== undefined && n % (options.failEvery ?? 1) === 0) {
        return send(res, options.failStatus, { error: "injected failure" });
      }
      if (n === options.stallOnRequest) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          send(res, 200, inferBody);
        }, options.stallMs ?? 500);
        timers.add(timer);
        return;
      }
      if (options.latencyMs !== undefined) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          send(res, 200, inferBody);
        }, options.latencyMs);
        timers.add(timer);
        return;
      }
      return send(res, 200, inferBody);
    }
    return send(res, 404, { error: `unknown path ${url}` });
  };
  const server = createServer((req, res) => {
    // Read (and drop) the whole request body before answering, as a real server does.
    req.on("data", () => {});
    req.on("end", () => handle(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get inferCount() {
      return inferCount;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
