// Seeded fuzz test of the repository API (issue 14, "hostile input"): index, load and unload requests with
// mutated JSON bodies, config overrides, `file:` overrides, odd model names, corrupt gzip/deflate bodies,
// against the real server in explicit mode. Every answer is 200 or an error status with a JSON error body;
// a 500 only with one of Triton's own messages (TritonJson's failures, its parameter and load errors); no
// hang; RSS bounded; `simple` loads and answers afterwards. TBENCH_FUZZ_CASES=100000 runs the full count.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Pool } from "undici";
import { silentLogger } from "../core/logger.js";
import { type RunningServer, startServer } from "../server.js";
import {
  errorBodyProblem,
  errorOf,
  fuzzCases,
  RSS_GROWTH_BOUND_MIB,
  runHttpFuzz,
} from "../testing/fuzz-harness.js";
import { createRepositoryFuzzRequests, REPOSITORY_FUZZ_MODEL } from "../testing/fuzz-repository-requests.js";
import { createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";

const SEED = Number(process.env["TBENCH_FUZZ_SEED"] ?? 20261203);
const CASES = fuzzCases(10_000);
const CONNECTIONS = 8;
const ALLOWED = new Set([200, 400, 404, 405, 500, 501, 503]);
/** Triton's own 500s on this API: TritonJson's failures, its parameter error, and INTERNAL load errors. */
const TRITON_500 =
  /^(failed to parse the request JSON buffer: |attempt to |unexpected error on creating Triton parameter|failed to load '|failed to write the override files )/;

let repository: FixtureRepository;
let server: RunningServer;

before(async () => {
  repository = createFixtureRepository({ [REPOSITORY_FUZZ_MODEL]: { config: "bundled" } });
  server = await startServer({
    modelRepository: repository.dir,
    httpPort: 0,
    metricsPort: false,
    modelControlMode: "explicit",
    loadModels: [REPOSITORY_FUZZ_MODEL],
    httpMaxInputSize: 1 << 20,
    logger: silentLogger,
  });
});
after(async () => {
  await server.close();
  repository.remove();
});

test(`fuzz: ${CASES} mutated repository requests (seed ${SEED}) get well-formed answers`, {
  timeout: 1_800_000,
}, async (t) => {
  const pool = new Pool(server.httpUrl, {
    connections: CONNECTIONS,
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
  });
  let report: Awaited<ReturnType<typeof runHttpFuzz>>;
  try {
    report = await runHttpFuzz({
      pool,
      next: createRepositoryFuzzRequests(SEED),
      count: CASES,
      connections: CONNECTIONS,
      check: (_request, answer) => {
        if (!ALLOWED.has(answer.status))
          return `status ${answer.status}: ${answer.body.toString().slice(0, 200)}`;
        if (answer.status === 200) return undefined;
        const problem = errorBodyProblem(answer.body);
        if (problem !== undefined) return problem;
        if (answer.status === 500 && !TRITON_500.test(errorOf(answer.body)))
          return `status 500: ${errorOf(answer.body)}`;
        return undefined;
      },
    });
  } finally {
    await pool.close();
  }
  t.diagnostic(`repository fuzz: ${JSON.stringify(report)}`);
  assert.deepEqual(report.problems, []);
  assert.equal(
    Object.values(report.statuses).reduce((a, b) => a + b, 0),
    CASES,
  );
  // Accepted and refused requests were both exercised.
  assert.ok((report.statuses["200"] ?? 0) > CASES / 20, JSON.stringify(report.statuses));
  assert.ok((report.statuses["400"] ?? 0) > CASES / 20, JSON.stringify(report.statuses));
  assert.ok(report.rssAfterMiB - report.rssBeforeMiB < RSS_GROWTH_BOUND_MIB, JSON.stringify(report));

  // The model loads (as it was) and answers right.
  const load = await fetch(`${server.httpUrl}/v2/repository/models/${REPOSITORY_FUZZ_MODEL}/load`, {
    method: "POST",
  });
  assert.equal(load.status, 200, await load.text());
  const input = (name: string, f: (i: number) => number) => ({
    name,
    datatype: "INT32",
    shape: [1, 16],
    data: Array.from({ length: 16 }, (_, i) => f(i)),
  });
  const res = await fetch(`${server.httpUrl}/v2/models/${REPOSITORY_FUZZ_MODEL}/infer`, {
    method: "POST",
    body: JSON.stringify({ inputs: [input("INPUT0", (i) => i), input("INPUT1", (i) => 3 * i)] }),
  });
  assert.equal(res.status, 200);
  const out = (await res.json()) as { outputs: { name: string; data: number[] }[] };
  assert.deepEqual(
    out.outputs.find((o) => o.name === "OUTPUT0")?.data,
    Array.from({ length: 16 }, (_, i) => 4 * i),
  );
});
