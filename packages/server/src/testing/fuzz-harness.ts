/**
 * What the fuzz tests share: how many cases to run (a CI count, or TBENCH_FUZZ_CASES for the full run), a
 * driver that sends generated HTTP requests over a few kept-alive connections and tallies the answers, and
 * the figures each run reports (cases, statuses, time, RSS before and after).
 */
import type { Pool } from "undici";
import type { FuzzRequest } from "./fuzz-requests.js";

/**
 * Cases to run: TBENCH_FUZZ_CASES when set (the full run: 100000), else `ciCount`. `legacyVariable` is an
 * older per-test name still honoured.
 */
export function fuzzCases(ciCount: number, legacyVariable?: string): number {
  const raw = process.env["TBENCH_FUZZ_CASES"] ?? (legacyVariable ? process.env[legacyVariable] : undefined);
  if (raw === undefined || raw === "") return ciCount;
  const count = Number(raw);
  if (!Number.isInteger(count) || count <= 0)
    throw new Error(`TBENCH_FUZZ_CASES: expected a positive whole number of cases, got '${raw}'`);
  return count;
}

/** One answer as the checker sees it. */
export interface FuzzAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

/** What a run saw. */
export interface FuzzRunReport {
  readonly cases: number;
  readonly statuses: Record<string, number>;
  /** The first problems found (at most 20), each naming the case. */
  readonly problems: string[];
  readonly seconds: number;
  readonly rssBeforeMiB: number;
  readonly rssAfterMiB: number;
}

/**
 * Sends `count` requests from `next` over `connections` concurrent callers on `pool`; `check` returns a
 * problem for a bad answer. Requests are generated as they are sent, so memory does not grow with count.
 */
export async function runHttpFuzz(options: {
  readonly pool: Pool;
  readonly next: () => FuzzRequest;
  readonly count: number;
  readonly connections: number;
  readonly check: (request: FuzzRequest, answer: FuzzAnswer) => string | undefined;
}): Promise<FuzzRunReport> {
  const { pool, next, count, connections, check } = options;
  const statuses: Record<string, number> = {};
  const problems: string[] = [];
  const rssBefore = process.memoryUsage.rss();
  const started = performance.now();
  let index = 0;
  const worker = async () => {
    while (index < count) {
      const i = index++;
      const request = next();
      const res = await pool.request({
        method: "POST",
        path: request.path,
        headers: request.headers,
        body: request.body,
      });
      const body = Buffer.from(await res.body.arrayBuffer());
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      const problem = check(request, { status: res.statusCode, headers: res.headers, body });
      if (problem !== undefined && problems.length < 20)
        problems.push(`#${i} ${request.description}: ${problem}`);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return {
    cases: count,
    statuses,
    problems,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    rssBeforeMiB: mib(rssBefore),
    rssAfterMiB: mib(process.memoryUsage.rss()),
  };
}

/** An error answer's problem, if any: a JSON body `{"error": "<non-empty string>"}` is required. */
export function errorBodyProblem(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString()) as { error?: unknown };
    if (typeof parsed.error !== "string" || parsed.error === "") return "error body without an error string";
  } catch {
    return `non-JSON error body: ${body.toString().slice(0, 80)}`;
  }
  return undefined;
}

/** The `error` string of an error body ("" when there is none). */
export function errorOf(body: Buffer): string {
  try {
    const error = (JSON.parse(body.toString()) as { error?: unknown }).error;
    return typeof error === "string" ? error : "";
  } catch {
    return "";
  }
}

export function mib(bytes: number): number {
  return Math.round(bytes / 2 ** 20);
}

/** How much RSS may grow over a run before the test calls it unbounded (MiB). */
export const RSS_GROWTH_BOUND_MIB = 256;
