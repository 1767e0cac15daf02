/**
 * The instance queue between two real threads: entries arrive in order, a sleeping thread wakes for a
 * push, the counters wrap at 2^31 without losing or repeating an entry, and a full ring refuses a push
 * before writing anything.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { test } from "node:test";
import { Worker } from "node:worker_threads";
import { createInstanceQueue } from "./instance-queue.js";

/** A thread that takes `count` entries from the queue in `buffer` and posts them back, one by one. */
function echoThread(buffer: SharedArrayBuffer, count: number): Worker {
  const receiver = new URL("./instance-queue.ts", import.meta.url).href;
  const loaderApi = process.env["TBENCH_TS_LOADER_API"] ?? import.meta.resolve("tsx/esm/api");
  const source =
    `const { parentPort, workerData } = require("node:worker_threads");` +
    `import(${JSON.stringify(loaderApi)}).then(async (api) => { api.register?.();` +
    `const { instanceQueueReceiver } = await import(${JSON.stringify(receiver)});` +
    "const queue = instanceQueueReceiver(workerData.buffer);" +
    "parentPort.postMessage('ready');" +
    "for (let i = 0; i < workerData.count; i++) parentPort.postMessage(queue.next()); });";
  return new Worker(source, { eval: true, workerData: { buffer, count } });
}

/** The `count` entries `worker` echoes; fails (ending the thread) when they have not all come in 10 s. */
async function echoed(worker: Worker, count: number): Promise<number[]> {
  const got: number[] = [];
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      worker.on("message", (entry: number | string) => {
        if (typeof entry === "number") got.push(entry);
        if (got.length === count) resolve();
      });
      worker.once("error", reject);
      timer = setTimeout(
        () => reject(new Error(`the thread took ${got.length} of ${count} entries`)),
        10_000,
      );
    });
  } finally {
    clearTimeout(timer);
    await worker.terminate();
  }
  return got;
}

test("entries arrive in order, pushed while the thread sleeps and while it drains", {
  timeout: 20_000,
}, async () => {
  const queue = createInstanceQueue();
  const count = 2_000;
  const worker = echoThread(queue.buffer, count);
  const result = echoed(worker, count);
  await once(worker, "message"); // ready: from here it sleeps until the first push
  await new Promise((resolve) => setTimeout(resolve, 50));
  for (let sent = 0; sent < count; ) {
    while (sent < count && !queue.full()) queue.push(sent++ % 5 === 0 ? -1 : sent);
    await new Promise((resolve) => setImmediate(resolve));
  }
  const got = await result;
  assert.equal(got.length, count);
  assert.deepEqual(
    got,
    Array.from({ length: count }, (_, i) => (i % 5 === 0 ? -1 : i + 1)),
  );
});

test("the counters wrap past 2^31 without losing or repeating an entry", async () => {
  const queue = createInstanceQueue();
  // The queue's counters (tail, head) start 3 entries short of the int32 wrap.
  const counters = new Int32Array(queue.buffer);
  counters[0] = 2 ** 31 - 3;
  counters[1] = 2 ** 31 - 3;
  const worker = echoThread(queue.buffer, 20);
  const result = echoed(worker, 20);
  await once(worker, "message");
  for (let i = 0; i < 20; ) {
    while (i < 20 && !queue.full()) queue.push(i++);
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.deepEqual(
    await result,
    Array.from({ length: 20 }, (_, i) => i),
  );
});

test("a full ring refuses a push and keeps the entries it holds", () => {
  const queue = createInstanceQueue();
  for (let i = 0; i < 8; i++) queue.push(i);
  assert.equal(queue.full(), true);
  assert.throws(() => queue.push(99), /the instance's queue is full \(8 entries not yet taken\)/);
  const ring = new Int32Array(queue.buffer, 4 * Int32Array.BYTES_PER_ELEMENT, 8);
  assert.deepEqual([...ring], [0, 1, 2, 3, 4, 5, 6, 7]);
});
