/**
 * Starts one of this package's thread bodies (instance-worker, webgpu-executor-worker, http-thread-worker)
 * as a worker thread: the `.ts` file under tsx (tests, dev), the `.js` file in dist.
 */
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

const ownExtension = extname(fileURLToPath(import.meta.url));

/**
 * Node 20 does not apply the parent's `--import tsx` loader hooks to a worker's entry module, so under tsx
 * a tiny bootstrap registers tsx inside the worker first, then imports the TypeScript body.
 */
export function spawnThread(
  body:
    | "instance-worker"
    | "webgpu-executor-worker"
    | "../http/http-thread-worker"
    | "../http/json-decode-worker",
  workerData?: unknown,
): Worker {
  const url = new URL(`./${body}${ownExtension}`, import.meta.url);
  if (ownExtension !== ".ts") return new Worker(url, { workerData });
  const tsxApi = import.meta.resolve("tsx/esm/api");
  const bootstrap =
    `import(${JSON.stringify(tsxApi)}).then((api) => { api.register(); ` +
    `return import(${JSON.stringify(url.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}
