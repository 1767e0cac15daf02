// Child-process entry of the tbench benchmark: raw undici, the transport tbench's client sends on, as a
// load generator. `Pool.dispatch()` on `connections` keep-alive connections, one request in flight per
// connection, with a handler that keeps nothing and waits for the end: the floor under any undici-based
// sender, so tbench / undici is what tbench adds over its own transport. Reads a JSON spec
// {url, method, headers, bodyBase64, connections, warmupS, durationS} from the file named on the command
// line, runs a warm-up and then the measured run, and prints its figures as one JSON line.
import { readFile } from "node:fs/promises";
import { Pool } from "undici";

const spec = JSON.parse(await readFile(process.argv[2], "utf8"));
const url = new URL(spec.url);
const pool = new Pool(url.origin, { connections: spec.connections });
const options = {
  origin: url.origin,
  method: spec.method,
  path: `${url.pathname}${url.search}`,
  headers: spec.headers,
  body: Buffer.from(spec.bodyBase64, "base64"),
};
let measuring = false;
let stop = false;
let errors = 0;
const latenciesMs = [];

function once() {
  return new Promise((resolve) => {
    const startMs = performance.now();
    let status = 0;
    pool.dispatch(options, {
      onConnect() {},
      onHeaders(statusCode) {
        status = statusCode;
        return true;
      },
      onData() {
        return true;
      },
      onComplete() {
        if (measuring) {
          if (status === 200) latenciesMs.push(performance.now() - startMs);
          else errors += 1;
        }
        resolve();
      },
      onError() {
        if (measuring) errors += 1;
        resolve();
      },
    });
  });
}

async function loop() {
  while (!stop) await once();
}

const sleep = (s) => new Promise((resolve) => setTimeout(resolve, s * 1000));
const loops = Array.from({ length: spec.connections }, loop);
await sleep(spec.warmupS);
measuring = true;
const t0 = performance.now();
await sleep(spec.durationS);
measuring = false;
const durationS = (performance.now() - t0) / 1000;
stop = true;
await Promise.all(loops);
await pool.close();
latenciesMs.sort((a, b) => a - b);
const at = (p) => latenciesMs[Math.min(latenciesMs.length - 1, Math.floor(p * latenciesMs.length))] ?? 0;
process.stdout.write(
  `${JSON.stringify({ requests: latenciesMs.length + errors, durationS, errors, p50Ms: at(0.5), p99Ms: at(0.99) })}\n`,
);
