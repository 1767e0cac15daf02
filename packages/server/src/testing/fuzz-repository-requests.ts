/**
 * Seeded generator of mutated repository API requests (index, load, unload) for the repository fuzz test:
 * valid bodies first (`{"ready": true}`, a config override as JSON, `file:` overrides in base64,
 * `unload_dependents`), then mutations of their JSON and of their bytes, odd model names, and compression.
 * Loads and unloads that would really succeed are kept rare (model loads start workers, slow at 100k cases);
 * most name models the repository does not hold. The same seed gives the same requests.
 */
import { deflateSync, gzipSync } from "node:zlib";
import { createFuzzRandom, type Json } from "./fuzz-random.js";
import type { FuzzRequest } from "./fuzz-requests.js";

/** The model the fuzz may really load and unload; its config as JSON (as GET .../config answers). */
export const REPOSITORY_FUZZ_MODEL = "simple";
const SIMPLE_CONFIG: { [key: string]: Json } = {
  name: "simple",
  platform: "onnxruntime_onnx",
  max_batch_size: 8,
  input: [
    { name: "INPUT0", data_type: "TYPE_INT32", dims: [16] },
    { name: "INPUT1", data_type: "TYPE_INT32", dims: [16] },
  ],
  output: [
    { name: "OUTPUT0", data_type: "TYPE_INT32", dims: [16] },
    { name: "OUTPUT1", data_type: "TYPE_INT32", dims: [16] },
  ],
};
const NAMES = [
  "absent",
  "ghost_model",
  "x",
  "simple_",
  "%EF%BC%B3imple",
  "a%20b",
  "%2e%2e",
  "..%2fsimple",
  "q?x=1",
];
const CONFIG_KEYS = [
  "name",
  "platform",
  "backend",
  "max_batch_size",
  "input",
  "output",
  "dynamic_batching",
  "instance_group",
  "version_policy",
  "parameters",
  "x",
];

/** Builds requests from `seed`. */
export function createRepositoryFuzzRequests(seed: number) {
  const { int, pick, chance, randomJson } = createFuzzRandom(seed, {
    strings: ["", "x", "true", "TYPE_INT32", "simple", "\u0000", "é", "9".repeat(30), "{"],
    keys: ["ready", "parameters", "config", "unload_dependents", "x"],
  });

  /** A config override: the real one, or one with a field replaced, dropped or nested wrongly. */
  const configOverride = (): string => {
    const config = structuredClone(SIMPLE_CONFIG);
    switch (int(5)) {
      case 0:
        break;
      case 1:
        config[pick(CONFIG_KEYS)] = randomJson();
        break;
      case 2:
        delete config[pick(CONFIG_KEYS)];
        break;
      case 3:
        config["input"] = [
          { name: "INPUT0", data_type: pick(["TYPE_BF16", "TYPE_X", 7, ""]), dims: randomJson() },
        ];
        break;
      default: {
        const text = JSON.stringify(config);
        const at = int(text.length);
        return text.slice(0, at) + pick(["", "}", '"', ",", "\u0000", "]]"]) + text.slice(at + int(3));
      }
    }
    return JSON.stringify(config);
  };

  const mutateBytes = (body: Buffer): Buffer => {
    if (body.length === 0) return Buffer.from([int(256)]);
    const copy = Buffer.from(body);
    switch (int(3)) {
      case 0:
        for (let i = 0; i < 1 + int(4); i++) copy[int(copy.length)] = int(256);
        return copy;
      case 1:
        return copy.subarray(0, int(copy.length));
      default:
        return Buffer.concat([copy, Buffer.from(Array.from({ length: 1 + int(8) }, () => int(256)))]);
    }
  };

  /** The next request. */
  return function next(): FuzzRequest {
    const action = pick(["index", "index", "load", "load", "load", "unload"] as const);
    // A real load or unload of the model (a worker start or stop) stays rare: about 1 in 100.
    const real = chance(0.01);
    const model = real ? REPOSITORY_FUZZ_MODEL : pick(NAMES);
    const steps: string[] = [action];
    let body: Json | undefined;
    if (action === "index") body = pick([undefined, {}, { ready: true }, { ready: false }]);
    else if (action === "unload")
      body = pick([undefined, {}, { parameters: { unload_dependents: chance(0.5) } }]);
    else {
      const parameters: { [key: string]: Json } = {};
      if (chance(0.5)) parameters["config"] = configOverride();
      // Override files make a model of any name loadable (a worker start each): rare unless the load is real.
      if (chance(real ? 0.3 : 0.005)) {
        const file = pick(["1/model.onnx", "config.pbtxt", "../escape", "/abs", "1/../../x", ""]);
        parameters[`file:${file}`] = Buffer.from(Array.from({ length: int(64) }, () => int(256))).toString(
          pick(["base64", "hex", "utf8"] as const),
        );
        // A file override without a config is Triton's error; keep it so now and then.
        if (!chance(0.1)) parameters["config"] ??= configOverride();
      }
      body = Object.keys(parameters).length > 0 || chance(0.5) ? { parameters } : undefined;
    }
    const kind = int(10);
    if (body !== undefined && kind < 3) {
      const target = typeof body === "object" && body !== null && !Array.isArray(body) ? body : {};
      const key = pick(["ready", "parameters", "unload_dependents", "config", "x"]);
      if (chance(0.5)) target[key] = randomJson();
      else if (isObject(target["parameters"])) target["parameters"][key] = randomJson();
      else body = randomJson();
      steps.push(`json ${key}`);
    }
    let bytes: Buffer = body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body));
    if (kind === 3 || kind === 4) {
      bytes = mutateBytes(bytes);
      steps.push("bytes");
    }
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (kind === 5) {
      const encoding = pick(["gzip", "deflate"] as const);
      bytes = encoding === "gzip" ? gzipSync(bytes) : deflateSync(bytes);
      if (chance(0.3)) {
        bytes = mutateBytes(bytes);
        steps.push(`corrupt ${encoding}`);
      } else steps.push(encoding);
      headers["content-encoding"] = encoding;
    }
    const path = action === "index" ? "/v2/repository/index" : `/v2/repository/models/${model}/${action}`;
    return { path, headers, body: bytes, description: `${model} ${steps.join(", ")}` };
  };
}

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
