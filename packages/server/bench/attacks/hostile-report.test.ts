// bench:hostile's rules that do not need a server: which flags a --help text lists and what defaults it
// states (a row is "not measured" when its flag is missing), how a stream's bytes and longest line are
// counted across chunks (row 3), and what the Markdown says for a measured and an unmeasured row.
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import { type HostileResult, hostileMarkdown } from "./report.js";
import { createScope, missingFlags, type RowResult } from "./row.js";
import { countOutput, parseServerHelp } from "./server-child.js";

const HELP = `Usage: tbench-server [options]

Options:
  -V, --version                                          output the version number
  --http-port <port>                                     HTTP port (0: any free port) (default: "8000")
  --http-max-input-size <bytes>                          largest request body in bytes (default: "67108864")
  --grpc-max-receive-message-size <bytes>                largest gRPC request message in bytes; a larger one is
                                                         answered RESOURCE_EXHAUSTED (default 134217728; Triton: INT32_MAX, no flag)
  --http-max-buffered-bytes <bytes>                      most bytes held (default: an eighth of the machine's memory, at least twice --http-max-input-size)
  -h, --help                                             display help for command
`;

describe("bench:hostile", () => {
  it("reads the flags and their stated defaults from --help", () => {
    const help = parseServerHelp(HELP);
    assert.deepEqual(
      [...help.flags],
      [
        "--version",
        "--http-port",
        "--http-max-input-size",
        "--grpc-max-receive-message-size",
        "--http-max-buffered-bytes",
        "--help",
      ],
    );
    assert.equal(help.defaults.get("--http-port"), "8000");
    assert.equal(help.defaults.get("--http-max-input-size"), "67108864");
    assert.equal(help.defaults.get("--grpc-max-receive-message-size"), "134217728");
    assert.equal(
      help.defaults.get("--http-max-buffered-bytes"),
      "an eighth of the machine's memory, at least twice --http-max-input-size",
    );
  });

  it("a row whose flag is missing is not measured and names the flag", () => {
    const help = parseServerHelp(HELP);
    assert.equal(missingFlags(2, "big", help, ["--grpc-max-receive-message-size"]), undefined);
    const row = missingFlags(4, "held", help, ["--http-max-buffered-bytes", "--no-such-flag"]);
    assert.equal(row?.verdict, "not measured");
    assert.equal(row?.verdictText, "not measured: flag --no-such-flag missing");
  });

  it("counts bytes and the longest line across chunks, from the last reset", async () => {
    const stream = new PassThrough();
    const counter = countOutput(stream);
    stream.write("ab\nabcd");
    stream.write("ef\nx\n");
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(counter.bytes, 12);
    assert.equal(counter.longestLine, 6);
    counter.resetLongest();
    stream.write("abc\n");
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(counter.longestLine, 3);
    assert.equal(counter.bytes, 16);
  });

  it("a scope closes last-opened first and goes on past a closer that throws", async () => {
    const closed: string[] = [];
    const scope = createScope();
    scope.defer(() => closed.push("server"));
    scope.defer(() => {
      throw new Error("socket already gone");
    });
    scope.defer(async () => closed.push("client"));
    await scope.close();
    await scope.close();
    assert.deepEqual(closed, ["client", "server"]);
  });

  it("the Markdown gives each row its verdict and the number, and an unmeasured row its reason", () => {
    const met: RowResult = {
      row: 1,
      attack: "long name",
      done: "one channel",
      figures: {},
      figuresText: "50/50 OK | 322 bytes",
      verdict: "met",
      verdictText: "50/50 OK (target 50/50)",
      loadAverage: [1, 2, 3],
      seconds: 3.5,
    };
    const result: HostileResult = {
      benchmark: "hostile",
      environment: {
        date: "2026-01-01T00:00:00.000Z",
        cpus: 2,
        cpuModel: "cpu",
        node: "v20",
        quick: false,
        loadAverageStart: [1, 1, 1],
        loadAverageEnd: [2, 2, 2],
        memoryGiB: 23,
      },
      server: { root: "/repo", commit: "abc1234" },
      flags: { "--http-max-buffered-bytes": false },
      rows: [met, missingFlags(4, "held", parseServerHelp(""), ["--http-max-buffered-bytes"])!],
    };
    const md = hostileMarkdown(result);
    assert.match(
      md,
      /\| 1 \| long name \| one channel \| 50\/50 OK \\\| 322 bytes \| \*\*met\*\*: 50\/50 OK \(target 50\/50\) \|/,
    );
    assert.match(
      md,
      /\| 4 \| held \| .* \| - \| \*\*not measured: flag --http-max-buffered-bytes missing\*\* \|/,
    );
    assert.match(md, /`--http-max-buffered-bytes` \*\*missing\*\*/);
    assert.match(md, /Memory 23 GiB/);
  });
});
