// Seeded fuzz test of ModelInfer (issue 13 "Bad input"): 10,000 mutated requests, sent as raw bytes through
// a grpc-js client with identity serializers, 16 at a time, against the real front end and core on
// `simple` and `identity_bytes`. Every call must end with OK or a status from Triton's set with a message,
// never UNKNOWN or an internal error from a thrown exception, never at its deadline; a valid request still
// succeeds afterwards.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { GRPC_STATUS, inference } from "@tbench/proto";
import { DEFAULT_MAX_BYTES_TENSOR_ELEMENTS } from "../core/bytes-data.js";
import { silentLogger } from "../core/logger.js";
import { createInferenceCore, type InferenceCoreHandle } from "../lifecycle/create-inference-core.js";
import { fuzzCases, mib, RSS_GROWTH_BOUND_MIB } from "../testing/fuzz-harness.js";
import { createGrpcFuzzRequests } from "../testing/grpc-fuzz-requests.js";
import { createRawInferClient } from "../testing/grpc-test-client.js";
import { createFixtureRepository, type FixtureRepository } from "../testing/test-fixtures.js";
import { createGrpcFrontEnd, type GrpcFrontEnd } from "./grpc-front-end.js";

const SEED = 0x13c0ffee;
// CI runs 10,000; TBENCH_FUZZ_CASES=100000 the full count.
const COUNT = fuzzCases(10_000);
const CONCURRENCY = 16;
/** Generous: a call that reaches it has hung. */
const DEADLINE_MS = 20_000;

/** What Triton's GrpcStatusUtil can answer for an infer call, plus INTERNAL for an undecodable message. */
const ALLOWED = new Set<number>([
  GRPC_STATUS.OK,
  GRPC_STATUS.INVALID_ARGUMENT,
  GRPC_STATUS.NOT_FOUND,
  GRPC_STATUS.UNAVAILABLE,
  GRPC_STATUS.UNIMPLEMENTED,
  GRPC_STATUS.INTERNAL,
]);

describe("gRPC ModelInfer fuzz (seeded)", { timeout: 1_800_000 }, () => {
  let repo: FixtureRepository;
  let core: InferenceCoreHandle;
  let front: GrpcFrontEnd;

  before(async () => {
    repo = createFixtureRepository({ simple: { config: "bundled" }, identity_bytes: { config: "bundled" } });
    core = await createInferenceCore({ modelRepository: repo.dir, logger: silentLogger });
    front = await createGrpcFrontEnd({
      core,
      port: 0,
      logger: silentLogger,
      maxBytesTensorElements: DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
    });
  });
  after(async () => {
    await front.close();
    await core.close();
    repo.remove();
  });

  test(`${COUNT} mutated requests: OK or Triton's statuses with a message, no hang, serving after`, async (t) => {
    const rssBefore = process.memoryUsage.rss();
    const started = performance.now();
    const requests = createGrpcFuzzRequests(SEED);
    const client = createRawInferClient(front.address);
    const codes = new Map<number, number>();
    const failures: string[] = [];
    let sent = 0;
    const worker = async () => {
      while (sent < COUNT) {
        sent++;
        const request = requests.next();
        const outcome = await client.infer(request.bytes, DEADLINE_MS);
        codes.set(outcome.code, (codes.get(outcome.code) ?? 0) + 1);
        const problem = !ALLOWED.has(outcome.code)
          ? `status ${outcome.code}`
          : outcome.code !== GRPC_STATUS.OK && outcome.details === ""
            ? "empty message"
            : outcome.code === GRPC_STATUS.INTERNAL &&
                !/^Error deserializing request/.test(outcome.details) &&
                /^internal error:/.test(outcome.details)
              ? "a thrown exception"
              : undefined;
        if (problem !== undefined && failures.length < 10)
          failures.push(`${request.description}: ${problem}: ${outcome.code} ${outcome.details}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const rssAfter = process.memoryUsage.rss();
    t.diagnostic(
      `grpc fuzz: ${JSON.stringify({
        cases: COUNT,
        codes: Object.fromEntries(codes),
        seconds: Math.round((performance.now() - started) / 100) / 10,
        rssBeforeMiB: mib(rssBefore),
        rssAfterMiB: mib(rssAfter),
      })}`,
    );
    assert.deepEqual(failures, []);
    assert.ok(mib(rssAfter - rssBefore) < RSS_GROWTH_BOUND_MIB, `RSS grew ${mib(rssAfter - rssBefore)} MiB`);
    assert.equal(
      [...codes.values()].reduce((a, b) => a + b, 0),
      COUNT,
    );
    // The mix reached the core and refused at the decoder both: not every call failed the same way.
    assert.ok((codes.get(GRPC_STATUS.OK) ?? 0) > 100, JSON.stringify([...codes]));
    assert.ok((codes.get(GRPC_STATUS.INVALID_ARGUMENT) ?? 0) > 1000, JSON.stringify([...codes]));

    const last = await client.infer(requests.validSimple(), DEADLINE_MS);
    assert.equal(last.code, GRPC_STATUS.OK, last.details);
    const decoded = inference.ModelInferResponse.decode(last.response!);
    assert.deepEqual(
      [...new Int32Array(new Uint8Array(decoded.raw_output_contents[0]!).buffer)],
      new Array(16).fill(6),
    );
    client.close();
  });
});
