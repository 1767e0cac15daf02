/**
 * Checks the JSON answers of the non-infer calls (zod; these are not on the hot path) and converts them to
 * the typed results. Unknown extra fields are tolerated (servers add them); missing or mistyped required
 * fields are a MalformedResponseError naming the call and the field. zod/mini, which tree-shakes (the
 * browser entry reaches this module).
 */
import { DATATYPES } from "@tbench/proto";
import * as z from "zod/mini";
import { readUtf8 } from "../bytes.js";
import { MalformedResponseError } from "../errors.js";
import type {
  DurationStatistic,
  LogSettings,
  ModelMetadata,
  ModelStatistics,
  RepositoryIndexEntry,
  ServerMetadata,
  SharedMemoryRegionStatus,
  TraceSettings,
} from "../result-types.js";
import { ZOD_ENGLISH } from "../zod-english.js";

const count = z.number().check(z.nonnegative());
const duration = z.pipe(
  z.object({ count, ns: count }),
  z.transform((d): DurationStatistic => ({ count: d.count, ns: d.ns })),
);
const zeroDuration: DurationStatistic = Object.freeze({ count: 0, ns: 0 });

const tensorMetadata = z.object({
  name: z.string(),
  datatype: z.enum(DATATYPES),
  shape: z.array(z.int()),
});

const serverMetadata = z.object({ name: z.string(), version: z.string(), extensions: z.array(z.string()) });

const modelMetadata = z.pipe(
  z.object({
    name: z.string(),
    versions: z.optional(z.array(z.string())),
    platform: z.string(),
    inputs: z.array(tensorMetadata),
    outputs: z.array(tensorMetadata),
  }),
  z.transform((m): ModelMetadata => ({ ...m, versions: m.versions ?? [] })),
);

const repositoryIndex = z.array(
  z.pipe(
    z.object({
      name: z.string(),
      version: z.optional(z.string()),
      state: z.optional(z.string()),
      reason: z.optional(z.string()),
    }),
    z.transform((e) => {
      const entry: { -readonly [K in keyof RepositoryIndexEntry]: RepositoryIndexEntry[K] } = {
        name: e.name,
      };
      if (e.version !== undefined) entry.version = e.version;
      if (e.state !== undefined) entry.state = e.state;
      if (e.reason !== undefined) entry.reason = e.reason;
      return entry;
    }),
  ),
);

const modelStatistics = z.object({
  model_stats: z.array(
    z.pipe(
      z.object({
        name: z.string(),
        version: z.string(),
        last_inference: count,
        inference_count: count,
        execution_count: count,
        inference_stats: z.object({
          success: duration,
          fail: duration,
          queue: duration,
          compute_input: duration,
          compute_infer: duration,
          compute_output: duration,
          cache_hit: z.optional(duration),
          cache_miss: z.optional(duration),
        }),
        batch_stats: z.optional(
          z.array(
            z.object({
              batch_size: count,
              compute_input: duration,
              compute_infer: duration,
              compute_output: duration,
            }),
          ),
        ),
      }),
      z.transform(
        (s): ModelStatistics => ({
          name: s.name,
          version: s.version,
          lastInference: s.last_inference,
          inferenceCount: s.inference_count,
          executionCount: s.execution_count,
          inferenceStats: {
            success: s.inference_stats.success,
            fail: s.inference_stats.fail,
            queue: s.inference_stats.queue,
            computeInput: s.inference_stats.compute_input,
            computeInfer: s.inference_stats.compute_infer,
            computeOutput: s.inference_stats.compute_output,
            cacheHit: s.inference_stats.cache_hit ?? zeroDuration,
            cacheMiss: s.inference_stats.cache_miss ?? zeroDuration,
          },
          batchStats: (s.batch_stats ?? []).map((b) => ({
            batchSize: b.batch_size,
            computeInput: b.compute_input,
            computeInfer: b.compute_infer,
            computeOutput: b.compute_output,
          })),
        }),
      ),
    ),
  ),
});

const traceSettings = z.record(z.string(), z.union([z.string(), z.array(z.string())]));
const logSettings = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

const sharedMemoryStatus = z.array(
  z.pipe(
    z.object({ name: z.string(), key: z.string(), offset: count, byte_size: count }),
    z.transform(
      (r): SharedMemoryRegionStatus => ({
        name: r.name,
        key: r.key,
        offset: r.offset,
        byteSize: r.byte_size,
      }),
    ),
  ),
);

const modelConfig = z.record(z.string(), z.unknown());

const errorBody = z.object({ error: z.string() });

/** Every answer this module checks, by the call that gets it. */
const SCHEMAS = {
  serverMetadata,
  modelMetadata,
  repositoryIndex,
  modelStatistics,
  traceSettings,
  logSettings,
  sharedMemoryStatus,
  modelConfig,
} as const;

type Schemas = typeof SCHEMAS;

/** The typed result each checked answer turns into. */
export interface ParsedAnswers {
  serverMetadata: ServerMetadata;
  modelMetadata: ModelMetadata;
  repositoryIndex: RepositoryIndexEntry[];
  modelStatistics: z.output<Schemas["modelStatistics"]>;
  traceSettings: TraceSettings;
  logSettings: LogSettings;
  sharedMemoryStatus: SharedMemoryRegionStatus[];
  modelConfig: Record<string, unknown>;
}

/** Parses and checks the JSON answer of `call`. */
export function parseAnswer<K extends keyof Schemas>(call: K, body: Uint8Array): ParsedAnswers[K] {
  let json: unknown;
  try {
    json = JSON.parse(readUtf8(body));
  } catch (error) {
    throw new MalformedResponseError(`${call}: the answer is not JSON`, { cause: error });
  }
  const result = z.safeParse(SCHEMAS[call], json, { error: ZOD_ENGLISH });
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join(".") : "(answer)";
    throw new MalformedResponseError(`${call}: unexpected answer at '${where}': ${issue.message}`, {
      cause: result.error,
    });
  }
  return result.data as ParsedAnswers[K];
}

/** The server's error message from an error answer's body (`{"error": "..."}`), or a fallback text. */
export function errorMessageOf(body: Uint8Array, status: number): string {
  if (body.length > 0) {
    try {
      const parsed = z.safeParse(errorBody, JSON.parse(readUtf8(body)));
      if (parsed.success) return parsed.data.error;
    } catch {
      // not JSON: fall through to the raw text
    }
    const text = readUtf8(body, 0, Math.min(body.length, 500)).trim();
    if (text.length > 0) return text;
  }
  return `HTTP ${status}`;
}
