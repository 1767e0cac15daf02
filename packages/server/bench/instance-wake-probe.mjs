// Probe (not a benchmark with targets): what the main thread pays to hand a batch to a busy instance thread,
// posting the slot's number (the server's way, src/instances/worker-instance.ts) against an Atomics queue in
// a SharedArrayBuffer that the thread drains before it sleeps (a batch sent during a run is a store; the
// main thread calls Atomics.notify only when the thread is asleep). Both answer by postMessage, since only a
// message wakes the main thread's event loop. The thread's "run" spins RUN_US µs behind setImmediate, as
// onnxruntime-node's run() does; two batches are in flight, as an instance holds. Main-thread CPU is read
// from /proc (Linux only), so the figure is the main thread's alone.
// Run: RUN_US=20 node packages/server/bench/instance-wake-probe.mjs post|atomics [batches]
import { readFileSync } from "node:fs";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";

const RUN_US = Number(process.env.RUN_US ?? 20);
const IN_FLIGHT = 2;
// ctrl[TAIL]: batches sent (main writes); ctrl[ASLEEP]: 1 while the thread waits; ring of slot numbers after.
const TAIL = 0;
const ASLEEP = 1;
const RING = 8;

const spin = (us) => {
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
};
const run = () =>
  new Promise((resolve) =>
    setImmediate(() => {
      spin(RUN_US);
      resolve();
    }),
  );

if (isMainThread) {
  const mode = process.argv[2] ?? "post";
  const batches = Number(process.argv[3] ?? 40_000);
  const ctrl = new Int32Array(new SharedArrayBuffer(16 * 4));
  const worker = new Worker(new URL(import.meta.url), { workerData: { mode, ctrl } });
  const mainThreadMs = () => {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in 10 ms ticks
  };
  let sent = 0;
  let answered = 0;
  let notifies = 0;
  const send = (slot) => {
    sent++;
    if (mode === "post") return worker.postMessage(slot);
    const tail = ctrl[TAIL];
    ctrl[RING + (tail & 7)] = slot;
    Atomics.store(ctrl, TAIL, tail + 1);
    if (Atomics.load(ctrl, ASLEEP) === 1) {
      notifies++;
      Atomics.notify(ctrl, TAIL);
    }
  };
  await new Promise((resolve) => worker.once("message", resolve));
  const wall0 = performance.now();
  const main0 = mainThreadMs();
  const process0 = process.cpuUsage();
  await new Promise((resolve) => {
    worker.on("message", (slot) => {
      answered++;
      if (sent < batches) send(slot);
      else if (answered === batches) resolve();
    });
    for (let slot = 0; slot < IN_FLIGHT; slot++) send(slot);
  });
  const perBatch = (ms) => ((ms * 1000) / batches).toFixed(1);
  const cpu = process.cpuUsage(process0);
  console.log(
    `${mode} RUN_US=${RUN_US}: ${perBatch(performance.now() - wall0)} µs a batch (wall), main thread ` +
      `${perBatch(mainThreadMs() - main0)} µs, process ${perBatch((cpu.user + cpu.system) / 1000)} µs, ` +
      `notifies ${notifies}`,
  );
  await worker.terminate();
} else {
  const { mode, ctrl } = workerData;
  parentPort.postMessage("ready");
  if (mode === "post") {
    parentPort.on("message", async (slot) => {
      await run();
      parentPort.postMessage(slot);
    });
  } else {
    let head = 0;
    for (;;) {
      if (Atomics.load(ctrl, TAIL) !== head) {
        const slot = ctrl[RING + (head & 7)];
        head++;
        await run();
        parentPort.postMessage(slot);
        continue;
      }
      Atomics.store(ctrl, ASLEEP, 1);
      if (Atomics.load(ctrl, TAIL) === head) Atomics.wait(ctrl, TAIL, head);
      Atomics.store(ctrl, ASLEEP, 0);
    }
  }
}
