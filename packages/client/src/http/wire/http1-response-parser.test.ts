// The wire pool's response parser on byte strings: every framing (Content-Length, chunked, until close, no
// body), each fed whole and split at every byte (heads and bodies across chunks), keep-alive decisions, and
// the malformed answers it must refuse with undici's error classes.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Http1ResponseParser, keepAliveHintMs } from "./http1-response-parser.js";

interface Parsed {
  status?: number;
  statusText?: string;
  headers?: string[];
  body: string;
  end?: { reusable: boolean };
  error?: Error & { code?: string };
  events: string[];
}

function parser(noBody = false, maxHeaderBytes?: number) {
  const out: Parsed = { body: "", events: [] };
  const p = new Http1ResponseParser(
    {
      onResponseHead(status, rawHeaders, statusText) {
        out.events.push("head");
        out.status = status;
        out.statusText = statusText;
        out.headers = rawHeaders.map((b) => b.toString("latin1"));
      },
      onResponseData(chunk) {
        out.events.push("data");
        out.body += chunk.toString("latin1");
      },
      onResponseEnd(reusable) {
        out.events.push("end");
        out.end = { reusable };
      },
      onResponseError(error) {
        out.events.push("error");
        out.error = error;
      },
    },
    maxHeaderBytes,
  );
  p.start(noBody);
  return { p, out };
}

/** Parses `text` in one piece, and split in two at every byte; all must agree. Returns the one-piece result. */
function parseEverySplit(text: string, opts: { noBody?: boolean; eof?: boolean } = {}): Parsed {
  const bytes = Buffer.from(text, "latin1");
  const whole = parser(opts.noBody);
  whole.p.execute(bytes);
  if (opts.eof) whole.p.eof();
  for (let at = 1; at < bytes.length; at++) {
    const split = parser(opts.noBody);
    split.p.execute(bytes.subarray(0, at));
    split.p.execute(bytes.subarray(at));
    if (opts.eof) split.p.eof();
    const { events: _a, ...a } = whole.out;
    const { events: _b, ...b } = split.out;
    assert.deepEqual(b, a, `split at byte ${at}`);
  }
  return whole.out;
}

describe("framing", () => {
  test("Content-Length: status, raw header pairs (values trimmed), body, reusable", () => {
    const out = parseEverySplit(
      'HTTP/1.1 200 OK\r\nContent-Type:  application/json \r\nContent-Length: 11\r\nX-Empty:\r\n\r\n{"ok":true}',
    );
    assert.equal(out.status, 200);
    assert.equal(out.statusText, "OK");
    assert.deepEqual(out.headers, [
      "Content-Type",
      "application/json",
      "Content-Length",
      "11",
      "X-Empty",
      "",
    ]);
    assert.equal(out.body, '{"ok":true}');
    assert.deepEqual(out.end, { reusable: true });
  });

  test("a status line without a reason phrase", () => {
    const out = parseEverySplit("HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n");
    assert.equal(out.status, 404);
    assert.equal(out.statusText, "");
    assert.deepEqual(out.end, { reusable: true });
  });

  test("chunked, with extensions, upper-case hex and trailers", () => {
    const out = parseEverySplit(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
        "5;name=value\r\nhello\r\nA\r\n, chunked!\r\n0\r\nX-Trailer: yes\r\n\r\n",
    );
    assert.equal(out.body, "hello, chunked!");
    assert.deepEqual(out.end, { reusable: true });
  });

  test("chunked without trailers", () => {
    assert.equal(
      parseEverySplit("HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        .body,
      "abc",
    );
  });

  test("neither length nor chunked: the body runs until the server closes; the connection is not reused", () => {
    const out = parseEverySplit("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", {
      eof: true,
    });
    assert.equal(out.body, "until the end");
    assert.deepEqual(out.end, { reusable: false });
  });

  test("1xx answers are skipped; the final answer follows", () => {
    const out = parseEverySplit(
      "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
    );
    assert.equal(out.status, 201);
    assert.deepEqual(out.headers, ["Content-Length", "2"]);
    assert.equal(out.body, "ok");
  });

  test("HEAD, 204 and 304 answers have no body, whatever their Content-Length says", () => {
    const head = parseEverySplit("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", { noBody: true });
    assert.deepEqual([head.body, head.end], ["", { reusable: true }]);
    for (const status of [204, 304]) {
      const out = parseEverySplit(`HTTP/1.1 ${status} X\r\nContent-Length: 5\r\n\r\n`);
      assert.deepEqual([out.status, out.body, out.end], [status, "", { reusable: true }]);
    }
  });

  test("a head split across many small chunks", () => {
    const { p, out } = parser();
    for (const byte of Buffer.from("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"))
      p.execute(Buffer.of(byte));
    assert.deepEqual([out.status, out.body, out.end], [200, "abc", { reusable: true }]);
  });
});

describe("keep-alive", () => {
  test("Connection: close, HTTP/1.0 by default, and HTTP/1.0 with Connection: keep-alive", () => {
    assert.deepEqual(
      parseEverySplit("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").end,
      {
        reusable: false,
      },
    );
    assert.deepEqual(parseEverySplit("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").end, {
      reusable: false,
    });
    assert.deepEqual(
      parseEverySplit("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n").end,
      { reusable: true },
    );
  });

  test("one parser over answers whose Connection and Keep-Alive headers change (remembered values are not stale)", () => {
    const { p, out } = parser();
    const answers: [string, boolean, number | undefined][] = [
      ["Connection: keep-alive\r\nKeep-Alive: timeout=5", true, 5000],
      ["Connection: close\r\nKeep-Alive: timeout=5", false, 5000],
      ["Connection: keep-alive\r\nKeep-Alive: timeout=9", true, 9000],
      ["Connection: Keep-Alive", true, undefined],
    ];
    for (const [headers, reusable, hint] of answers) {
      p.start(false);
      p.execute(Buffer.from(`HTTP/1.1 200 OK\r\n${headers}\r\nContent-Length: 0\r\n\r\n`));
      assert.deepEqual([out.end, p.keepAliveHintMs], [{ reusable }, hint], headers);
    }
  });

  test("a repeated head is replayed with what it said; any byte changed is parsed afresh", () => {
    const { p, out } = parser();
    const head = (extra: string) =>
      `HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5\r\n${extra}Content-Length: 3\r\n\r\n`;
    const answers: [string, boolean, boolean, number | undefined][] = [
      // request is HEAD, the head, reusable, the hint
      [head(""), false, true, 5000],
      [head(""), false, true, 5000], // replayed (start() cleared the hint: the replay sets it again)
      [head(""), true, true, 5000], // replayed for a HEAD request: no body, whatever Content-Length says
      [head("Connection: close\r\n"), false, false, 5000],
      [head("Connection: close\r\n"), false, false, 5000], // replayed: still not reusable
      ["HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", false, true, undefined],
      ["HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", false, true, undefined], // replayed: no hint
    ];
    for (const [text, noBody, reusable, hint] of answers) {
      p.start(noBody);
      out.body = "";
      p.execute(Buffer.from(noBody ? text : `${text}abc`));
      assert.deepEqual(
        [out.status, out.body, out.end, p.keepAliveHintMs],
        [200, noBody ? "" : "abc", { reusable }, hint],
        text,
      );
      assert.ok(out.headers?.includes("Content-Length"));
    }
  });

  test("the Keep-Alive timeout hint, in ms", () => {
    const { p } = parser();
    p.execute(Buffer.from("HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: 0\r\n\r\n"));
    assert.equal(p.keepAliveHintMs, 5000);
    assert.equal(keepAliveHintMs("max=3"), undefined);
  });

  test("bytes after the end of a response (two answers to one request) make the connection unusable", () => {
    const { p, out } = parser();
    p.execute(
      Buffer.from(
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb",
      ),
    );
    assert.deepEqual(out.events, ["head", "data", "end"]);
    assert.deepEqual(out.end, { reusable: false });
    const empty = parser();
    empty.p.execute(Buffer.from("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"));
    assert.deepEqual(empty.out.end, { reusable: false });
  });
});

describe("refused", () => {
  const cases: [string, string, string][] = [
    ["not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", "HPE_INVALID_STATUS"],
    ["HTTP/2 status line", "HTTP/2 200\r\n\r\n", "HPE_INVALID_STATUS"],
    ["a status that is not 3 digits", "HTTP/1.1 2x0 OK\r\n\r\n", "HPE_INVALID_STATUS"],
    [
      "101 to a plain request",
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n",
      "HPE_INVALID_STATUS",
    ],
    ["a header line without ':'", "HTTP/1.1 200 OK\r\nContent-Length 0\r\n\r\n", "HPE_INVALID_HEADER_TOKEN"],
    ["a space before ':'", "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n", "HPE_INVALID_HEADER_TOKEN"],
    [
      "a folded header",
      "HTTP/1.1 200 OK\r\nX-A: 1\r\n  2\r\nContent-Length: 0\r\n\r\n",
      "HPE_INVALID_HEADER_TOKEN",
    ],
    ["a bare LF", "HTTP/1.1 200 OK\r\nX-A: 1\nContent-Length: 0\r\n\r\n", "HPE_LF_EXPECTED"],
    ["a bad Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 1e3\r\n\r\n", "HPE_INVALID_CONTENT_LENGTH"],
    [
      "two Content-Lengths",
      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
      "HPE_INVALID_CONTENT_LENGTH",
    ],
    [
      "Content-Length with Transfer-Encoding",
      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
      "HPE_UNEXPECTED_CONTENT_LENGTH",
    ],
    [
      "a bad chunk size",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      "HPE_INVALID_CHUNK_SIZE",
    ],
    [
      "chunk data longer than its size",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\n",
      "HPE_STRICT",
    ],
  ];
  for (const [what, text, code] of cases) {
    test(what, () => {
      const { p, out } = parser();
      p.execute(Buffer.from(text, "latin1"));
      assert.equal(out.error?.code, code, `events ${out.events.join(",")}`);
      assert.match(out.error!.message, /malformed HTTP response/);
      assert.equal(out.end, undefined);
      p.execute(Buffer.from("more")); // a stopped parser says nothing more
      assert.equal(out.events.filter((e) => e === "error").length, 1);
    });
  }

  test("a head over the limit (undici's UND_ERR_HEADERS_OVERFLOW), in one piece or across chunks", () => {
    const big = `HTTP/1.1 200 OK\r\nX-Big: ${"a".repeat(200)}\r\n\r\n`;
    const one = parser(false, 128);
    one.p.execute(Buffer.from(big));
    assert.equal(one.out.error?.code, "UND_ERR_HEADERS_OVERFLOW");
    const split = parser(false, 128);
    split.p.execute(Buffer.from(big.slice(0, 100)));
    split.p.execute(Buffer.from(big.slice(100, 150)));
    assert.equal(split.out.error?.code, "UND_ERR_HEADERS_OVERFLOW");
  });

  test("the server closing mid-head or mid-body: UND_ERR_SOCKET 'other side closed'", () => {
    for (const text of [
      "",
      "HTTP/1.1 200 OK\r\nContent-",
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab",
    ]) {
      const { p, out } = parser();
      p.execute(Buffer.from(text));
      p.eof();
      assert.equal(out.error?.code, "UND_ERR_SOCKET", JSON.stringify(text));
      assert.equal(out.error?.message, "other side closed");
    }
  });

  test("data when no response is expected", () => {
    const { p, out } = parser();
    p.execute(Buffer.from("HTTP/1.1 204 No Content\r\n\r\n"));
    p.execute(Buffer.from("x"));
    assert.equal(out.error?.code, "HPE_DATA_AFTER_END");
  });
});
