import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Pool } from "undici";
import { silentLogger } from "../core/logger.js";
import { type RunningServer, startServer } from "../server.js";
import { fuzzCases, mib, RSS_GROWTH_BOUND_MIB } from "../testing/fuzz-harness.js";
import { createFuzzRequests } from "../testing/fuzz-requests.js";

const REPOSITORY = new URL("../../../../examples/models", import.meta.url).pathname;
const SEED = Number(process.env["TBENCH_FUZZ_SEED"] ?? 20261202);
// CI runs 10,000; TBENCH_FUZZ_CASES=100000 (or the older TBENCH_FUZZ_REQUESTS) the full count.
const REQUESTS = fuzzCases(10_000, "TBENCH_FUZZ_REQUESTS");
/** A zip bomb's answer: refused by the size limit after decompression (1 MiB here). */
const BOMB_REFUSAL = /^Decompressed data size exceeds the maximum allowed value of 1048576 bytes\. /;
const CONNECTIONS = 8;
const ALLOWED = new Set([200, 400, 404, 405, 501, 503]);
/**
 * The 500s Triton itself answers for bad request JSON (TritonJson's failures are INTERNAL, see
 * http/triton-json.ts); any other 500 is a server fault.
 */
const TRITON_JSON_500 =
  /^(failed to parse the request JSON buffer: |Unable to parse '[a-z_]+': attempt to access |Unable to set 'classification': attempt to access |failed to get request params\.: |Unable to parse JSON bytes array: |Unable to parse 'data': Shape does not match|Failed to parse 'data' field: )/;
const MODELS = [
  "simple",
  "bool",
  "uint8",
  "int8",
  "int16",
  "int32",
  "int64",
  "uint64",
  "fp16",
  "fp32",
  "fp64",
  "bytes",
];

let server: RunningServer;

before(async () => {
  server = await startServer({
    modelRepository: REPOSITORY,
    httpPort: 0,
    metricsPort: false,
    modelControlMode: "explicit",
    loadModels: MODELS.map((m) => (m === "simple" ? m : `identity_${m}`)),
    httpMaxInputSize: 1 << 20,
    logger: silentLogger,
  });
});
after(async () => {
  await server.close();
});

test(`fuzz: ${REQUESTS} mutated infer requests (seed ${SEED}) get well-formed answers`, {
  timeout: 1_800_000,
}, async (t) => {
  const next = createFuzzRequests(SEED);
  const rssBefore = process.memoryUsage.rss();
  const started = performance.now();
  const pool = new Pool(server.httpUrl, {
    connections: CONNECTIONS,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const statuses = new Map<number, number>();
  const problems: string[] = [];
  let index = 0;
  let bombs = 0;
  const worker = async () => {
    while (index < REQUESTS) {
      const i = index++;
      const request = next();
      const res = await pool.request({
        method: "POST",
        path: request.path,
        headers: request.headers,
        body: request.body,
      });
      const body = Buffer.from(await res.body.arrayBuffer());
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      if (request.description.includes("zip bomb")) bombs++;
      const problem =
        checkAnswer(res.statusCode, res.headers, body) ??
        checkLookup(request.path, res.statusCode, body) ??
        (request.description.includes("zip bomb") ? checkBomb(res.statusCode, body) : undefined);
      if (problem !== undefined && problems.length < 20)
        problems.push(`#${i} ${request.description}: ${problem}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  } finally {
    await pool.close();
  }
  const rssAfter = process.memoryUsage.rss();
  t.diagnostic(
    `http infer fuzz: ${JSON.stringify({
      cases: REQUESTS,
      statuses: Object.fromEntries(statuses),
      zipBombs: bombs,
      seconds: Math.round((performance.now() - started) / 100) / 10,
      rssBeforeMiB: mib(rssBefore),
      rssAfterMiB: mib(rssAfter),
    })}`,
  );
  assert.ok(bombs > 0, "no zip bomb was sent");
  assert.ok(mib(rssAfter - rssBefore) < RSS_GROWTH_BOUND_MIB, `RSS grew ${mib(rssAfter - rssBefore)} MiB`);
  const answered = [...statuses.values()].reduce((a, b) => a + b, 0);
  assert.equal(answered, REQUESTS);
  assert.deepEqual(problems, []);
  // Both accepted and refused requests were exercised.
  assert.ok((statuses.get(200) ?? 0) > REQUESTS / 50, JSON.stringify([...statuses]));
  const refused = (statuses.get(400) ?? 0) + (statuses.get(500) ?? 0);
  assert.ok(refused > REQUESTS / 5, JSON.stringify([...statuses]));

  // Still serving, and still right.
  const res = await fetch(`${server.httpUrl}/v2/models/simple/infer`, {
    method: "POST",
    body: JSON.stringify({
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) },
        {
          name: "INPUT1",
          datatype: "INT32",
          shape: [1, 16],
          data: Array.from({ length: 16 }, (_, i) => 2 * i),
        },
      ],
      outputs: [{ name: "OUTPUT1" }],
    }),
  });
  assert.equal(res.status, 200);
  const out = (await res.json()) as { outputs: { data: number[] }[] };
  assert.deepEqual(
    out.outputs[0]!.data,
    Array.from({ length: 16 }, (_, i) => 0 - i),
  );
});

/** A zip bomb is refused with 400 by the size limit on the inflated body, never parsed. */
function checkBomb(status: number, body: Buffer): string | undefined {
  if (status !== 400) return `zip bomb answered ${status}`;
  const error = (JSON.parse(body.toString()) as { error: string }).error;
  return BOMB_REFUSAL.test(error) ? undefined : `zip bomb refused with '${error}'`;
}

/**
 * Model lookups answer with Triton's status for the core's code (HttpCodeFromError): an unknown name and an
 * unknown version of a loaded model are NOT_FOUND (404), never a 503. A mutated body
 * can fail to decode before the lookup, so only the lookup's own answers are checked.
 */
function checkLookup(path: string, status: number, body: Buffer): string | undefined {
  const error = status === 200 ? "" : (JSON.parse(body.toString()) as { error: string }).error;
  const version = /^\/v2\/models\/([^/]+)\/versions\/99\/infer$/.exec(path);
  if (version !== null) {
    const expected = `Request for unknown model: '${version[1]}' version 99 is not found`;
    if (status === 200 || status === 503) return `status ${status} for version 99`;
    if (error === expected && status !== 404) return `status ${status} for '${expected}'`;
    if (status === 404 && error !== expected) return `404 '${error}', expected '${expected}'`;
  }
  if (path === "/v2/models/none/infer") {
    // The lookup's own answer is 404; a body that fails to decode first is a 400 or 500 of its own.
    const lookup = error.startsWith("Request for unknown model");
    if (lookup ? status !== 404 : status !== 400 && status !== 500)
      return `status ${status} for an unknown model: ${error}`;
  }
  return undefined;
}

function checkAnswer(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  body: Buffer,
): string | undefined {
  if (!ALLOWED.has(status) && status !== 500) return `status ${status}: ${body.toString().slice(0, 200)}`;
  if (status !== 200) {
    try {
      const parsed = JSON.parse(body.toString()) as { error?: unknown };
      if (typeof parsed.error !== "string" || parsed.error === "")
        return `error body without an error string`;
      if (status === 500 && !TRITON_JSON_500.test(parsed.error)) return `status 500: ${parsed.error}`;
    } catch {
      return `non-JSON error body: ${body.toString().slice(0, 80)}`;
    }
    return undefined;
  }
  if (headers["content-encoding"] !== undefined) return undefined;
  const length = headers["inference-header-content-length"];
  const jsonLength = length === undefined ? body.length : Number(length);
  if (!(jsonLength <= body.length))
    return `Inference-Header-Content-Length ${length} beyond ${body.length} bytes`;
  try {
    const parsed = JSON.parse(body.subarray(0, jsonLength).toString()) as { outputs?: unknown };
    if (!Array.isArray(parsed.outputs)) return "200 without outputs";
  } catch {
    return "200 with a body that is not JSON";
  }
  return undefined;
}
