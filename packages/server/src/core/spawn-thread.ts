/**
 * Starts one of this package's thread bodies (instance-worker, webgpu-executor-worker, http-thread-worker)
 * as a worker thread: the `.ts` file under tsx (tests, dev), the `.js` file in dist.
 */
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

const ownExtension = extname(fileURLToPath(import.meta.url));

/**
 * Node 20 does not apply the parent's `--import tsx` loader hooks to a worker's entry module, so from source
 * a tiny bootstrap registers a TypeScript loader inside the worker first, then imports the TypeScript body:
 * the test runner's own (scripts/testing/ts-loader names itself in TBENCH_TS_LOADER_API), else tsx.
 */
export function spawnThread(
  body:
    | "../instances/instance-worker"
    | "../instances/webgpu-executor-worker"
    | "../http/threads/http-thread-worker"
    | "../http/threads/json-decode-worker",
  workerData?: unknown,
): Worker {
  const url = new URL(`./${body}${ownExtension}`, import.meta.url);
  if (ownExtension !== ".ts") return new Worker(url, { workerData });
  const loaderApi = process.env["TBENCH_TS_LOADER_API"] ?? import.meta.resolve("tsx/esm/api");
  // A loader that can hand over the body as one JavaScript file (bundledEntry) spares the thread its hooks.
  const bootstrap =
    `import(${JSON.stringify(loaderApi)}).then(async (api) => { ` +
    `const bundled = await api.bundledEntry?.(${JSON.stringify(url.href)}); ` +
    `if (bundled !== undefined) return import(bundled); ` +
    `api.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}
