/**
 * Seeded generator of mutated infer requests for the HTTP fuzz test: valid requests for `simple` and the
 * `identity_<type>` models (JSON and binary, optionally compressed), then mutations of the headers, the JSON
 * header and the binary sections, gzip or deflate bodies (intact, corrupt, or bombs that inflate past
 * ZIP_BOMB_INFLATED_BYTES). The same seed gives the same requests.
 */
import { deflateSync, gzipSync } from "node:zlib";
import { createFuzzRandom, type Json } from "./fuzz-random.js";

/** A request to send: path, headers and body bytes. */
export interface FuzzRequest {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  /** What was done to it, for failure messages. */
  readonly description: string;
}

const TYPES = [
  "BOOL",
  "UINT8",
  "INT8",
  "INT16",
  "INT32",
  "INT64",
  "UINT64",
  "FP16",
  "FP32",
  "FP64",
  "BYTES",
] as const;
const SIZES: Readonly<Record<string, number>> = {
  BOOL: 1,
  UINT8: 1,
  INT8: 1,
  INT16: 2,
  INT32: 4,
  INT64: 8,
  UINT64: 8,
  FP16: 2,
  FP32: 4,
  FP64: 8,
};

/** What a zip bomb inflates to: 4 MiB of zeros from about 4 KiB on the wire. */
export const ZIP_BOMB_INFLATED_BYTES = 4 << 20;
let bombs: { gzip: Buffer; deflate: Buffer } | undefined;
/** The bombs, made once (a valid JSON start, so only the size limit can refuse them). */
function zipBombs(): { gzip: Buffer; deflate: Buffer } {
  if (bombs === undefined) {
    const inflated = Buffer.alloc(ZIP_BOMB_INFLATED_BYTES, 0x20);
    inflated.write('{"inputs": [');
    bombs = { gzip: gzipSync(inflated, { level: 9 }), deflate: deflateSync(inflated, { level: 9 }) };
  }
  return bombs;
}

/** Builds requests from `seed`. */
export function createFuzzRequests(seed: number) {
  const { int, pick, chance, randomJson } = createFuzzRandom(seed, {
    strings: ["", "x", "INT32", "INPUT0", "OUTPUT0", "\u0000", "é", "9".repeat(30)],
    keys: ["name", "shape", "data", "parameters", "binary_data_size", "x"],
  });

  /** A valid request: JSON header object plus binary sections. */
  const validRequest = (): { model: string; header: { [key: string]: Json }; sections: Buffer[] } => {
    if (chance(0.4)) {
      const rows = 1 + int(3);
      const binary = chance(0.5);
      const inputs: Json[] = [];
      const sections: Buffer[] = [];
      for (const name of ["INPUT0", "INPUT1"]) {
        const values = Array.from({ length: rows * 16 }, () => int(2000) - 1000);
        if (binary) {
          sections.push(Buffer.from(new Int32Array(values).buffer));
          inputs.push({
            name,
            datatype: "INT32",
            shape: [rows, 16],
            parameters: { binary_data_size: rows * 64 },
          });
        } else {
          inputs.push({ name, datatype: "INT32", shape: [rows, 16], data: values });
        }
      }
      const header: { [key: string]: Json } = { inputs };
      if (chance(0.3)) header["outputs"] = [{ name: "OUTPUT0", parameters: { binary_data: chance(0.5) } }];
      if (chance(0.3)) header["parameters"] = { binary_data_output: chance(0.5) };
      if (chance(0.2)) header["id"] = `fuzz-${int(1000)}`;
      return { model: "simple", header, sections };
    }
    const datatype = pick(TYPES);
    const count = 1 + int(5);
    const model = `identity_${datatype.toLowerCase()}`;
    const binary = datatype === "FP16" || chance(0.5);
    let section: Buffer;
    let data: Json[] = [];
    if (datatype === "BYTES") {
      const words = Array.from({ length: count }, () => "w".repeat(int(6)));
      data = words;
      section = Buffer.concat(
        words.map((w) => {
          const length = Buffer.alloc(4);
          length.writeUInt32LE(w.length);
          return Buffer.concat([length, Buffer.from(w)]);
        }),
      );
    } else {
      section = Buffer.alloc(count * SIZES[datatype]!);
      for (let i = 0; i < section.length; i++) section[i] = datatype === "BOOL" ? int(2) : int(256);
      data = Array.from({ length: count }, () => (datatype === "BOOL" ? chance(0.5) : int(100)));
    }
    const input: { [key: string]: Json } = { name: "INPUT0", datatype, shape: [1, count] };
    if (binary) input["parameters"] = { binary_data_size: section.length };
    else input["data"] = data;
    const header: { [key: string]: Json } = { inputs: [input] };
    header["outputs"] = [
      { name: "OUTPUT0", parameters: { binary_data: datatype === "FP16" || chance(0.5) } },
    ];
    return { model, header, sections: binary ? [section] : [] };
  };

  /** Mutates the JSON header in place; returns what it did. */
  const mutateJson = (header: { [key: string]: Json }): string => {
    const inputs = Array.isArray(header["inputs"]) ? header["inputs"] : [];
    const candidate = inputs.length > 0 ? pick(inputs) : null;
    const target = (
      typeof candidate === "object" && candidate !== null && !Array.isArray(candidate) ? candidate : {}
    ) as { [key: string]: Json };
    switch (int(12)) {
      case 0:
        delete header[pick(["inputs", "outputs", "parameters", "id"])];
        return "drop top-level field";
      case 1:
        header[pick(["inputs", "outputs", "parameters", "id"])] = randomJson();
        return "replace top-level field";
      case 2:
        delete target[pick(["name", "datatype", "shape", "data", "parameters"])];
        return "drop input field";
      case 3:
        target[pick(["name", "datatype", "shape", "data", "parameters"])] = randomJson();
        return "replace input field";
      case 4:
        target["datatype"] = pick([...TYPES, "BF16", "int32", "FP128", ""]);
        return "change datatype";
      case 5:
        target["shape"] = Array.from({ length: int(4) }, () => pick([0, 1, 2, 16, -1, 3.5, 2 ** 40, 1e9]));
        return "change shape";
      case 6:
        target["parameters"] = { binary_data_size: pick([0, 1, 3, 63, 64, 65, 1 << 30, -4]) };
        return "change binary_data_size";
      case 7:
        inputs.push(structuredClone(target));
        return "duplicate input";
      case 8:
        target["name"] = pick(["INPUT1", "INPUT9", "", "OUTPUT0"]);
        return "rename input";
      case 9:
        target["data"] = [[[target["data"] ?? 1]], randomJson()];
        return "nest data";
      case 10:
        header["parameters"] = {
          [pick(["priority", "timeout", "binary_data_output", "triton_x", "custom"])]: randomJson(),
        };
        return "request parameters";
      default:
        header["outputs"] = [
          { name: pick(["OUTPUT0", "OUTPUT1", "OUTPUT9", ""]), parameters: { classification: randomJson() } },
        ];
        return "outputs";
    }
  };

  const mutateBytes = (body: Buffer): { body: Buffer; what: string } => {
    if (body.length === 0) return { body: Buffer.from([int(256)]), what: "fill empty" };
    switch (int(4)) {
      case 0: {
        const copy = Buffer.from(body);
        for (let i = 0; i < 1 + int(4); i++) copy[int(copy.length)] = int(256);
        return { body: copy, what: "flip bytes" };
      }
      case 1:
        return { body: body.subarray(0, int(body.length)), what: "truncate" };
      case 2: {
        const at = int(body.length);
        const junk = Buffer.from(Array.from({ length: 1 + int(8) }, () => int(256)));
        return { body: Buffer.concat([body.subarray(0, at), junk, body.subarray(at)]), what: "insert bytes" };
      }
      default:
        return { body: Buffer.concat([body, Buffer.alloc(1 + int(16), int(256))]), what: "append bytes" };
    }
  };

  /** The next request. */
  return function next(): FuzzRequest {
    const { model, header, sections } = validRequest();
    const steps: string[] = [];
    const kind = int(10);
    if (kind < 4) steps.push(mutateJson(header));
    if (kind === 4) steps.push(mutateJson(header), mutateJson(header));
    const json = Buffer.from(JSON.stringify(header));
    let body: Buffer = Buffer.concat([json, ...sections]);
    let headerLength: string | undefined = sections.length > 0 ? String(json.length) : undefined;
    if (kind >= 5 && kind < 8) {
      const mutated = mutateBytes(body);
      body = mutated.body;
      steps.push(mutated.what);
    }
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (kind === 8) {
      const choice = int(6);
      headerLength = pick([
        "-1",
        "abc",
        String(body.length + 1 + int(100)),
        String(int(body.length + 1)),
        "99999999999999999999",
        "",
      ]);
      steps.push(`Inference-Header-Content-Length ${headerLength}`);
      if (choice === 0) headers["content-encoding"] = pick(["br", "gzip", "deflate", "compress", ""]);
    }
    if (headerLength !== undefined) headers["inference-header-content-length"] = headerLength;
    if (chance(0.15)) {
      const encoding = pick(["gzip", "deflate"] as const);
      body = encoding === "gzip" ? gzipSync(body) : deflateSync(body);
      headers["content-encoding"] = encoding;
      steps.push(encoding);
      if (kind === 9) {
        body = mutateBytes(body).body;
        steps.push(`corrupt ${encoding}`);
      } else if (chance(0.05)) {
        body = zipBombs()[encoding];
        steps.push("zip bomb");
      }
    }
    if (chance(0.1))
      headers["accept-encoding"] = pick(["gzip", "deflate", "br", "gzip;q=0", "identity", "*"]);
    let path = `/v2/models/${model}/infer`;
    if (kind === 9 && headers["content-encoding"] === undefined) {
      path = pick([
        `/v2/models/${model}/versions/1/infer`,
        `/v2/models/${model}/versions/99/infer`,
        "/v2/models/none/infer",
        `/v2/models/${model}/versions/x/infer`,
        `/v2/models/${model}%zz/infer`,
      ]);
      steps.push(`path ${path}`);
    }
    return { path, headers, body, description: `${model}: ${steps.join(", ") || "valid"}` };
  };
}
