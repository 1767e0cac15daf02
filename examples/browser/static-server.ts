/**
 * A small static file server for the built page: GET and HEAD of the files directly in one folder, with
 * their content types; any other path (subfolders, `..`, encoded slashes) is 404, any other method 405.
 * `close()` ends it, open connections included.
 */
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".map": "application/json",
};

/** A running static server. */
export interface StaticServer {
  /** `http://host:port`, the origin of the pages it serves. */
  readonly origin: string;
  close(): Promise<void>;
}

/** Serves `dir`'s files on `host:port` (port 0: a free one). */
export async function serveStatic(dir: string, port = 0, host = "127.0.0.1"): Promise<StaticServer> {
  const server = createServer((req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD" }).end();
      return;
    }
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const name = path === "/" ? "index.html" : path.slice(1);
    const type = CONTENT_TYPES[name.slice(name.lastIndexOf("."))];
    // One name, no folders: nothing outside `dir` can be named.
    if (type === undefined || !/^[\w.-]+$/.test(name) || name.startsWith(".")) {
      res.writeHead(404).end();
      return;
    }
    readFile(join(dir, name)).then(
      (body) => {
        res.writeHead(200, {
          "Content-Type": type,
          "Content-Length": body.length,
          "Cache-Control": "no-store",
        });
        res.end(req.method === "HEAD" ? undefined : body);
      },
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    origin: `http://${host.includes(":") ? `[${host}]` : host}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
