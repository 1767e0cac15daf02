/**
 * Small node:http servers on 127.0.0.1:0 for transport tests (retries, timeouts, aborts, malformed answers,
 * compression). Each records the requests it saw, with their full bodies, and closes every socket on close().
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** A request as the fake server saw it. */
export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: Buffer;
}

/** Answers one request; `index` counts requests from 0. */
export type FakeHandler = (
  request: SeenRequest,
  response: ServerResponse,
  index: number,
) => void | Promise<void>;

/** A running fake server. */
export interface FakeServer {
  readonly url: string;
  readonly port: number;
  readonly requests: SeenRequest[];
  /** Requests whose client went away before an answer was sent. */
  readonly abandoned: SeenRequest[];
  close(): Promise<void>;
}

/** Starts a fake server that answers with `handler`. */
export async function startFakeServer(handler: FakeHandler): Promise<FakeServer> {
  const requests: SeenRequest[] = [];
  const abandoned: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of req) chunks.push(chunk as Buffer);
    } catch {
      return; // the client went away before sending the whole request (a cancel): nothing to answer
    }
    const seen: SeenRequest = {
      method: req.method ?? "",
      url: req.url ?? "",
      headers: req.headers,
      body: Buffer.concat(chunks),
    };
    const index = requests.length;
    requests.push(seen);
    res.on("close", () => {
      if (!res.writableFinished) abandoned.push(seen);
    });
    try {
      await handler(seen, res, index);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: String(error) }));
    }
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    abandoned,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Sends a JSON answer. */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

/** Sends a binary-extension infer answer: the JSON header, then the binary parts. */
export function sendBinary(
  response: ServerResponse,
  header: unknown,
  parts: readonly Uint8Array[],
  headers: Record<string, string> = {},
): void {
  const json = Buffer.from(JSON.stringify(header));
  const body = Buffer.concat([json, ...parts]);
  response.writeHead(200, {
    "content-type": "application/octet-stream",
    "inference-header-content-length": String(json.length),
    "content-length": String(body.length),
    ...headers,
  });
  response.end(body);
}
