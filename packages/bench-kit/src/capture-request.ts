// What tbench puts on the wire, captured rather than assumed: a recording proxy in front of the server
// keeps the first infer request that passes through it (method, path, headers as sent, body bytes) and
// forwards everything unchanged. The tbench benchmark runs tbench through it once, then gives autocannon
// and wrk exactly those bytes, so all three send the same request.
import { Agent, createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";

/** One HTTP request as a client sent it; headers leave out what each tool sets itself. */
export interface WireRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** Set by each tool per connection or per body, so never copied from the capture. */
const OWN_HEADERS = new Set(["host", "connection", "keep-alive", "content-length", "transfer-encoding"]);

/**
 * Starts a proxy to `serverUrl`, calls `drive` with the proxy's URL, and returns the first
 * `POST .../infer` request it saw. Rejects when `drive` sent none.
 */
export async function captureInferRequest(
  serverUrl: string,
  drive: (proxyUrl: string) => Promise<unknown>,
): Promise<WireRequest> {
  const target = new URL(serverUrl);
  const agent = new Agent({ keepAlive: true });
  let captured: WireRequest | undefined;
  const proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (captured === undefined && req.method === "POST" && req.url?.endsWith("/infer")) {
        const headers: Record<string, string> = {};
        for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
          const name = req.rawHeaders[i]!;
          if (!OWN_HEADERS.has(name.toLowerCase())) headers[name] = req.rawHeaders[i + 1]!;
        }
        captured = { method: req.method, path: req.url, headers, body };
      }
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
          agent,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on("error", (error) => {
        res.statusCode = 502;
        res.end(String(error));
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = proxy.address() as AddressInfo;
    await drive(`http://127.0.0.1:${port}`);
  } finally {
    proxy.closeAllConnections();
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
    agent.destroy();
  }
  if (captured === undefined) throw new Error(`no POST .../infer request reached the proxy to ${serverUrl}`);
  return captured;
}

/**
 * Sends the captured request once to `serverUrl` and checks the server answers 200: a request the server
 * refused would make every tool fast and the comparison void.
 */
export async function checkRequest(serverUrl: string, wire: WireRequest): Promise<number> {
  const response = await fetch(new URL(wire.path, serverUrl), {
    method: wire.method,
    headers: wire.headers,
    body: wire.body,
  });
  const answer = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) {
    throw new Error(
      `the captured request to ${wire.path} got HTTP ${response.status}, expected 200: ${answer.toString()}`,
    );
  }
  return answer.length;
}

/** The request for people: its JSON header (the binary extension's first part) and the binary bytes. */
export function describeRequest(wire: WireRequest): string {
  const headerLength = Number(
    Object.entries(wire.headers).find(([k]) => k.toLowerCase() === "inference-header-content-length")?.[1] ??
      wire.body.length,
  );
  const json = wire.body.subarray(0, headerLength).toString();
  const binary = wire.body.length - headerLength;
  return `${wire.method} ${wire.path}, ${wire.body.length} bytes: JSON header ${json} then ${binary} binary bytes`;
}
