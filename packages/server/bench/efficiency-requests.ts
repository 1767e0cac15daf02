// The requests of the server efficiency benchmark, as bytes on the wire: `heavy` with one row of 256 FP32
// values and `simple` with two INT32 [1,16] inputs, each as a JSON body and as a binary-tensor body
// (JSON header + raw bytes, binary outputs asked for), as perf_analyzer and tbench send them.
import type { WireRequest } from "@tbench/bench-kit";

/** One request of the benchmark. */
export interface BenchRequest {
  readonly model: string;
  readonly encoding: "json" | "binary";
  readonly wire: WireRequest;
}

interface InputSpec {
  name: string;
  datatype: "FP32" | "INT32";
  shape: number[];
  values: number[];
}

const post = (model: string, encoding: "json" | "binary", headers: Record<string, string>, body: Buffer) => ({
  model,
  encoding,
  wire: { method: "POST", path: `/v2/models/${model}/infer`, headers, body },
});

function encode(model: string, inputs: readonly InputSpec[], encoding: "json" | "binary"): BenchRequest {
  const path = `/v2/models/${model}/infer`;
  if (encoding === "json") {
    const body = JSON.stringify({
      inputs: inputs.map((i) => ({ name: i.name, datatype: i.datatype, shape: i.shape, data: i.values })),
    });
    return {
      model,
      encoding,
      wire: {
        method: "POST",
        path,
        headers: { "Content-Type": "application/json" },
        body: Buffer.from(body),
      },
    };
  }
  const raw = inputs.map((i) =>
    Buffer.from((i.datatype === "FP32" ? Float32Array.from(i.values) : Int32Array.from(i.values)).buffer),
  );
  const header = Buffer.from(
    JSON.stringify({
      inputs: inputs.map((i, k) => ({
        name: i.name,
        datatype: i.datatype,
        shape: i.shape,
        parameters: { binary_data_size: raw[k]!.byteLength },
      })),
      parameters: { binary_data_output: true },
    }),
  );
  const headers = {
    "Content-Type": "application/octet-stream",
    "Inference-Header-Content-Length": String(header.byteLength),
  };
  return post(model, encoding, headers, Buffer.concat([header, ...raw]));
}

/** `heavy` (or `heavy_nobatch`): 256 values with 6 decimals, ~2.7 KB of JSON. */
export function heavyRequest(model: string, encoding: "json" | "binary"): BenchRequest {
  const values = Array.from({ length: 256 }, (_, i) => Number(Math.sin(i).toFixed(6)));
  return encode(model, [{ name: "input", datatype: "FP32", shape: [1, 256], values }], encoding);
}

/** `simple`: INPUT0 = 0..15, INPUT1 = 1s. */
export function simpleRequest(encoding: "json" | "binary"): BenchRequest {
  const shape = [1, 16];
  return encode(
    "simple",
    [
      { name: "INPUT0", datatype: "INT32", shape, values: Array.from({ length: 16 }, (_, i) => i) },
      { name: "INPUT1", datatype: "INT32", shape, values: Array.from({ length: 16 }, () => 1) },
    ],
    encoding,
  );
}

/** Sends `request` once to `baseUrl`; the answer's status, headers that describe the body, and bytes. */
export async function answerOf(
  baseUrl: string,
  request: BenchRequest,
): Promise<{ headers: Record<string, string>; body: Buffer }> {
  const response = await fetch(new URL(request.wire.path, baseUrl), {
    method: request.wire.method,
    headers: request.wire.headers,
    body: request.wire.body,
  });
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) {
    throw new Error(`${request.model} (${request.encoding}): expected 200, got ${response.status}: ${body}`);
  }
  const headers: Record<string, string> = {};
  for (const name of ["content-type", "inference-header-content-length"]) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return { headers, body };
}
