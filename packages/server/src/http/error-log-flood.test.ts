/**
 * A burst of failing loads with a 10,000-character model name, through real servers: the captured log stays
 * bounded (issue 36: one ~20 KB line per failure, 1.68 GB in 10 s). HTTP on a fake clock, so the whole
 * burst falls in one interval whatever the machine's speed: one line in full, then one summary at close
 * that counts the rest. gRPC logs the same failure (it logged none before), bounded the same way.
 */
import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { describe, test } from "node:test";
import type * as grpcJs from "@grpc/grpc-js";
import { DEFAULT_MAX_BYTES_TENSOR_ELEMENTS } from "../core/bytes-data.js";
import { createConsoleLogger } from "../core/logger.js";
import { SUMMARIZED_LINE_MAX_CHARS } from "../core/summarizing-log.js";
import { createGrpcFrontEnd } from "../grpc/grpc-front-end.js";
import { createFakeClock } from "../testing/fake-clock.js";
import { createFakeCore } from "../testing/fake-core.js";
import { type Any, createTestClient } from "../testing/grpc-test-client.js";
import { createHttpFrontEnd } from "./http-server.js";

const LONG_NAME = "m".repeat(10_000);
const BURST = 400;
const CONCURRENCY = 8;
/** A summarised line with its level letter. */
const LINE_MAX = SUMMARIZED_LINE_MAX_CHARS + 2;

function post(url: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("error log under a flood of failing calls", { timeout: 60_000 }, () => {
  test(`HTTP: ${BURST} failing loads with a 10,000-char name write 2 bounded lines`, async () => {
    const lines: string[] = [];
    const server = await createHttpFrontEnd({
      core: createFakeCore(),
      port: 0,
      address: "127.0.0.1",
      maxInputSize: 1 << 20,
      logger: createConsoleLogger({ write: (line) => lines.push(line) }),
      clock: createFakeClock(),
    });
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    try {
      const url = `${server.url}/v2/repository/models/${LONG_NAME}/load`;
      let next = 0;
      const statuses: number[] = [];
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next++ < BURST) statuses.push(await post(url, agent));
        }),
      );
      assert.deepEqual(new Set(statuses), new Set([500]));
    } finally {
      agent.destroy();
      await server.close();
    }
    const errors = lines.filter((line) => line.startsWith("E "));
    for (const line of errors) assert.ok(line.length <= LINE_MAX, `a ${line.length}-char line`);
    assert.equal(errors.length, 2, errors.map((line) => line.slice(0, 80)).join("\n"));
    assert.match(
      errors[0]!,
      /^E HTTP POST \/v2\/repository\/models\/m+\.\.\.\(\d+ more chars\): failed to load/,
    );
    assert.match(
      errors[1]!,
      new RegExp(`^E ${BURST - 1} more errors in the last second, not written one by one: `),
    );
  });

  test(`gRPC: ${BURST} failing loads with a 10,000-char name are logged, bounded`, async () => {
    const lines: string[] = [];
    const front = await createGrpcFrontEnd({
      core: createFakeCore(),
      port: 0,
      logger: createConsoleLogger({ write: (line) => lines.push(line) }),
      maxBytesTensorElements: DEFAULT_MAX_BYTES_TENSOR_ELEMENTS,
    });
    const client = createTestClient(front.address);
    try {
      const load = (): Promise<number> =>
        new Promise((resolve) => {
          client["RepositoryModelLoad"](
            { model_name: LONG_NAME },
            (error: grpcJs.ServiceError | null, _: Any) => resolve(error?.code ?? 0),
          );
        });
      const codes = await Promise.all(Array.from({ length: BURST }, load));
      assert.deepEqual(new Set(codes), new Set([13]), "INTERNAL");
    } finally {
      client.close();
      await front.close();
    }
    const errors = lines.filter((line) => line.startsWith("E "));
    for (const line of errors) assert.ok(line.length <= LINE_MAX, `a ${line.length}-char line`);
    // The name is already cut in the answer's message (core/echo-text.ts), so the line carries it as sent.
    assert.equal(
      errors[0],
      `E gRPC RepositoryModelLoad: failed to load '${"m".repeat(256)}… (10000 characters)', failed to poll from model repository`,
    );
    // Written at most 10 in full and one summary per second; each summary counts what it folded.
    const folded = errors.map((line) =>
      Number(/^E (\d+) more gRPC errors? in the last/.exec(line)?.[1] ?? 0),
    );
    const full = errors.filter((line) => line.startsWith("E gRPC ")).length;
    assert.equal(full + folded.reduce((a, b) => a + b, 0), BURST, "every failure is accounted for");
  });
});
