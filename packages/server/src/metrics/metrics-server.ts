/**
 * The metrics endpoint: `GET /metrics` on its own port answers the Prometheus text exposition; other paths
 * answer 400 and other methods 405, as Triton's metrics server does. GPU families are added when an NVIDIA
 * GPU answers at startup.
 */
import { createServer } from "node:http";
import { listen } from "../core/listen.js";
import type { Logger } from "../core/logger.js";
import type { InferenceCore } from "../core/types.js";
import { type GpuQuery, probeGpuMetrics } from "./gpu-metrics.js";
import { createPrometheusMetrics, type PrometheusMetricsOptions } from "./prometheus-metrics.js";

/** Options of createMetricsServer. */
export interface MetricsServerOptions {
  readonly core: InferenceCore;
  /** 0 picks a free port. */
  readonly port: number;
  readonly address: string;
  readonly logger: Logger;
  /** Where GPU readings come from (default: nvidia-smi); tests pass a fake. */
  readonly gpuQuery?: GpuQuery;
  /** Which latency families to publish (`--metrics-config`); default: the counters only. */
  readonly latency?: Omit<PrometheusMetricsOptions, "gpus">;
}

/** A listening metrics endpoint. */
export interface MetricsServer {
  /** `http://address:port/metrics`. */
  readonly url: string;
  /** Stops listening and closes connections. Idempotent. */
  close(): Promise<void>;
}

/** Starts the metrics endpoint and resolves once it listens. */
export async function createMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  // GPU families exist only when a GPU answers now (Triton registers them only for the GPUs it finds).
  const gpus = await probeGpuMetrics(options.gpuQuery);
  const metrics = createPrometheusMetrics(options.core, { ...options.latency, gpus });
  const server = createServer((req, res) => {
    if (req.method !== "GET") {
      res.writeHead(405, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: "Method Not Allowed" }));
      return;
    }
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics") {
      res.writeHead(400, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": 0 });
      res.end();
      return;
    }
    metrics.render().then(
      (text) => {
        res.writeHead(200, { "Content-Type": metrics.contentType });
        res.end(text);
      },
      (error: unknown) => {
        options.logger.error(`metrics scrape failed: ${(error as Error).message}`);
        res.writeHead(500, { "Content-Type": "text/plain; charset=utf-8" });
        res.end();
      },
    );
  });
  const { port, baseUrl } = await listen(server, options.port, options.address);
  options.logger.info(`Started Metrics Service at ${options.address}:${port}`);
  let closed: Promise<void> | undefined;
  return {
    url: `${baseUrl}/metrics`,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
