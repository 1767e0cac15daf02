/**
 * A small conformance run of the browser entry against tbench-server, for runtimes other than the Node
 * process of the tests: a realm that has only web globals (browser-entry.test.ts) and Bun or Deno
 * (fetch-runtimes.e2e.test.ts). It takes the entry's module, so each runtime resolves and loads the entry
 * itself, and reports plain JSON values that the test compares with FETCH_CONFORMANCE_EXPECTED. The server
 * must have loaded FETCH_CONFORMANCE_MODELS.
 */
import type { ModelConfig } from "@tbench/proto";
import type * as browserEntry from "../browser.js";

/** The browser entry's exports, as a runtime loaded them. */
export type ClientModule = typeof browserEntry;

/** The models the server must have loaded. */
export const FETCH_CONFORMANCE_MODELS = ["simple", "identity_fp32", "identity_bytes", "identity_int64"];

/**
 * identity_fp64 reloaded to hold a lone request for 60 s (waiting for a batch of 8): a call to it ends only
 * by its deadline or abort, so the deadline check does not depend on how fast anything runs.
 */
const HOLDING_CONFIG: ModelConfig = {
  name: "identity_fp64",
  platform: "onnxruntime_onnx",
  max_batch_size: 8,
  input: [{ name: "INPUT0", data_type: "TYPE_FP64", dims: ["-1"] }],
  output: [{ name: "OUTPUT0", data_type: "TYPE_FP64", dims: ["-1"] }],
  dynamic_batching: { preferred_batch_size: [8], max_queue_delay_microseconds: "60000000" },
};

/** An error as the report shows it. */
interface ErrorReport {
  readonly code: string;
  readonly status: number | undefined;
  readonly className: string;
}

/** What one run found. */
export interface FetchConformanceReport {
  /** Whether the module is the browser entry (it has no gRPC client). */
  readonly browserEntry: boolean;
  readonly live: boolean;
  readonly modelReady: boolean;
  readonly unknownModelReady: boolean;
  readonly serverName: string;
  readonly modelInputs: string[];
  /** simple's OUTPUT0 (a + b) and OUTPUT1 (a - b), binary both ways. */
  readonly sum: number[];
  readonly difference: number[];
  /** The same model with JSON both ways. */
  readonly sumAsJson: number[];
  /** BYTES through identity_bytes, binary (non-ASCII text included). */
  readonly strings: string[];
  /** INT64 past 2^53 through identity_int64 (as decimal strings). */
  readonly int64: string[];
  /** identity_fp32 with a gzip-compressed request, or "no CompressionStream" where the runtime lacks it. */
  readonly gzip: number[] | string;
  readonly notFound: ErrorReport;
  readonly invalidArgument: ErrorReport;
  readonly deadline: ErrorReport;
  /** An aborted call: its code and whether `cause` is the signal's reason. */
  readonly aborted: ErrorReport & { readonly causeIsReason: boolean };
  readonly afterClose: ErrorReport;
}

/** The report every runtime must produce. */
export const FETCH_CONFORMANCE_EXPECTED: Omit<FetchConformanceReport, "gzip"> = {
  browserEntry: true,
  live: true,
  modelReady: true,
  unknownModelReady: false,
  serverName: "tbench-server",
  modelInputs: ["INPUT0 INT32 -1,16", "INPUT1 INT32 -1,16"],
  sum: Array.from({ length: 16 }, (_, i) => i + 1),
  difference: Array.from({ length: 16 }, (_, i) => i - 1),
  sumAsJson: Array.from({ length: 16 }, (_, i) => i + 1),
  strings: ["héllo", "€ 😀", ""],
  int64: ["9007199254740993", "-9223372036854775808"],
  notFound: { code: "NOT_FOUND", status: 404, className: "ModelNotFoundError" },
  invalidArgument: { code: "INVALID_ARGUMENT", status: 400, className: "InvalidArgumentError" },
  deadline: { code: "DEADLINE_EXCEEDED", status: undefined, className: "DeadlineExceededError" },
  aborted: { code: "ABORTED", status: undefined, className: "AbortedError", causeIsReason: true },
  afterClose: { code: "CLIENT_CLOSED", status: undefined, className: "ClientClosedError" },
};

/** The values identity_fp32 echoes in the gzip check. */
export const GZIP_VALUES = Array.from({ length: 64 }, (_, i) => i % 5);

/** The error classes a call may fail with, by name (names, not `constructor.name`: bundles minify). */
const ERROR_CLASSES = [
  "AbortedError",
  "ClientClosedError",
  "ConnectionError",
  "DeadlineExceededError",
  "InternalServerError",
  "InvalidArgumentError",
  "MalformedResponseError",
  "ModelNotFoundError",
  "UnavailableError",
  "UnsupportedError",
] as const;

async function errorOf(client: ClientModule, call: Promise<unknown>): Promise<ErrorReport> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof client.InferenceError)) throw error;
    const className = ERROR_CLASSES.find((name) => error instanceof client[name]) ?? "InferenceError";
    return { code: error.code, status: error.status, className };
  }
  throw new Error("the call was expected to fail");
}

/** Runs the checks against the server at `url` through `client`'s fetch-based createHttpClient. */
export async function fetchConformance(client: ClientModule, url: string): Promise<FetchConformanceReport> {
  const http = client.createHttpClient({ url, timeoutMs: 30_000 });
  const a = Int32Array.from({ length: 16 }, (_, i) => i);
  const b = new Int32Array(16).fill(1);
  const inputs = [
    { name: "INPUT0", datatype: "INT32" as const, shape: [1, 16], data: a },
    { name: "INPUT1", datatype: "INT32" as const, shape: [1, 16], data: b },
  ];
  const binary = await http.infer("simple", { inputs });
  const json = await http.infer("simple", {
    inputs: inputs.map((i) => ({ ...i, data: Array.from(i.data) })),
    binaryInputs: false,
    binaryOutputs: false,
  });
  const bytes = await http.infer("identity_bytes", {
    inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, 3], data: ["héllo", "€ 😀", ""] }],
  });
  const int64 = await http.infer("identity_int64", {
    inputs: [
      {
        name: "INPUT0",
        datatype: "INT64",
        shape: [1, 2],
        data: new BigInt64Array([2n ** 53n + 1n, -(2n ** 63n)]),
      },
    ],
  });
  let gzip: number[] | string = "no CompressionStream";
  if (typeof globalThis.CompressionStream === "function") {
    const compressed = client.createHttpClient({ url, compression: { request: "gzip", response: true } });
    const result = await compressed.infer("identity_fp32", {
      inputs: [{ name: "INPUT0", datatype: "FP32", shape: [1, GZIP_VALUES.length], data: GZIP_VALUES }],
    });
    gzip = Array.from(result.output("OUTPUT0")!.as("FP32"));
    await compressed.close();
  }
  const controller = new AbortController();
  const reason = new Error("stop");
  controller.abort(reason);
  let causeIsReason = false;
  const aborted = await errorOf(
    client,
    http.infer("simple", { inputs }, { signal: controller.signal }).catch((error: unknown) => {
      causeIsReason = (error as Error).cause === reason;
      throw error;
    }),
  );
  const metadata = await http.modelMetadata("simple");
  await http.loadModel("identity_fp64", { config: HOLDING_CONFIG });
  const held = { inputs: [{ name: "INPUT0", datatype: "FP64" as const, shape: [1, 1], data: [1] }] };
  const report: FetchConformanceReport = {
    browserEntry: !("createGrpcClient" in client),
    live: await http.isServerLive(),
    modelReady: await http.isModelReady("simple"),
    unknownModelReady: await http.isModelReady("no_such_model"),
    serverName: (await http.serverMetadata()).name,
    modelInputs: metadata.inputs.map((i) => `${i.name} ${i.datatype} ${i.shape}`),
    sum: Array.from(binary.output("OUTPUT0")!.as("INT32")),
    difference: Array.from(binary.output("OUTPUT1")!.as("INT32")),
    sumAsJson: json.output("OUTPUT0")!.toArray() as number[],
    strings: bytes.output("OUTPUT0")!.strings(),
    int64: Array.from(int64.output("OUTPUT0")!.as("INT64"), String),
    gzip,
    notFound: await errorOf(client, http.infer("no_such_model", { inputs })),
    invalidArgument: await errorOf(client, http.infer("simple", { inputs: [inputs[0]!] })),
    deadline: await errorOf(client, http.infer("identity_fp64", held, { timeoutMs: 100 })),
    aborted: { ...aborted, causeIsReason },
    afterClose: await http.close().then(() => errorOf(client, http.isServerLive())),
  };
  return report;
}
