import { Command, Option } from "commander";
import { COMPARE_METRICS } from "../report/compare-results.js";
import { UNSUPPORTED_PERF_ANALYZER_FLAGS, type UnsupportedFlag } from "./perf-analyzer-flags.js";

/** What a parsed command line asks for. */
export type ParsedCommand =
  | { kind: "run"; options: Record<string, unknown> }
  | { kind: "compare"; baseline: string; candidate: string; options: Record<string, unknown> }
  | { kind: "merge"; inputs: string[]; options: Record<string, unknown> }
  | { kind: "report"; inputs: string[]; options: Record<string, unknown> }
  | { kind: "tune"; options: Record<string, unknown> }
  /** A perf_analyzer flag tbench does not implement (the first one given). */
  | { kind: "unsupported"; flag: UnsupportedFlag };

const collect = (value: string, previous: string[] = []) => [...previous, value];
const count = (_: string, previous = 0) => previous + 1;

/** Options that only have a short name in perf_analyzer, mapped to the names tbench's config uses. */
const SHORT_NAMES: Record<string, string> = {
  m: "model",
  x: "modelVersion",
  u: "url",
  i: "protocol",
  b: "batchSize",
  H: "header",
  f: "file",
  v: "verbose",
};

/**
 * Builds tbench's commander program: perf_analyzer's flags with its defaults (documented in the help text;
 * applied by the config resolver so that "given" and "defaulted" stay distinguishable), grouped as in
 * perf_analyzer's docs/cli.md, plus the `compare`, `merge`, `report` and `tune` subcommands. `onParsed` receives the result.
 */
export function createProgram(version: string, onParsed: (command: ParsedCommand) => void): Command {
  const program = new Command("tbench")
    .description("A perf_analyzer-compatible load generator for KServe v2 / Triton inference servers.")
    .version(version, "--version", "print the version")
    .helpOption("-h, --help", "print this help")
    .showSuggestionAfterError(true)
    .allowExcessArguments(false)
    // tune has its own -m, -u, -i...: the program's options are only read before a subcommand's name.
    .enablePositionalOptions();

  program.optionsGroup("General Options:");
  program
    .option("-m <string>", "model name (required)")
    .option("-x <string>", "model version (default: the latest)")
    .addOption(new Option("-v", "verbose; repeat (-v -v) for more").argParser(count))
    .option("--workers <n>", "spread the load over N worker threads (default: 1)")
    .option("--seed <n>", "seed of Poisson schedules and random input data (default: 1)");

  program.optionsGroup("Measurement Options:");
  program
    .addOption(
      new Option("--measurement-mode <mode>", "time_windows | count_windows (default: time_windows)"),
    )
    .option("-p, --measurement-interval <ms>", "window length in time_windows mode, msec (default: 5000)")
    .option(
      "--measurement-request-count <n>",
      "minimum requests per window in count_windows mode (default: 50)",
    )
    .option(
      "-s, --stability-percentage <pct>",
      "allowed variation between the last 3 windows, % (default: 10)",
    )
    .option("--percentile <n>", "stabilize and report on this latency percentile (default: -1, the average)")
    .option("--warmup-request-count <n>", "requests sent before measuring (default: 0)")
    .option("--request-count <n>", "measure exactly this many requests, in one window (default: 0, off)")
    .option("-r, --max-trials <n>", "maximum windows per level while seeking stability (default: 10)")
    .option(
      "--concurrency-range <start:end:step>",
      "concurrency levels (default: 1); end 0 = until -l is hit",
    )
    .option(
      "--request-rate-range <start:end:step>",
      "request rates, req/s (open loop); end 0 = until -l is hit",
    )
    .option("--request-distribution <dist>", "constant | poisson gaps between requests (default: constant)")
    .option("--request-intervals <file>", "send with the gaps in this file (microseconds, one per line)")
    .option(
      "-l, --latency-threshold <ms>",
      "stop the sweep when latency exceeds this, msec (default: 0, none)",
    )
    .option("--binary-search", "binary search between start and end for the latency threshold")
    .option(
      "--max-threads <n>",
      "in-flight cap in request-rate mode with --sync (default: 4 rate, 16 otherwise)",
    )
    .option("--max-error-rate <pct>", "a level with more failed requests than this % fails (default: 0)")
    .option("--stop-on-error", "stop the sweep at the first level that fails on errors");

  program.optionsGroup("Sequence Model Options:");
  program
    .option("--sequence-length <n>", "base length of a sequence (default: 20)")
    .option(
      "--sequence-length-variation <pct>",
      "lengths vary by up to +- this % of --sequence-length (default: 20)",
    )
    .option(
      "--sequence-id-range <start[:end]>",
      "correlation ids from start to end (excluded) (default: from 1, 2^32-1 ids)",
    )
    .option("--num-of-sequences <n>", "sequences in flight in request-rate mode (default: 4)")
    .option("--serial-sequences", "request-rate mode: at most one request in flight per sequence");

  program.optionsGroup("Input Data Options:");
  program
    .option(
      "--input-data <zero|random|file>",
      "input data, or a perf_analyzer JSON file (repeatable)",
      collect,
    )
    .option("-b <n>", "batch size of each request (default: 1)")
    .option("--shape <name:d1,d2>", "shape of an input with variable dimensions (repeatable)", collect)
    .option("--string-data <string>", "value of every string (BYTES) element")
    .option("--string-length <n>", "length of random strings (default: 128)")
    .option("--input-tensor-format <fmt>", "binary | json (default: binary)")
    .option("--output-tensor-format <fmt>", "binary | json (default: binary)");

  program.optionsGroup("Request Options:");
  program
    .option("-i <protocol>", "http | grpc (default: http)")
    .option("--streaming", "gRPC only: send over one bidirectional stream per context (async calls)")
    .option(
      "--grpc-compression-algorithm <algorithm>",
      "gRPC only: compress requests, none | gzip | deflate (default: none)",
    )
    .option(
      "-a, --async",
      "asynchronous requests (in request-rate mode: no in-flight cap; the default there)",
    )
    .option("--sync", "synchronous requests (in request-rate mode: at most --max-threads in flight)")
    .option(
      "-H <header:value>",
      "add an HTTP header (gRPC: metadata) to every request (repeatable)",
      collect,
    );

  program.optionsGroup("Server Options:");
  program
    .option("-u <url>", "server URL (default: localhost:8000 with -i http, localhost:8001 with -i grpc)")
    .option("--ssl-grpc-use-ssl [bool]", "gRPC only: use an encrypted channel (TLS)")
    .option("--ssl-grpc-root-certifications-file <path>", "PEM root certificates to trust (with TLS)")
    .option("--ssl-grpc-private-key-file <path>", "PEM client private key (mutual TLS)")
    .option("--ssl-grpc-certificate-chain-file <path>", "PEM client certificate chain (mutual TLS)");

  program.optionsGroup("Prometheus Metrics Options:");
  program
    .option("--collect-metrics", "scrape the server's Prometheus metrics during each window")
    .option("--metrics-url <url>", "metrics URL (default: localhost:8002/metrics)")
    .option("--metrics-interval <ms>", "scrape interval, msec (default: 1000)");

  program.optionsGroup("Report Options:");
  program
    .option("-f <path>", "write perf_analyzer's CSV latency report")
    .option("--verbose-csv", "add perf_analyzer's verbose columns to the CSV")
    .option(
      "--profile-export-file <path>",
      "write perf_analyzer's profile export JSON (per-request timestamps)",
    )
    .option("--json <path>", "write everything measured, HDR histograms included (for compare and merge)");

  // perf_analyzer's other flags: known (hidden from the help) so that they are refused by name, never as
  // "unknown option". The value is optional so that a bare flag is refused the same way.
  const unsupportedGiven: UnsupportedFlag[] = [];
  for (const flag of UNSUPPORTED_PERF_ANALYZER_FLAGS) {
    const option = new Option(flag.takesValue ? `${flag.flag} [value]` : flag.flag).hideHelp();
    program.addOption(option);
    program.on(`option:${option.name()}`, () => unsupportedGiven.push(flag));
  }
  program.addHelpText(
    "after",
    "\nperf_analyzer's other flags are recognised and refused by name (exit code 2): see the README.",
  );

  program.action((opts: Record<string, unknown>) => {
    const first = unsupportedGiven[0];
    if (first !== undefined) {
      onParsed({ kind: "unsupported", flag: first });
      return;
    }
    const options: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(opts)) options[SHORT_NAMES[key] ?? key] = value;
    onParsed({ kind: "run", options });
  });

  program
    .command("compare")
    .description("compare two --json results side by side and gate on them (exit 1 when the gate fails)")
    .argument("<baseline>", "baseline result (tbench --json)")
    .argument("<candidate>", "candidate result (tbench --json)")
    .option(
      "--metric <metric>",
      `metric to compare, repeatable: ${COMPARE_METRICS.join("|")} (default: throughput, p99)`,
      collect,
    )
    .option("--min-ratio <r>", "fail when candidate/baseline (latency: baseline/candidate) is below r")
    .option("--max-regression <pct>", "fail when the candidate is more than pct % worse")
    .action((baseline: string, candidate: string, opts: Record<string, unknown>) =>
      onParsed({ kind: "compare", baseline, candidate, options: opts }),
    );

  program
    .command("merge")
    .description("merge --json results of runs made at the same time (several machines) into one")
    .argument("<inputs...>", "results to merge (tbench --json)")
    .requiredOption("-o, --output <path>", "where to write the merged result")
    .action((inputs: string[], opts: Record<string, unknown>) =>
      onParsed({ kind: "merge", inputs, options: opts }),
    );

  program
    .command("report")
    .description("chart --json results: throughput vs latency per run, percentiles and server time per level")
    .argument("<inputs...>", "results to chart, one run each (tbench --json)")
    .requiredOption("-o, --output <path>", "report.html (every chart, works offline) or chart.svg")
    .action((inputs: string[], opts: Record<string, unknown>) =>
      onParsed({ kind: "report", inputs, options: opts }),
    );

  program
    .command("tune")
    .description(
      "find the model config that meets a latency budget: load candidate configs (explicit model control), " +
        "sweep each, rank them, restore the original",
    )
    .requiredOption(
      "-m, --model <name>",
      "model to tune (loaded, on a server in explicit model control mode)",
    )
    .option(
      "-u, --url <url>",
      "server URL (default: localhost:8000 with -i http, localhost:8001 with -i grpc)",
    )
    .option("-i, --protocol <protocol>", "http | grpc (default: http)")
    .option(
      "-H, --header <header:value>",
      "add an HTTP header (gRPC: metadata) to every call (repeatable)",
      collect,
    )
    .option("--latency-budget <metric:time>", "avg|p50|p90|p95|p99 under a time, e.g. p95:10ms")
    .option("--min-throughput <n>", "levels under this many infer/sec do not count")
    .option("--goal <goal>", "throughput (highest within the budget) | latency (lowest at --min-throughput)")
    .option("--batching <list>", "off,on (default: both when max_batch_size > 0)")
    .option(
      "--max-queue-delay-us <list>",
      "e.g. 0,500,2000 (default: 0, the configured delay (or 500), 4x it)",
    )
    .option(
      "--preferred-batch-size <list>",
      "none | auto | sizes joined by +, e.g. none,auto,4+8 (default: as configured)",
    )
    .option("--max-batch-size <list>", "e.g. 8,32 (default: as configured)")
    .option("--instance-count <list>", "e.g. 1,2 (default: the configured count and twice it)")
    .option(
      "--concurrency <list>",
      "concurrency levels of each sweep (default: 1,2,4,8,16,32; stops over the budget)",
    )
    .option("--max-runs <n>", "measure at most n configs")
    .option("--time-budget <duration>", "start no new config after this long, e.g. 10m")
    .option(
      "--restore-timeout <duration>",
      "keep trying to restore the original config this long (default: 60s)",
    )
    .option("-p, --measurement-interval <ms>", "window length, msec (default: 5000)")
    .option(
      "-s, --stability-percentage <pct>",
      "allowed variation between the last 3 windows, % (default: 10)",
    )
    .option("-r, --max-trials <n>", "maximum windows per level while seeking stability (default: 10)")
    .option("--measurement-mode <mode>", "time_windows | count_windows (default: time_windows)")
    .option(
      "--measurement-request-count <n>",
      "minimum requests per window in count_windows mode (default: 50)",
    )
    .option("--warmup-request-count <n>", "requests sent before measuring each config (default: 0)")
    .option("-b, --batch-size <n>", "batch size of each request (default: 1)")
    .option(
      "--input-data <zero|random|file>",
      "input data, or a perf_analyzer JSON file (repeatable)",
      collect,
    )
    .option("--shape <name:d1,d2>", "shape of an input with variable dimensions (repeatable)", collect)
    .addOption(new Option("-v, --verbose", "print each sweep as tbench does").argParser(count))
    .option("--output-config <dir>", "write the winner as DIR/<model>/config.pbtxt")
    .option(
      "--json <path>",
      "write every run's full result (tbench compare FILE#LABEL and tbench report read it)",
    )
    .action((opts: Record<string, unknown>) => onParsed({ kind: "tune", options: opts }));

  return program;
}
