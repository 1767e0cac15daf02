/**
 * Seeded generator of mutated ModelInferRequest bytes for the gRPC fuzz test: valid requests for `simple`
 * (INT32, raw or typed contents) and `identity_bytes` (BYTES, raw or bytes_contents), then mutations of
 * the decoded fields (shapes, datatypes, raw sizes, content counts, parameters of every kind, names,
 * versions) or of the encoded bytes (bit flips, truncation, splices, length-prefix corruption). The same
 * seed gives the same requests.
 */
import { createMulberry32 } from "@tbench/model-builder/prng";
import { inference } from "@tbench/proto";

/** One request to send: its bytes and what was done to it (for failure messages). */
export interface GrpcFuzzRequest {
  readonly bytes: Uint8Array;
  readonly description: string;
}

// biome-ignore lint/suspicious/noExplicitAny: requests are built and mutated as plain objects
type Msg = Record<string, any>;

const DATATYPES = [
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
];
const ODD_DATATYPES = ["", "int32", "INT33", "TYPE_INT32", "BF16", "STRING", "\u0000"];
const CONTENT_FIELDS = [
  "bool_contents",
  "int_contents",
  "int64_contents",
  "uint_contents",
  "uint64_contents",
  "fp32_contents",
  "fp64_contents",
  "bytes_contents",
];

/** Builds requests from `seed`. */
export function createGrpcFuzzRequests(seed: number) {
  const random = createMulberry32(seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const chance = (p: number) => random() < p;

  const dim = (): number =>
    pick([0, 1, 2, 16, -1, -2, 2 ** 31, 2 ** 32 + 1, 2 ** 53, -(2 ** 62), 1_000_000_007, 65536]);
  const parameter = (): Msg =>
    pick<() => Msg>([
      () => ({ bool_param: chance(0.5) }),
      () => ({ int64_param: pick([0, -1, 1, 2 ** 40, -(2 ** 60)]) }),
      () => ({ string_param: pick(["", "x", "\u0000", "1".repeat(300)]) }),
      () => ({ double_param: pick([0, -1.5, Number.NaN, Number.POSITIVE_INFINITY, 1e308]) }),
      () => ({ uint64_param: pick([0, 1, 2 ** 50]) }),
      () => ({}),
    ])();
  const parameters = (): Msg => {
    const out: Msg = {};
    const keys = [
      "priority",
      "timeout",
      "triton_enable_empty_final_response",
      "triton_x",
      "custom",
      "binary_data",
      "classification",
      "shared_memory_region",
      "sequence_id",
    ];
    for (let n = int(3); n > 0; n--) out[pick(keys)] = parameter();
    return out;
  };
  const int32Raw = (n: number) => {
    const values = new Int32Array(n);
    for (let i = 0; i < n; i++) values[i] = int(2000) - 1000;
    return new Uint8Array(values.buffer);
  };
  const bytesRaw = (n: number) => {
    const parts: number[] = [];
    for (let i = 0; i < n; i++) {
      const length = int(6);
      parts.push(length, 0, 0, 0);
      for (let k = 0; k < length; k++) parts.push(97 + int(26));
    }
    return new Uint8Array(parts);
  };

  /** A valid request for one of the two models. */
  const valid = (): Msg => {
    if (chance(0.7)) {
      const batch = 1 + int(3);
      const typed = chance(0.3);
      const input = (name: string): Msg => ({
        name,
        datatype: "INT32",
        shape: [batch, 16],
        ...(typed
          ? { contents: { int_contents: Array.from({ length: batch * 16 }, () => int(200) - 100) } }
          : {}),
      });
      return {
        model_name: "simple",
        id: `s${int(1000)}`,
        inputs: [input("INPUT0"), input("INPUT1")],
        raw_input_contents: typed ? [] : [int32Raw(batch * 16), int32Raw(batch * 16)],
      };
    }
    const count = 1 + int(4);
    const typed = chance(0.3);
    return {
      model_name: "identity_bytes",
      inputs: [
        {
          name: "INPUT0",
          datatype: "BYTES",
          shape: [1, count],
          ...(typed
            ? { contents: { bytes_contents: Array.from({ length: count }, (_, i) => Buffer.from(`e${i}`)) } }
            : {}),
        },
      ],
      raw_input_contents: typed ? [] : [bytesRaw(count)],
    };
  };

  /** An input of `m` to mutate (one is added when a mutation left none). */
  const someInput = (m: Msg): Msg => {
    const inputs = m.inputs as Msg[];
    if (inputs.length === 0) inputs.push({ name: "INPUT0", datatype: "INT32", shape: [1, 16] });
    return inputs[int(inputs.length)]!;
  };

  /** Mutations of the decoded fields. */
  const fieldMutations: readonly [string, (m: Msg) => void][] = [
    [
      "shape dim",
      (m) => {
        const io = someInput(m);
        io.shape = [...io.shape];
        io.shape[int(io.shape.length)] = dim();
      },
    ],
    [
      "shape length",
      (m) => {
        const io = someInput(m);
        io.shape = Array.from({ length: int(5) }, dim);
      },
    ],
    [
      "datatype",
      (m) => {
        someInput(m).datatype = chance(0.5) ? pick(DATATYPES) : pick(ODD_DATATYPES);
      },
    ],
    [
      "raw size",
      (m) => {
        const raws = m.raw_input_contents as Uint8Array[];
        if (raws.length === 0) return;
        const i = int(raws.length);
        const r = raws[i]!;
        raws[i] = chance(0.5)
          ? r.subarray(0, int(r.length + 1))
          : new Uint8Array([...r, ...new Uint8Array(1 + int(9))]);
      },
    ],
    [
      "raw count",
      (m) => {
        const raws = m.raw_input_contents as Uint8Array[];
        if (chance(0.5)) raws.pop();
        else raws.push(int32Raw(int(20)));
      },
    ],
    [
      "contents field",
      (m) => {
        const io = someInput(m);
        const field = pick(CONTENT_FIELDS);
        const n = int(40);
        const values =
          field === "bool_contents"
            ? Array.from({ length: n }, () => chance(0.5))
            : field === "bytes_contents"
              ? Array.from({ length: n }, () => Buffer.from("z".repeat(int(4))))
              : Array.from({ length: n }, () =>
                  pick([0, 1, -1, 127, 128, 300, -129, 65536, 2 ** 31 - 1, 1.5]),
                );
        io.contents = { ...(io.contents ?? {}), [field]: values };
      },
    ],
    [
      "contents empty",
      (m) => {
        someInput(m).contents = {};
      },
    ],
    [
      "parameters",
      (m) => {
        m.parameters = parameters();
      },
    ],
    [
      "input parameters",
      (m) => {
        someInput(m).parameters = parameters();
      },
    ],
    [
      "outputs",
      (m) => {
        m.outputs = Array.from({ length: int(4) }, () => ({
          name: pick(["OUTPUT0", "OUTPUT1", "NOPE", ""]),
          parameters: parameters(),
        }));
      },
    ],
    [
      "input name",
      (m) => {
        someInput(m).name = pick(["", "INPUT2", "INPUT0", "input0"]);
      },
    ],
    [
      "input count",
      (m) => {
        const inputs = m.inputs as Msg[];
        if (chance(0.5)) inputs.pop();
        else inputs.push({ ...someInput(m) });
      },
    ],
    [
      "model",
      (m) => {
        m.model_name = pick(["", "nope", "simple", "identity_bytes", "SIMPLE"]);
      },
    ],
    [
      "version",
      (m) => {
        m.model_version = pick(["", "1", "2", "-1", "x", "99999999999999999999", " 1", "1abc"]);
      },
    ],
  ];

  /** Mutations of the encoded bytes. */
  const byteMutations: readonly [string, (b: Uint8Array) => Uint8Array][] = [
    [
      "bit flips",
      (b) => {
        const out = new Uint8Array(b);
        for (let n = 1 + int(4); n > 0 && out.length > 0; n--) out[int(out.length)]! ^= 1 << int(8);
        return out;
      },
    ],
    ["truncation", (b) => b.subarray(0, int(b.length))],
    [
      "splice",
      (b) => {
        const at = int(b.length + 1);
        const other = b.subarray(int(b.length + 1));
        return new Uint8Array([...b.subarray(0, at), ...other.subarray(0, 64), ...b.subarray(at)]);
      },
    ],
    [
      "length prefix",
      (b) => {
        // Overwrite a byte after a length-delimited tag (wire type 2) with a varint that claims too much.
        const out = new Uint8Array(b);
        const tags: number[] = [];
        for (let i = 0; i < out.length - 1; i++) if ((out[i]! & 7) === 2 && out[i]! < 0x80) tags.push(i);
        if (tags.length > 0) out[pick(tags) + 1] = pick([0x7f, 0xff, 0x00, 0x80]);
        return out;
      },
    ],
    ["random bytes", () => Uint8Array.from({ length: int(64) }, () => int(256))],
  ];

  const encode = (m: Msg) => inference.ModelInferRequest.encode(m as never).finish();

  return {
    /** The next request: a field mutation (60%), a byte mutation (35%) or a valid one. */
    next(): GrpcFuzzRequest {
      const m = valid();
      const roll = random();
      if (roll < 0.6) {
        const names: string[] = [];
        for (let n = 1 + int(2); n > 0; n--) {
          const [name, mutate] = pick(fieldMutations);
          mutate(m);
          names.push(name);
        }
        let bytes: Uint8Array;
        try {
          bytes = encode(m);
        } catch {
          // protobufjs refuses a value its field cannot hold (e.g. a huge uint64): send the valid form.
          return { bytes: encode(valid()), description: `valid (unencodable: ${names.join(", ")})` };
        }
        return { bytes, description: `fields: ${names.join(", ")}` };
      }
      if (roll < 0.95) {
        const [name, mutate] = pick(byteMutations);
        return { bytes: mutate(encode(m)), description: `bytes: ${name}` };
      }
      return { bytes: encode(m), description: "valid" };
    },
    /** A valid `simple` request. */
    validSimple(): Uint8Array {
      const raw = new Uint8Array(new Int32Array(16).fill(3).buffer);
      return encode({
        model_name: "simple",
        inputs: [
          { name: "INPUT0", datatype: "INT32", shape: [1, 16] },
          { name: "INPUT1", datatype: "INT32", shape: [1, 16] },
        ],
        raw_input_contents: [raw, raw],
      });
    },
  };
}
