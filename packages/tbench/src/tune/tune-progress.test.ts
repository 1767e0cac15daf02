import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createTuneProgress, formatSeconds } from "./tune-progress.js";

function stream(isTTY: boolean) {
  const writes: string[] = [];
  return { isTTY, writes, write: (text: string) => writes.push(text) };
}

describe("tune progress", () => {
  it("on a terminal: config k of n, the level, elapsed and an estimate from the finished configs", () => {
    let clock = 0;
    const out = stream(true);
    const progress = createTuneProgress(out, 4, () => clock);
    progress.candidate(1, "off inst=1");
    assert.equal(out.writes.at(-1), "\r\x1b[2Ktune: config 1 of 4 (off inst=1), elapsed 0s, ? left");
    clock = 30_000;
    progress.done("off inst=1: 100.0 infer/s at concurrency 8");
    assert.deepEqual(out.writes.slice(-2), [
      "\r\x1b[2K",
      "[1/4] off inst=1: 100.0 infer/s at concurrency 8\n",
    ]);
    progress.candidate(2, "on delay=0us inst=1");
    clock = 45_000;
    progress.level({ mode: "concurrency", value: 16 });
    assert.equal(
      out.writes.at(-1),
      "\r\x1b[2Ktune: config 2 of 4 (on delay=0us inst=1), concurrency 16, elapsed 45s, ~2m15s left",
    );
  });

  it("elsewhere: one line per config and nothing else", () => {
    const out = stream(false);
    const progress = createTuneProgress(out, 2, () => 0);
    progress.candidate(1, "off inst=1");
    progress.level({ mode: "concurrency", value: 1 });
    progress.done("off inst=1: refused: no");
    progress.clear();
    assert.deepEqual(out.writes, ["[1/2] off inst=1: refused: no\n"]);
    assert.equal(formatSeconds(75_000), "1m15s");
  });
});
