import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { isDeepStrictEqual } from "node:util";
import { runCli } from "../cli/run-cli.js";
import { captureStream, startTuneServer, type TuneServer } from "../testing/tune-server.js";

/** Short windows and loose stability: these tests check behaviour, not figures. */
const FAST = ["-p", "300", "-s", "50", "-r", "4", "--concurrency", "1"];
/** Batching off and on at one delay and one instance, under a budget every config meets. */
const SMALL_SPACE = [
  ...["-m", "heavy", "--batching", "off,on", "--max-queue-delay-us", "500"],
  ...["--instance-count", "1", "--latency-budget", "p95:1s"],
];

async function tune(server: TuneServer, args: string[]) {
  const stdout = captureStream();
  const stderr = captureStream();
  const code = await runCli(["tune", "-u", server.server.httpUrl, ...args], {
    stdout: stdout.stream,
    stderr: stderr.stream,
    signal: new AbortController().signal,
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe("tbench tune: faults and bad input", { timeout: 60_000 }, () => {
  let server: TuneServer;
  before(async () => {
    server = await startTuneServer();
  });
  after(() => server.close());

  it("a candidate the server refuses is a table row with the server's message; the tune goes on and restores", async () => {
    const original = await server.client.modelConfig("heavy");
    const run = await tune(server, [
      "-m",
      "heavy",
      "--batching",
      "on",
      "--max-queue-delay-us",
      "500",
      "--preferred-batch-size",
      "64,none",
      "--instance-count",
      "1",
      "--latency-budget",
      "p95:1s",
      ...FAST,
    ]);
    assert.match(
      run.stdout,
      /on delay=500us pref=64 inst=1 .*refused: .*preferred size must be <= max batch size/,
    );
    assert.match(run.stdout, /on delay=500us inst=1 .*│ met/);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(await server.client.modelConfig("heavy"), original);
  });

  it("a budget nothing meets: exit 1, the closest config shown, the config restored", async () => {
    const original = await server.client.modelConfig("heavy");
    const run = await tune(server, [
      "-m",
      "heavy",
      "--batching",
      "off",
      "--instance-count",
      "1",
      "--latency-budget",
      "p95:1us",
      ...FAST,
    ]);
    assert.equal(run.code, 1);
    assert.match(
      run.stdout,
      /^No config meets p95 < 0\.001 ms, highest throughput; closest: off inst=1 at concurrency 1 /m,
    );
    assert.match(run.stdout, /off inst=1 .*not met/);
    assert.deepEqual(await server.client.modelConfig("heavy"), original);
  });

  it("--max-runs: the configs past it are listed as not run", async () => {
    const run = await tune(server, [...SMALL_SPACE, "--max-runs", "1", ...FAST]);
    assert.match(run.stdout, /on delay=500us inst=1 .*skipped: not run \(--max-runs\)/);
    assert.match(run.stdout, /off inst=1 .*│ met/);
  });

  it("the server gone mid-tune: what was measured is reported, then the request and config to restore by hand", async () => {
    const doomed = await startTuneServer();
    const original = await doomed.client.modelConfig("heavy");
    const watcher = (async () => {
      // Once a candidate is loaded, stop the server for good.
      while (isDeepStrictEqual(await doomed.client.modelConfig("heavy"), original)) await sleep(50);
      await doomed.server.close();
    })();
    try {
      const run = await tune(doomed, [...SMALL_SPACE, "--restore-timeout", "1s", ...FAST]);
      await watcher;
      assert.equal(run.code, 1);
      assert.match(run.stderr, /could not restore the original config of 'heavy'/);
      assert.match(
        run.stderr,
        /curl -X POST http:\/\/127\.0\.0\.1:\d+\/v2\/repository\/models\/heavy\/load -d '/,
      );
      const printed = run.stderr.split("\n").find((line) => line.startsWith("{"));
      assert.deepEqual(JSON.parse(printed ?? "null"), original);
      assert.match(run.stdout, /│ off inst=1 /, "the table still shows what was measured or tried");
    } finally {
      await doomed.close();
    }
  });

  it("an unknown model: one line, exit 1", async () => {
    const run = await tune(server, ["-m", "nope", "--latency-budget", "p95:10ms", ...FAST]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^tbench: error: .*'nope'.*\n$/);
  });

  it("bad flag values: one line naming the flag, what was expected and what was given, exit 2", async () => {
    const cases: [string[], RegExp][] = [
      [["--latency-budget", "p97:10ms"], /--latency-budget: expected METRIC:TIME .*got "p97:10ms"/],
      [
        ["--latency-budget", "p95:10ms", "--goal", "fast"],
        /--goal: expected throughput or latency, got "fast"/,
      ],
      [
        ["--latency-budget", "p95:10ms", "--concurrency", "1,x"],
        /--concurrency: expected a list .*got "1,x"/,
      ],
      [["--latency-budget", "p95:10ms", "--instance-count", "0"], /--instance-count: expected .*got "0"/],
      [
        ["--latency-budget", "p95:10ms", "--time-budget", "soon"],
        /--time-budget: expected a duration .*got "soon"/,
      ],
      [
        [],
        /--latency-budget: expected a budget such as p95:10ms with --goal throughput \(the default\), got none/,
      ],
    ];
    for (const [args, message] of cases) {
      const run = await tune(server, ["-m", "heavy", ...args]);
      assert.equal(run.code, 2, args.join(" "));
      assert.match(run.stderr, new RegExp(`^tbench: error: ${message.source}\\n$`));
    }
  });

  it("a server not in explicit mode: says so and how to start it, changes nothing", async () => {
    const polling = await startTuneServer("none");
    try {
      const original = await polling.client.modelConfig("heavy");
      const run = await tune(polling, ["-m", "heavy", "--latency-budget", "p95:10ms", ...FAST]);
      assert.equal(run.code, 1);
      assert.match(
        run.stderr,
        /^tbench: error: tune: the server at .* does not allow model loads \(explicit model load \/ unload is not allowed.*\); start it with --model-control-mode=explicit --load-model=heavy .*\n$/,
      );
      assert.deepEqual(await polling.client.modelConfig("heavy"), original);
    } finally {
      await polling.close();
    }
  });
});
