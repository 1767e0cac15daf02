import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runTbench } from "../testing/cli-harness.js";
import { resolveBenchConfig } from "./bench-config.js";
import { UNSUPPORTED_PERF_ANALYZER_FLAGS } from "./perf-analyzer-flags.js";
import { createProgram, type ParsedCommand } from "./program.js";

// The oracle: perf_analyzer's own option list, independent of the table under test. Long options in the
// order of the `long_options` table of perf_analyzer's src/command_line_parser.cc (indices 0..66,
// December 2025), `true` where the option is `required_argument`; then its getopt short-option string.
const PERF_ANALYZER_LONG_OPTIONS: readonly (readonly [string, boolean])[] = [
  ["streaming", false],
  ["max-threads", true],
  ["sequence-length", true],
  ["percentile", true],
  ["data-directory", true],
  ["shape", true],
  ["measurement-interval", true],
  ["concurrency-range", true],
  ["latency-threshold", true],
  ["stability-percentage", true],
  ["max-trials", true],
  ["input-data", true],
  ["string-length", true],
  ["string-data", true],
  ["async", false],
  ["sync", false],
  ["request-rate-range", true],
  ["num-of-sequences", true],
  ["binary-search", false],
  ["request-distribution", true],
  ["request-intervals", true],
  ["shared-memory", true],
  ["output-shared-memory-size", true],
  ["service-kind", true],
  ["model-signature-name", true],
  ["grpc-compression-algorithm", true],
  ["measurement-mode", true],
  ["measurement-request-count", true],
  ["triton-server-directory", true],
  ["model-repository", true],
  ["sequence-id-range", true],
  ["ssl-grpc-use-ssl", false],
  ["ssl-grpc-root-certifications-file", true],
  ["ssl-grpc-private-key-file", true],
  ["ssl-grpc-certificate-chain-file", true],
  ["ssl-https-verify-peer", true],
  ["ssl-https-verify-host", true],
  ["ssl-https-ca-certificates-file", true],
  ["ssl-https-client-certificate-file", true],
  ["ssl-https-client-certificate-type", true],
  ["ssl-https-private-key-file", true],
  ["ssl-https-private-key-type", true],
  ["verbose-csv", false],
  ["enable-mpi", false],
  ["trace-level", true],
  ["trace-rate", true],
  ["trace-count", true],
  ["log-frequency", true],
  ["collect-metrics", false],
  ["metrics-url", true],
  ["metrics-interval", true],
  ["sequence-length-variation", true],
  ["bls-composing-models", true],
  ["serial-sequences", false],
  ["input-tensor-format", true],
  ["output-tensor-format", true],
  ["version", false],
  ["profile-export-file", true],
  ["periodic-concurrency-range", true],
  ["request-period", true],
  ["request-parameter", true],
  ["endpoint", true],
  ["request-count", true],
  ["warmup-request-count", true],
  ["fixed-schedule", false],
  ["session-concurrency", true],
  ["grpc-method", true],
];
const PERF_ANALYZER_SHORT_OPTIONS = "vdazc:u:m:x:b:t:p:i:H:l:r:s:f:";

/** Every perf_analyzer flag as typed, with whether it takes a value. */
function perfAnalyzerFlags(): [string, boolean][] {
  const flags: [string, boolean][] = PERF_ANALYZER_LONG_OPTIONS.map(([name, value]) => [`--${name}`, value]);
  for (const [, letter, colon] of PERF_ANALYZER_SHORT_OPTIONS.matchAll(/([A-Za-z])(:?)/g)) {
    flags.push([`-${letter}`, colon === ":"]);
  }
  return flags;
}

// How each flag tbench implements is exercised: arguments that must parse *and* resolve into a config.
// `--version` prints and exits; it is checked separately.
const IMPLEMENTED: Record<string, readonly string[]> = {
  "--max-threads": ["--max-threads", "8"],
  "--percentile": ["--percentile", "95"],
  "--shape": ["--shape", "INPUT0:4"],
  "--measurement-interval": ["--measurement-interval", "1000"],
  "--concurrency-range": ["--concurrency-range", "1:4:1"],
  "--latency-threshold": ["--latency-threshold", "10"],
  "--stability-percentage": ["--stability-percentage", "5"],
  "--max-trials": ["--max-trials", "3"],
  "--input-data": ["--input-data", "zero"],
  "--string-length": ["--string-length", "16"],
  "--string-data": ["--string-data", "abc"],
  "--async": ["--async"],
  "--sync": ["--sync"],
  "--request-rate-range": ["--request-rate-range", "100:200:100"],
  "--binary-search": ["--binary-search", "--concurrency-range", "1:8", "-l", "10"],
  "--request-distribution": ["--request-distribution", "poisson"],
  "--request-intervals": ["--request-intervals", "intervals.txt"],
  "--measurement-mode": ["--measurement-mode", "count_windows"],
  "--measurement-request-count": ["--measurement-request-count", "100"],
  "--verbose-csv": ["--verbose-csv"],
  "--collect-metrics": ["--collect-metrics"],
  "--metrics-url": ["--metrics-url", "localhost:9002/metrics"],
  "--metrics-interval": ["--metrics-interval", "500"],
  "--input-tensor-format": ["--input-tensor-format", "json"],
  "--output-tensor-format": ["--output-tensor-format", "json"],
  "--profile-export-file": ["--profile-export-file", "profile.json"],
  "--request-count": ["--request-count", "100"],
  "--warmup-request-count": ["--warmup-request-count", "10"],
  "--sequence-length": ["--sequence-length", "10"],
  "--sequence-length-variation": ["--sequence-length-variation", "5"],
  "--sequence-id-range": ["--sequence-id-range", "1:1000"],
  "--num-of-sequences": ["--num-of-sequences", "8"],
  "--serial-sequences": ["--serial-sequences"],
  "-v": ["-v"],
  "-a": ["-a"],
  "-u": ["-u", "localhost:9000"],
  "-m": ["-m", "other"],
  "-x": ["-x", "2"],
  "-b": ["-b", "4"],
  "-p": ["-p", "1000"],
  "-i": ["-i", "http"],
  "--streaming": ["-i", "grpc", "--streaming"],
  "--grpc-compression-algorithm": ["-i", "grpc", "--grpc-compression-algorithm", "gzip"],
  "--ssl-grpc-use-ssl": ["-i", "grpc", "--ssl-grpc-use-ssl"],
  "--ssl-grpc-root-certifications-file": [
    "-i",
    "grpc",
    "--ssl-grpc-use-ssl",
    "--ssl-grpc-root-certifications-file",
    "ca.pem",
  ],
  "--ssl-grpc-private-key-file": [
    "-i",
    "grpc",
    "--ssl-grpc-use-ssl",
    "--ssl-grpc-private-key-file",
    "client.key",
    "--ssl-grpc-certificate-chain-file",
    "client.pem",
  ],
  "--ssl-grpc-certificate-chain-file": [
    "-i",
    "grpc",
    "--ssl-grpc-use-ssl",
    "--ssl-grpc-certificate-chain-file",
    "client.pem",
    "--ssl-grpc-private-key-file",
    "client.key",
  ],
  "-H": ["-H", "x-key:value"],
  "-l": ["-l", "10"],
  "-r": ["-r", "3"],
  "-s": ["-s", "5"],
  "-f": ["-f", "out.csv"],
};

function parse(args: readonly string[]): Promise<ParsedCommand | undefined> {
  let parsed: ParsedCommand | undefined;
  const program = createProgram("0.0.0", (command) => {
    parsed = command;
  });
  program.exitOverride();
  program.configureOutput({ writeOut: () => {}, writeErr: () => {} });
  return program.parseAsync(["-m", "simple", ...args], { from: "user" }).then(() => parsed);
}

function runQuietly(args: readonly string[]): Promise<{ code: number; stderr: string }> {
  return runTbench(args, {
    createClient: () => {
      throw new Error("no server call is expected");
    },
  });
}

describe("perf_analyzer's flags", () => {
  it("the oracle is perf_analyzer's whole list: 67 long options, 17 short ones", () => {
    assert.equal(PERF_ANALYZER_LONG_OPTIONS.length, 67);
    assert.equal(new Set(PERF_ANALYZER_LONG_OPTIONS.map(([name]) => name)).size, 67);
    assert.equal(perfAnalyzerFlags().length, 67 + 17);
  });

  it("every one is implemented (parses and resolves) or refused by name with exit code 2", async () => {
    const unsupported = new Map(UNSUPPORTED_PERF_ANALYZER_FLAGS.map((f) => [f.flag, f]));
    const missing: string[] = [];
    for (const [flag, takesValue] of perfAnalyzerFlags()) {
      const listed = unsupported.get(flag);
      if (listed !== undefined) {
        assert.equal(listed.takesValue, takesValue, `${flag}: whether it takes a value`);
        const args = ["-m", "simple", flag, ...(takesValue ? ["some-value"] : [])];
        const run = await runQuietly(args);
        assert.equal(run.code, 2, `${flag}: exit code`);
        const escaped = flag.replace(/-/g, "\\-");
        assert.match(
          run.stderr,
          new RegExp(
            `^tbench: error: tbench does not support perf_analyzer's ${escaped} yet(; use [^\\n]+)?\\n$`,
          ),
        );
        // A bare flag (a copied script's last word) is refused the same way.
        assert.equal((await runQuietly(["-m", "simple", flag])).code, 2, `${flag} without a value`);
        continue;
      }
      if (flag === "--version") {
        const run = await runQuietly(["--version"]);
        assert.equal(run.code, 0);
        continue;
      }
      const args = IMPLEMENTED[flag];
      if (args === undefined) {
        missing.push(flag);
        continue;
      }
      const parsed = await parse(args);
      assert.equal(parsed?.kind, "run", `${flag} parses as a run`);
      assert.doesNotThrow(
        () => resolveBenchConfig((parsed as { options: Record<string, unknown> }).options),
        `${flag} resolves`,
      );
    }
    assert.deepEqual(missing, [], "perf_analyzer flags neither implemented nor refused by name");
  });

  it("the refusal list holds only perf_analyzer flags tbench does not also implement", async () => {
    const known = new Set(perfAnalyzerFlags().map(([flag]) => flag));
    for (const { flag } of UNSUPPORTED_PERF_ANALYZER_FLAGS) {
      assert.ok(known.has(flag), `${flag} is a perf_analyzer flag`);
      assert.equal(IMPLEMENTED[flag], undefined, `${flag} is not implemented as well`);
    }
  });

  it("the first unsupported flag on the line is the one named; deprecated ones say what to use", async () => {
    const run = await runQuietly(["-m", "simple", "-z", "--service-kind=triton_c_api", "-t", "4"]);
    assert.equal(run.code, 2);
    assert.equal(
      run.stderr,
      "tbench: error: tbench does not support perf_analyzer's -z yet; use --input-data zero\n",
    );
    const copied = await runQuietly(["-m", "simple", "--service-kind", "triton_c_api", "-z"]);
    assert.equal(
      copied.stderr,
      "tbench: error: tbench does not support perf_analyzer's --service-kind yet\n",
    );
  });

  it("a flag perf_analyzer does not have either is still commander's unknown option", async () => {
    const run = await runQuietly(["-m", "simple", "--bogus"]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /^tbench: error: unknown option '--bogus'/);
  });
});
