/**
 * What one request may cost the server: a BYTES request far over --max-bytes-tensor-elements is refused
 * from its shape (it used to grow the main thread's heap to the V8 limit and kill the process), and the
 * largest request each datatype allows keeps the server's peak RSS within the README's stated bound. The
 * server runs as a child process (tbench-server from source) so that its RSS is its own, a fresh one per
 * measured case; the peak is VmHWM from /proc/<pid>/status, reset before the request by writing 5 to
 * /proc/<pid>/clear_refs.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { after, before, describe, it } from "node:test";
import { sourceNodeArgs } from "../../../scripts/testing/source-node.js";
import { bytesDataFromStrings, DEFAULT_MAX_BYTES_TENSOR_ELEMENTS } from "./core/bytes-data.js";
import { silentLogger } from "./core/logger.js";
import { DEFAULT_HTTP_MAX_INPUT_SIZE, startServer } from "./server.js";

const MAIN = new URL("./cli/main.ts", import.meta.url).pathname;
const REPOSITORY = new URL("../../../examples/models", import.meta.url).pathname;
const MIB = 1024 * 1024;
const LIMIT = DEFAULT_MAX_BYTES_TENSOR_ELEMENTS;

/**
 * The README's bound (Limits): one request may raise the server's peak RSS by at most FIXED_BODY_FACTOR
 * times its body (fixed-size datatypes), or BYTES_BODY_FACTOR times its body plus BYTES_PER_ELEMENT bytes
 * per element (BYTES), plus SLACK for allocator and heap noise. Measured on a fresh server (2 cores,
 * Node 20): fixed-size 4.1-5.3x body; BYTES about 10.5x body + 70 bytes per element (README, Limits).
 */
const FIXED_BODY_FACTOR = 6;
const BYTES_BODY_FACTOR = 14;
const BYTES_PER_ELEMENT = 128;
const SLACK = 48 * MIB;

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

function post(url: string, path: string, body: Buffer, headers: Record<string, string | number>) {
  return new Promise<Answer>((resolve, reject) => {
    const req = httpRequest(
      `${url}${path}`,
      { method: "POST", headers: { "content-length": body.byteLength, ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** A binary request for identity_<type> with one input section, asking for the output in binary. */
function binaryRequest(
  datatype: string,
  count: number,
  section: Buffer,
): { body: Buffer; headerLength: number } {
  const header = Buffer.from(
    JSON.stringify({
      inputs: [
        {
          name: "INPUT0",
          datatype,
          shape: [1, count],
          parameters: { binary_data_size: section.byteLength },
        },
      ],
      outputs: [{ name: "OUTPUT0", parameters: { binary_data: true } }],
    }),
  );
  return { body: Buffer.concat([header, section]), headerLength: header.byteLength };
}

/** `count` BYTES elements of `length` printable bytes each, every element different, in wire form. */
function bytesSection(count: number, length: number): Buffer {
  const section = Buffer.allocUnsafe(count * (4 + length));
  let offset = 0;
  for (let i = 0; i < count; i++) {
    section.writeUInt32LE(length, offset);
    section.fill(33 + (i % 90), offset + 4, offset + 4 + length);
    if (length >= 8) section.write(i.toString(36).padStart(8, "0"), offset + 4, "latin1");
    offset += 4 + length;
  }
  return section;
}

function memoryKiB(pid: number, field: "VmHWM" | "VmRSS"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
  assert.ok(
    match !== null,
    `tbench-server (pid ${pid}) has no ${field}: it exited (${status.split("\n")[2]})`,
  );
  return Number(match[1]);
}

/** tbench-server from source in a child process, serving `models` on a free port. */
async function startChild(models: readonly string[], extraArgs: readonly string[] = []) {
  const child = spawn(
    process.execPath,
    [
      ...sourceNodeArgs(MAIN),
      "--model-repository",
      REPOSITORY,
      "--http-port",
      "0",
      "--allow-metrics",
      "false",
      "--model-control-mode",
      "explicit",
      ...models.flatMap((m) => ["--load-model", m]),
      ...extraArgs,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let url = "";
  while (url === "") {
    const match = /Started HTTPService at (\S+)/.exec(stderr);
    if (match !== null) url = `http://${match[1]}`;
    else if (child.exitCode !== null) assert.fail(`tbench-server exited early: ${stderr}`);
    else await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const close = async () => {
    if (child.exitCode !== null) return;
    child.kill("SIGKILL");
    await once(child, "exit");
  };
  return { child: child as ChildProcess, url, close, stderr: () => stderr.slice(-4000) };
}

/** Sends `body`; returns the answer and how far it raised the server's RSS (peak during it minus before). */
async function measured(pid: number, url: string, path: string, body: Buffer, headerLength: number) {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
  const before = memoryKiB(pid, "VmRSS");
  const answer = await post(url, path, body, { "inference-header-content-length": headerLength });
  const growth = (memoryKiB(pid, "VmHWM") - before) * 1024;
  return { answer, growth };
}

async function simpleAnswers(url: string): Promise<void> {
  const body = Buffer.from(
    JSON.stringify({
      inputs: [
        { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: Array(16).fill(2) },
        { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: Array(16).fill(1) },
      ],
      outputs: [{ name: "OUTPUT0" }],
    }),
  );
  const res = await post(url, "/v2/models/simple/infer", body, { "content-type": "application/json" });
  assert.equal(res.status, 200, res.body.toString());
  assert.deepEqual(JSON.parse(res.body.toString()).outputs[0].data, Array(16).fill(3));
}

const refusal = (count: number, limit: number) =>
  `input 'INPUT0' of model 'identity_bytes' has ${count} BYTES elements, more than the ${limit} allowed per ` +
  "BYTES tensor. Use --max-bytes-tensor-elements to increase the limit.";

describe("BYTES requests over the element limit", { timeout: 60_000 }, () => {
  let server: Awaited<ReturnType<typeof startChild>>;
  before(async () => {
    server = await startChild(["simple", "identity_bytes"]);
  });
  after(() => server.close());

  const path = "/v2/models/identity_bytes/infer";
  const bomb = binaryRequest("BYTES", 16_000_000, Buffer.alloc(4 * 16_000_000));

  it("a 16M-element request (61 MiB of empty elements) is refused with 400; the server serves on", async (t) => {
    assert.ok(bomb.body.byteLength < DEFAULT_HTTP_MAX_INPUT_SIZE, "inside the body limit");
    const { answer, growth } = await measured(
      server.child.pid!,
      server.url,
      path,
      bomb.body,
      bomb.headerLength,
    );
    t.diagnostic(`16M-element BYTES: body 61.0 MiB, RSS +${(growth / MIB).toFixed(0)} MiB`);
    assert.equal(answer.status, 400);
    assert.deepEqual(JSON.parse(answer.body.toString()), { error: refusal(16_000_000, LIMIT) });
    assert.ok(growth <= FIXED_BODY_FACTOR * bomb.body.byteLength + SLACK, `RSS grew ${growth} bytes`);
    await simpleAnswers(server.url);
  });

  it("three of them at once are all refused with 400; the server serves on", async () => {
    const headers = { "inference-header-content-length": bomb.headerLength };
    const answers = await Promise.all([0, 1, 2].map(() => post(server.url, path, bomb.body, headers)));
    for (const answer of answers) {
      assert.equal(answer.status, 400);
      assert.deepEqual(JSON.parse(answer.body.toString()), { error: refusal(16_000_000, LIMIT) });
    }
    await simpleAnswers(server.url);
  });

  it("one element over the limit is refused from the shape, binary or JSON, before the data is read", async () => {
    const over = binaryRequest("BYTES", LIMIT + 1, Buffer.alloc(4 * (LIMIT + 1)));
    const headers = { "inference-header-content-length": over.headerLength };
    const binary = await post(server.url, path, over.body, headers);
    assert.equal(binary.status, 400);
    assert.deepEqual(JSON.parse(binary.body.toString()), { error: refusal(LIMIT + 1, LIMIT) });
    // The shape alone decides: no data section at all gets the same answer, not a size complaint.
    const bare = binaryRequest("BYTES", LIMIT + 1, Buffer.alloc(0));
    const noData = await post(server.url, path, bare.body, {
      "inference-header-content-length": bare.headerLength,
    });
    assert.deepEqual(JSON.parse(noData.body.toString()), { error: refusal(LIMIT + 1, LIMIT) });
    const json = Buffer.from(
      JSON.stringify({
        inputs: [
          { name: "INPUT0", datatype: "BYTES", shape: [1, LIMIT + 1], data: Array(LIMIT + 1).fill("") },
        ],
      }),
    );
    const jsonAnswer = await post(server.url, path, json, { "content-type": "application/json" });
    assert.equal(jsonAnswer.status, 400);
    assert.deepEqual(JSON.parse(jsonAnswer.body.toString()), { error: refusal(LIMIT + 1, LIMIT) });
  });
});

describe("--max-bytes-tensor-elements / maxBytesTensorElements", { timeout: 60_000 }, () => {
  it("sets the limit for HTTP requests and for core.infer alike", async () => {
    const server = await startServer({
      modelRepository: REPOSITORY,
      httpPort: 0,
      metricsPort: false,
      modelControlMode: "explicit",
      loadModels: ["identity_bytes"],
      maxBytesTensorElements: 3,
      logger: silentLogger,
    });
    try {
      const body = (count: number) =>
        JSON.stringify({
          inputs: [{ name: "INPUT0", datatype: "BYTES", shape: [1, count], data: Array(count).fill("ab") }],
        });
      const ok = await fetch(`${server.httpUrl}/v2/models/identity_bytes/infer`, {
        method: "POST",
        body: body(3),
      });
      assert.equal(ok.status, 200);
      assert.deepEqual(((await ok.json()) as { outputs: { data: string[] }[] }).outputs[0]!.data, [
        "ab",
        "ab",
        "ab",
      ]);
      const over = await fetch(`${server.httpUrl}/v2/models/identity_bytes/infer`, {
        method: "POST",
        body: body(4),
      });
      assert.equal(over.status, 400);
      assert.deepEqual(await over.json(), { error: refusal(4, 3) });
      await assert.rejects(
        server.core.infer({
          model: "identity_bytes",
          inputs: [
            {
              name: "INPUT0",
              datatype: "BYTES",
              shape: [1, 4],
              data: bytesDataFromStrings(["", "", "", ""]),
            },
          ],
        }),
        { status: "INVALID_ARG", message: `[request id: <id_unknown>] ${refusal(4, 3)}` },
      );
    } finally {
      await server.close();
    }
  });
});

// The largest request each size class allows: BYTES at the element limit (empty elements: the most elements
// per body byte; 59-byte elements: at the body limit too), then fixed-size types filling the body limit.
// One fresh server per case, so that no case inherits another's garbage.
const cases: { name: string; datatype: string; count: number; section: () => Buffer }[] = [
  {
    name: "BYTES, 2^20 empty elements",
    datatype: "BYTES",
    count: LIMIT,
    section: () => Buffer.alloc(4 * LIMIT),
  },
  {
    name: "BYTES, 2^20 59-byte elements",
    datatype: "BYTES",
    count: LIMIT,
    section: () => bytesSection(LIMIT, 59),
  },
];
for (const [datatype, size] of [
  ["INT8", 1],
  ["FP16", 2],
  ["FP32", 4],
  ["INT64", 8],
] as const) {
  const count = Math.floor((DEFAULT_HTTP_MAX_INPUT_SIZE - 4096) / size);
  const section = () => {
    const bytes = Buffer.allocUnsafe(count * size);
    for (let i = 0; i < bytes.byteLength; i += 4096) bytes[i] = i & 0x7f;
    return bytes;
  };
  cases.push({ name: `${datatype} filling 64 MiB`, datatype, count, section });
}

// The time limit is per case: six cases of 64 MiB each take minutes together on a loaded 2-core machine.
describe("the largest request of each datatype", () => {
  for (const c of cases) {
    it(`${c.name}: answered 200 unchanged, peak RSS within the stated bound`, {
      timeout: 120_000,
    }, async (t) => {
      const model = `identity_${c.datatype.toLowerCase()}`;
      const server = await startChild([model]);
      try {
        const section = c.section();
        const { body, headerLength } = binaryRequest(c.datatype, c.count, section);
        assert.ok(body.byteLength <= DEFAULT_HTTP_MAX_INPUT_SIZE, `${body.byteLength} bytes`);
        const path = `/v2/models/${model}/infer`;
        const { answer, growth } = await measured(server.child.pid!, server.url, path, body, headerLength);
        assert.equal(answer.status, 200, answer.body.subarray(0, 300).toString());
        const jsonLength = Number(answer.headers["inference-header-content-length"]);
        const output = JSON.parse(answer.body.subarray(0, jsonLength).toString()).outputs[0];
        assert.deepEqual(output.shape, [1, c.count]);
        assert.ok(answer.body.subarray(jsonLength).equals(section), "output bytes equal the input's");
        const bound =
          c.datatype === "BYTES"
            ? BYTES_BODY_FACTOR * body.byteLength + BYTES_PER_ELEMENT * c.count + SLACK
            : FIXED_BODY_FACTOR * body.byteLength + SLACK;
        t.diagnostic(
          `${c.name}: body ${(body.byteLength / MIB).toFixed(1)} MiB, RSS +${(growth / MIB).toFixed(0)} MiB ` +
            `(${(growth / body.byteLength).toFixed(2)}x body), bound ${(bound / MIB).toFixed(0)} MiB`,
        );
        assert.ok(
          growth <= bound,
          `RSS grew ${(growth / MIB).toFixed(0)} MiB, bound ${(bound / MIB).toFixed(0)} MiB`,
        );
      } catch (error) {
        const { exitCode, signalCode } = server.child;
        if (exitCode === null && signalCode === null) throw error;
        throw new Error(`tbench-server died (${exitCode ?? signalCode}); its stderr: ${server.stderr()}`, {
          cause: error,
        });
      } finally {
        await server.close();
      }
    });
  }
});
