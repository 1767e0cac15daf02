/**
 * A small builder for ONNX graphs: declare inputs and outputs (with symbolic dimensions such as "batch"),
 * add constant initializers and nodes, then `build()` the bytes of a `.onnx` file. Element types are named by
 * KServe v2 datatype and translated through `@tbench/proto`'s datatype table.
 */
import { type Datatype, datatypeInfo } from "@tbench/proto";
import { encodeModelProto } from "./onnx-codec.js";

/** A dimension: a fixed size, or a name for a size chosen at run time (e.g. "batch"). */
export type Dim = number | string;

/** A node attribute value, tagged with its ONNX attribute type. */
export type AttributeValue =
  | { readonly kind: "int"; readonly value: number }
  | { readonly kind: "ints"; readonly value: readonly number[] }
  | { readonly kind: "float"; readonly value: number }
  | { readonly kind: "floats"; readonly value: readonly number[] }
  | { readonly kind: "string"; readonly value: string };

/** An `INT` attribute. */
export const intAttr = (value: number): AttributeValue => ({ kind: "int", value });
/** An `INTS` attribute. */
export const intsAttr = (value: readonly number[]): AttributeValue => ({ kind: "ints", value });
/** A `FLOAT` attribute. */
export const floatAttr = (value: number): AttributeValue => ({ kind: "float", value });
/** A `FLOATS` attribute. */
export const floatsAttr = (value: readonly number[]): AttributeValue => ({ kind: "floats", value });
/** A `STRING` attribute. */
export const stringAttr = (value: string): AttributeValue => ({ kind: "string", value });

/** Element data of a constant tensor: a TypedArray whose element type fits the datatype. */
export type InitializerData =
  | Float32Array
  | Float64Array
  | Int8Array
  | Int16Array
  | Int32Array
  | BigInt64Array
  | Uint8Array
  | Uint16Array
  | Uint32Array
  | BigUint64Array;

/** Options of {@link createGraphBuilder}. */
export interface GraphBuilderOptions {
  /** The graph's name (also shown by tools such as Netron). */
  readonly name: string;
  /** ONNX default-domain opset version; 17 by default (loads in onnxruntime 1.14 and later). */
  readonly opsetVersion?: number;
  /** ONNX IR version; 8 by default, the one that goes with opset 17. */
  readonly irVersion?: number;
  /** A sentence on what the model is for, stored as the model's doc_string. */
  readonly docString?: string;
}

/** Accumulates a graph and serializes it. Every method returns the builder's value name for chaining. */
export interface GraphBuilder {
  /** Declares a graph input; returns its name. */
  input(name: string, datatype: Datatype, shape: readonly Dim[]): string;
  /** Declares a graph output (produced by some node); returns its name. */
  output(name: string, datatype: Datatype, shape: readonly Dim[]): string;
  /** Adds a constant tensor; `data.length` must equal the product of `dims`. Returns its name. */
  initializer(name: string, datatype: Datatype, dims: readonly number[], data: InitializerData): string;
  /** Adds a node; returns the name of its first output. */
  node(
    opType: string,
    inputs: readonly string[],
    outputs: readonly string[],
    attributes?: Readonly<Record<string, AttributeValue>>,
  ): string;
  /** Serializes the model: the bytes of a `.onnx` file, identical for identical builder calls. */
  build(): Uint8Array;
}

/** The element type number ONNX uses for a v2 datatype. */
export function onnxElemType(datatype: Datatype): number {
  const info = datatypeInfo(datatype);
  if (info === undefined) throw new Error(`unknown datatype "${datatype}"`);
  return info.onnxType;
}

function valueInfo(name: string, datatype: Datatype, shape: readonly Dim[]): Record<string, unknown> {
  const dim = shape.map((d) => (typeof d === "number" ? { dim_value: d } : { dim_param: d }));
  return { name, type: { tensor_type: { elem_type: onnxElemType(datatype), shape: { dim } } } };
}

function attribute(name: string, value: AttributeValue): Record<string, unknown> {
  // AttributeProto.AttributeType numbers: FLOAT 1, INT 2, STRING 3, FLOATS 6, INTS 7.
  switch (value.kind) {
    case "float":
      return { name, type: 1, f: value.value };
    case "int":
      return { name, type: 2, i: value.value };
    case "string":
      return { name, type: 3, s: Buffer.from(value.value, "utf8") };
    case "floats":
      return { name, type: 6, floats: [...value.value] };
    case "ints":
      return { name, type: 7, ints: [...value.value] };
  }
}

// raw_data must be little-endian; copying through a Buffer of the TypedArray's bytes is exact on the
// little-endian hosts onnxruntime-node ships for, and the check keeps a big-endian host from writing garbage.
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Creates an empty graph builder. */
export function createGraphBuilder(options: GraphBuilderOptions): GraphBuilder {
  const inputs: Record<string, unknown>[] = [];
  const outputs: Record<string, unknown>[] = [];
  const initializers: Record<string, unknown>[] = [];
  const nodes: Record<string, unknown>[] = [];
  const names = new Set<string>();

  const claim = (name: string): string => {
    if (name === "") throw new Error("an ONNX value name must not be empty");
    if (names.has(name)) throw new Error(`ONNX value "${name}" is defined twice in graph "${options.name}"`);
    names.add(name);
    return name;
  };

  return {
    input(name, datatype, shape) {
      inputs.push(valueInfo(claim(name), datatype, shape));
      return name;
    },
    output(name, datatype, shape) {
      outputs.push(valueInfo(name, datatype, shape));
      return name;
    },
    initializer(name, datatype, dims, data) {
      const info = datatypeInfo(datatype);
      if (info?.byteSize === undefined) throw new Error(`initializer "${name}": ${datatype} has no raw form`);
      const count = dims.reduce((a, b) => a * b, 1);
      if (data.length !== count || data.BYTES_PER_ELEMENT !== info.byteSize) {
        throw new Error(
          `initializer "${name}": expected ${count} ${datatype} elements for dims [${dims.join(", ")}], ` +
            `got ${data.length} elements of ${data.BYTES_PER_ELEMENT} bytes`,
        );
      }
      if (!LITTLE_ENDIAN) throw new Error("the model builder needs a little-endian host");
      const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      initializers.push({ name: claim(name), dims: [...dims], data_type: info.onnxType, raw_data: raw });
      return name;
    },
    node(opType, nodeInputs, nodeOutputs, attributes = {}) {
      for (const out of nodeOutputs) claim(out);
      nodes.push({
        name: `${opType}_${nodes.length}`,
        op_type: opType,
        input: [...nodeInputs],
        output: [...nodeOutputs],
        attribute: Object.entries(attributes).map(([key, value]) => attribute(key, value)),
      });
      const first = nodeOutputs[0];
      if (first === undefined) throw new Error(`node ${opType} has no outputs`);
      return first;
    },
    build() {
      for (const out of outputs) {
        if (!names.has(out["name"] as string)) {
          throw new Error(`graph "${options.name}": output "${String(out["name"])}" is produced by no node`);
        }
      }
      return encodeModelProto({
        ir_version: options.irVersion ?? 8,
        producer_name: "tbench-model-builder",
        producer_version: "1",
        ...(options.docString === undefined ? {} : { doc_string: options.docString }),
        opset_import: [{ domain: "", version: options.opsetVersion ?? 17 }],
        graph: { name: options.name, node: nodes, initializer: initializers, input: inputs, output: outputs },
      });
    },
  };
}
