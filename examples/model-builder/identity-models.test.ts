// Every identity_<type> model returns exactly what it was given: bit patterns for floats (NaN, -0,
// subnormals, FP16 bits), integers at both ends of their range (INT64/UINT64 beyond 2^53), BOOL, and BYTES
// strings.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { datatypeInfo } from "@tbench/proto";
import * as ort from "onnxruntime-node";
import { buildIdentityModel, type IdentityDatatype, identityModelName } from "./models/identity.js";

type Values = Exclude<ort.Tensor.DataType, readonly string[]> | string[];

const f32 = new Float32Array([
  0,
  -0,
  1.5,
  3.4028234663852886e38,
  1e-45,
  Infinity,
  Number.NEGATIVE_INFINITY,
  0,
]);
new DataView(f32.buffer).setUint32(7 * 4, 0x7fc00123, true); // a NaN with a payload
const f64 = new Float64Array([
  0,
  -0,
  Math.PI,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  Infinity,
  -1e-300,
  Number.NaN,
]);

const CASES: Record<IdentityDatatype, Values> = {
  BOOL: new Uint8Array([1, 0, 0, 1, 1, 1]),
  UINT8: new Uint8Array([0, 1, 127, 128, 254, 255]),
  UINT16: new Uint16Array([0, 1, 32767, 32768, 65534, 65535]),
  UINT32: new Uint32Array([0, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 2, 2 ** 32 - 1]),
  UINT64: new BigUint64Array([0n, 1n, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 2n, 2n ** 64n - 1n]),
  INT8: new Int8Array([-128, -127, -1, 0, 1, 127]),
  INT16: new Int16Array([-32768, -32767, -1, 0, 1, 32767]),
  INT32: new Int32Array([-(2 ** 31), -(2 ** 31) + 1, -1, 0, 1, 2 ** 31 - 1]),
  INT64: new BigInt64Array([-(2n ** 63n), -(2n ** 53n) - 1n, -1n, 0n, 2n ** 53n + 1n, 2n ** 63n - 1n]),
  // FP16 travels as raw bits: 0, -0, 1, 65504 (max), smallest subnormal, +inf, -inf, NaN with a payload.
  FP16: new Uint16Array([0x0000, 0x8000, 0x3c00, 0x7bff, 0x0001, 0x7c00, 0xfc00, 0x7e01]),
  FP32: f32,
  FP64: f64,
  BYTES: ["", "hello", "héllo wörld ✓", "🎉 emoji", "x".repeat(1000), " leading and trailing "],
};

const sessions: ort.InferenceSession[] = [];
after(async () => {
  for (const session of sessions) await session.release();
});

/** Runs `identity_<datatype>` on one tensor and returns OUTPUT0. */
async function roundTrip(datatype: IdentityDatatype, input: ort.Tensor): Promise<ort.Tensor> {
  const session = await ort.InferenceSession.create(buildIdentityModel(datatype));
  sessions.push(session);
  const { OUTPUT0: out } = await session.run({ INPUT0: input });
  assert.ok(out, "OUTPUT0");
  return out;
}

function bytesOf(values: Exclude<Values, string[]>): Buffer {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
}

describe("identity models", () => {
  for (const [datatype, values] of Object.entries(CASES) as [IdentityDatatype, Values][]) {
    it(`${identityModelName(datatype)} returns its input exactly`, async () => {
      const type = datatypeInfo(datatype)?.ortType as ort.Tensor.Type;
      const dims = [2, values.length / 2];
      const out = await roundTrip(datatype, new ort.Tensor(type, values, dims));
      assert.equal(out.type, type);
      assert.deepEqual(out.dims, dims);
      if (Array.isArray(values)) {
        assert.deepEqual(out.data, values);
      } else {
        assert.equal(out.data.constructor, values.constructor);
        // Byte comparison, so NaN payloads and -0 count too.
        assert.deepEqual(bytesOf(out.data as typeof values), bytesOf(values));
      }
    });
  }

  it("identity_int64 keeps values beyond 2^53 exact", async () => {
    const big = [2n ** 62n + 1n, -(2n ** 62n) - 3n];
    const out = await roundTrip("INT64", new ort.Tensor("int64", new BigInt64Array(big), [1, 2]));
    assert.deepEqual([...(out.data as BigInt64Array)], big);
  });

  it("identity_fp32 passes a [1, 262144] (1 MiB) tensor", async () => {
    const data = Float32Array.from({ length: 262144 }, (_, i) => i * 0.5);
    const out = await roundTrip("FP32", new ort.Tensor("float32", data, [1, 262144]));
    assert.deepEqual(out.dims, [1, 262144]);
    assert.deepEqual(bytesOf(out.data as Float32Array), bytesOf(data));
  });

  it("onnxruntime-node cuts a BYTES element at its first NUL (a known limit the server must live with)", async () => {
    // onnxruntime-node hands strings to onnxruntime as C strings; if this ever passes the NUL through,
    // the server can drop its own handling of the case.
    const out = await roundTrip("BYTES", new ort.Tensor("string", ["ab\u0000cd"], [1, 1]));
    assert.deepEqual(out.data, ["ab"]);
  });
});
