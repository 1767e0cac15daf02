/** Small helpers that write complete HTTP answers (JSON, empty, error) with explicit Content-Length. */
import type { ServerResponse } from "node:http";
import { errorBody } from "./http-error.js";

/** Sends `body` (JSON text) with `status`. */
export function sendJson(res: ServerResponse, status: number, body: string): void {
  const bytes = Buffer.from(body, "utf8");
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": bytes.byteLength });
  res.end(bytes);
}

/** Sends an empty answer (health, ready, load and unload). */
export function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status, { "Content-Length": 0 });
  res.end();
}

/** Sends Triton's `{"error": "..."}` body. */
export function sendError(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, errorBody(message));
}
