// Reading a fetch Response into an answer: the binary tensor section of an infer answer lands 8-byte
// aligned (so outputs are views, not copies), whatever the JSON header's length; a body longer or shorter
// than its Content-Length (a decompressed body whose Content-Encoding the runtime hides) is read whole.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readAnswer } from "./fetch-answer.js";

/** A Response whose body arrives in `chunks`, with the given headers (none are checked by Response). */
function responseOf(chunks: Uint8Array[], headers: Record<string, string>): Response {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  return new Response(stream, { status: 200, headers });
}

const bytes = (length: number, first = 0) => Uint8Array.from({ length }, (_, i) => (first + i) % 256);

describe("readAnswer", () => {
  for (const jsonLength of [1, 5, 8, 13]) {
    test(`the binary section after a ${jsonLength}-byte header starts on an 8-byte boundary`, async () => {
      const body = bytes(jsonLength + 32);
      const answer = await readAnswer(
        responseOf([body.subarray(0, 7), body.subarray(7)], {
          "content-length": String(body.length),
          "inference-header-content-length": String(jsonLength),
        }),
      );
      assert.deepEqual([...answer.body], [...body]);
      assert.equal((answer.body.byteOffset + jsonLength) % 8, 0);
      assert.equal(answer.header("inference-header-content-length"), String(jsonLength));
    });
  }

  test("a body longer than its Content-Length is read whole", async () => {
    const body = bytes(40);
    const answer = await readAnswer(
      responseOf([body.subarray(0, 10), body.subarray(10, 25), body.subarray(25)], {
        "content-length": "12",
        "inference-header-content-length": "4",
      }),
    );
    assert.deepEqual([...answer.body], [...body]);
  });

  test("a body shorter than its Content-Length is what arrived", async () => {
    const body = bytes(10);
    const answer = await readAnswer(
      responseOf([body], { "content-length": "64", "inference-header-content-length": "4" }),
    );
    assert.deepEqual([...answer.body], [...body]);
  });

  test("answers without the binary extension are read as they are; absent headers are undefined", async () => {
    const body = new TextEncoder().encode('{"error":"x"}');
    const answer = await readAnswer(responseOf([body], { "content-type": "application/json" }));
    assert.equal(new TextDecoder().decode(answer.body), '{"error":"x"}');
    assert.equal(answer.status, 200);
    assert.equal(answer.header("retry-after"), undefined);
    assert.equal((await readAnswer(new Response(null, { status: 204 }))).body.length, 0);
  });
});
