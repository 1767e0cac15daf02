/** The BYTES codec: wire form round trips, malformed lengths, splits and joins, and the element checks. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  bytesDataFromArrays,
  bytesDataFromStrings,
  bytesDataToArrays,
  bytesDataToStrings,
  bytesElementProblem,
  concatBytesData,
  isBytesData,
  splitBytesData,
  walkBytesElements,
} from "./bytes-data.js";

/** The wire form written out by hand: [length LE32][bytes] per element. */
function wireOf(...elements: number[][]): Uint8Array {
  const out: number[] = [];
  for (const e of elements) out.push(e.length & 0xff, (e.length >> 8) & 0xff, 0, 0, ...e);
  return Uint8Array.from(out);
}

const ownsItsBuffer = (bytes: Uint8Array) =>
  bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;

describe("BYTES data", () => {
  it("strings and byte strings encode to the binary tensor extension's form, in one owned buffer", () => {
    const data = bytesDataFromStrings(["hi", "", "é"]);
    assert.equal(data.count, 3);
    assert.deepEqual([...data.wire], [...wireOf([104, 105], [], [0xc3, 0xa9])]);
    assert.ok(ownsItsBuffer(data.wire), "transferable: the ArrayBuffer is the wire's alone");
    const arrays = bytesDataFromArrays([Uint8Array.of(1, 2), new Uint8Array(0), Uint8Array.of(0xff)]);
    assert.deepEqual([...arrays.wire], [...wireOf([1, 2], [], [0xff])]);
    assert.ok(ownsItsBuffer(arrays.wire));
    assert.deepEqual(bytesDataFromStrings([]), { count: 0, wire: bytesDataFromStrings([]).wire });
    assert.equal(bytesDataFromStrings([]).wire.byteLength, 0);
  });

  it("round trips strings, including multi-byte, long and empty elements", () => {
    const strings = ["", "héllo", "a\tb", "\u{1f600}", "x".repeat(70_000), "\uFEFFbom kept"];
    const data = bytesDataFromStrings(strings);
    assert.deepEqual(bytesDataToStrings(data), strings);
    assert.deepEqual(
      bytesDataToArrays(data).map((b) => Buffer.from(b).toString("utf8")),
      strings,
    );
    assert.deepEqual(bytesDataToStrings(bytesDataFromArrays(bytesDataToArrays(data))), strings);
  });

  it("walks a wire form once, counting elements and reporting their ranges", () => {
    const ranges: [number, number, number][] = [];
    const walk = walkBytesElements(wireOf([7], [], [8, 9]), (start, end, index) =>
      ranges.push([start, end, index]),
    );
    assert.deepEqual(walk, { ok: true, count: 3 });
    assert.deepEqual(ranges, [
      [4, 5, 0],
      [9, 9, 1],
      [13, 15, 2],
    ]);
    assert.deepEqual(walkBytesElements(new Uint8Array(0)), { ok: true, count: 0 });
    // 16 empty elements are 64 zero bytes.
    assert.deepEqual(walkBytesElements(new Uint8Array(64)), { ok: true, count: 16 });
  });

  it("reports malformed lengths with the element they belong to", () => {
    assert.deepEqual(walkBytesElements(Uint8Array.of(1, 0, 0, 0, 65, 2, 0)), {
      ok: false,
      index: 1,
      message: "element 1 has 2 bytes left for its 4-byte length",
    });
    assert.deepEqual(walkBytesElements(Uint8Array.of(5, 0, 0, 0, 65, 66)), {
      ok: false,
      index: 0,
      message: "element 0 declares 5 bytes, 2 are left",
    });
    // A length with its top bit set is read unsigned, not as a negative number.
    assert.deepEqual(walkBytesElements(Uint8Array.of(0, 0, 0, 0x80)), {
      ok: false,
      index: 0,
      message: "element 0 declares 2147483648 bytes, 0 are left",
    });
    assert.throws(() => bytesDataToStrings({ count: 1, wire: Uint8Array.of(9, 0, 0, 0) }), {
      name: "RangeError",
      message: "malformed BYTES data: element 0 declares 9 bytes, 0 are left",
    });
  });

  it("finds what a string tensor cannot carry: invalid UTF-8 first, then a NUL byte", () => {
    const check = (...bytes: number[]) => {
      const wire = Uint8Array.from([0xaa, ...bytes, 0xbb]);
      return bytesElementProblem(wire, 1, 1 + bytes.length);
    };
    assert.equal(check(), undefined);
    assert.equal(check(104, 105), undefined);
    assert.equal(check(0xc3, 0xa9), undefined);
    assert.equal(check(0xf0, 0x9f, 0x98, 0x80), undefined);
    assert.equal(check(97, 0, 98), "contains a NUL byte");
    assert.equal(check(0xc3), "is not valid UTF-8");
    assert.equal(check(0xc3, 0), "is not valid UTF-8");
    assert.equal(check(0xed, 0xa0, 0x80), "is not valid UTF-8", "CESU-8 surrogate");
    assert.equal(check(0xc0, 0x80), "is not valid UTF-8", "overlong NUL");
    assert.equal(check(0xc3, 0xa9, 0), "contains a NUL byte");
  });

  it("splits into per-request views and joins into one owned buffer", () => {
    const strings = ["a", "", "bb", "ccc", "", "d"];
    const data = bytesDataFromStrings(strings);
    const pieces = splitBytesData(data, [2, 0, 3, 1]);
    assert.deepEqual(
      pieces.map((p) => p.count),
      [2, 0, 3, 1],
    );
    assert.deepEqual(pieces.map(bytesDataToStrings), [["a", ""], [], ["bb", "ccc", ""], ["d"]]);
    for (const piece of pieces) assert.equal(piece.wire.buffer, data.wire.buffer, "a view, not a copy");
    assert.deepEqual(splitBytesData(data, [0, 6, 0]).map(bytesDataToStrings), [[], strings, []]);
    assert.deepEqual(splitBytesData(bytesDataFromStrings([]), [0, 0]).map(bytesDataToStrings), [[], []]);
    assert.throws(() => splitBytesData(data, [2, 2]), {
      name: "RangeError",
      message: "BYTES data has 6 elements, the pieces ask for 4",
    });
    const joined = concatBytesData(pieces);
    assert.equal(joined.count, 6);
    assert.deepEqual(bytesDataToStrings(joined), strings);
    assert.ok(ownsItsBuffer(joined.wire));
    assert.notEqual(joined.wire.buffer, data.wire.buffer);
  });

  it("tells BYTES data from TypedArrays", () => {
    assert.equal(isBytesData(bytesDataFromStrings(["x"])), true);
    assert.equal(isBytesData(new Float32Array(2)), false);
    assert.equal(isBytesData(new Uint8Array(2)), false);
  });
});
