// Child-process entry of the tbench benchmark: autocannon (its programmatic API, one event loop, as its CLI
// runs by default) sending one captured request. The CLI cannot send it: `-i FILE` reads the body as
// UTF-8, which breaks binary tensors; the API takes the bytes as a Buffer. Reads a JSON spec
// {url, method, headers, bodyBase64, connections, warmupS, durationS} from the file named on the command
// line, runs a warm-up and then the measured run, and prints the measured run's figures as one JSON line.
import { readFile } from "node:fs/promises";
import autocannon from "autocannon";

const spec = JSON.parse(await readFile(process.argv[2], "utf8"));
const options = {
  url: spec.url,
  method: spec.method,
  headers: spec.headers,
  body: Buffer.from(spec.bodyBase64, "base64"),
  connections: spec.connections,
};
await autocannon({ ...options, duration: spec.warmupS });
const result = await autocannon({ ...options, duration: spec.durationS });
process.stdout.write(
  `${JSON.stringify({
    requests: result.requests.total,
    durationS: result.duration,
    errors: result.errors + result.non2xx, // autocannon counts timeouts among its errors
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
  })}\n`,
);
