/**
 * The KServe v2 / Triton HTTP endpoint paths (docs/protocol in triton-inference-server/server). Names and
 * versions are percent-encoded; `base` is the client URL's path prefix ("" for none).
 */

function segment(value: string): string {
  return encodeURIComponent(value);
}

/** `/v2/models/{m}[/versions/{v}]`. */
export function modelPath(base: string, model: string, version?: string): string {
  const m = `${base}/v2/models/${segment(model)}`;
  return version === undefined || version === "" ? m : `${m}/versions/${segment(version)}`;
}

/** The endpoint paths of every call. */
export const paths = {
  live: (base: string) => `${base}/v2/health/live`,
  ready: (base: string) => `${base}/v2/health/ready`,
  server: (base: string) => `${base}/v2`,
  modelReady: (base: string, model: string, version?: string) => `${modelPath(base, model, version)}/ready`,
  modelConfig: (base: string, model: string, version?: string) => `${modelPath(base, model, version)}/config`,
  infer: (base: string, model: string, version?: string) => `${modelPath(base, model, version)}/infer`,
  stats: (base: string, model?: string, version?: string) =>
    model === undefined ? `${base}/v2/models/stats` : `${modelPath(base, model, version)}/stats`,
  index: (base: string) => `${base}/v2/repository/index`,
  load: (base: string, model: string) => `${base}/v2/repository/models/${segment(model)}/load`,
  unload: (base: string, model: string) => `${base}/v2/repository/models/${segment(model)}/unload`,
  trace: (base: string, model?: string) =>
    model === undefined ? `${base}/v2/trace/setting` : `${modelPath(base, model)}/trace/setting`,
  logging: (base: string) => `${base}/v2/logging`,
  shmStatus: (base: string, region?: string) =>
    region === undefined
      ? `${base}/v2/systemsharedmemory/status`
      : `${base}/v2/systemsharedmemory/region/${segment(region)}/status`,
  shmRegister: (base: string, region: string) =>
    `${base}/v2/systemsharedmemory/region/${segment(region)}/register`,
  shmUnregister: (base: string, region?: string) =>
    region === undefined
      ? `${base}/v2/systemsharedmemory/unregister`
      : `${base}/v2/systemsharedmemory/region/${segment(region)}/unregister`,
} as const;

/**
 * The protocol extension (by its server-metadata name) that an endpoint belongs to, or undefined for the
 * required API. A server without the extension answers such a path with a plain 404.
 */
export function extensionOf(base: string, path: string): string | undefined {
  const p = path.slice(base.length);
  if (p.endsWith("/trace/setting")) return "trace";
  if (p.startsWith("/v2/logging")) return "logging";
  if (p.startsWith("/v2/systemsharedmemory")) return "system_shared_memory";
  if (p.startsWith("/v2/repository")) return "model_repository";
  if (p.endsWith("/stats")) return "statistics";
  return undefined;
}
