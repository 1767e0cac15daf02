// Probe (not a benchmark with targets): what one batch's round trip to a worker thread costs, the way the
// server sends it (a run message with two 64-byte INT32 inputs, a result with one 16-value output), with
// the buffers transferred or copied. It is the measurement behind TRANSFER_MIN_BYTES
// (src/instances/worker-protocol.ts) and the hop's share of a small request's CPU.
// Run: node packages/server/bench/worker-hop-probe.mjs [transfer|copy] [round trips]
import { Worker } from "node:worker_threads";

const mode = process.argv[2] ?? "copy";
const trips = Number(process.argv[3] ?? 20_000);
const transfer = mode === "transfer";
const worker = new Worker(
  `const { parentPort } = require("node:worker_threads");
  parentPort.on("message", (m) => {
    const data = new Float32Array(16);
    const reply = { type: "result", id: m.id, outputs: [{ name: "OUTPUT0", ortType: "float32", dims: [1, 16], data }],
      inputNs: 0, inferNs: 0, outputNs: 0 };
    parentPort.postMessage(reply, m.transfer ? [data.buffer] : []);
  });`,
  { eval: true },
);
const waiting = new Map();
worker.on("message", (reply) => {
  waiting.get(reply.id)();
  waiting.delete(reply.id);
});
let nextId = 0;
let postMs = 0;
const trip = () =>
  new Promise((resolve) => {
    const id = nextId++;
    waiting.set(id, resolve);
    const a = new Int32Array(16);
    const b = new Int32Array(16);
    const inputs = [
      { name: "INPUT0", ortType: "int32", dims: [1, 16], data: a },
      { name: "INPUT1", ortType: "int32", dims: [1, 16], data: b },
    ];
    const t = performance.now();
    worker.postMessage(
      { type: "run", id, transfer, inputs, outputNames: ["OUTPUT0"] },
      transfer ? [a.buffer, b.buffer] : [],
    );
    postMs += performance.now() - t;
  });
for (let i = 0; i < 2000; i++) await trip();
postMs = 0;
const cpu = process.cpuUsage();
const start = performance.now();
for (let i = 0; i < trips; i++) await trip();
const wallUs = ((performance.now() - start) * 1000) / trips;
const used = process.cpuUsage(cpu);
console.log(
  JSON.stringify({
    mode,
    trips,
    roundTripUs: Number(wallUs.toFixed(1)),
    postMessageUs: Number(((postMs * 1000) / trips).toFixed(1)),
    processCpuUsPerTrip: Number(((used.user + used.system) / trips).toFixed(1)),
  }),
);
await worker.terminate();
