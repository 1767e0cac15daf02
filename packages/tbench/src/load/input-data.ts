import { type Datatype, datatypeInfo, unhandledDatatype } from "@tbench/proto";
import { createSeededRandom } from "./schedule.js";

/** An input as the model's metadata describes it (`-1` for variable dimensions). */
export interface InputMetadata {
  readonly name: string;
  readonly datatype: Datatype;
  readonly shape: readonly number[];
}

/** One tensor of a request, in the shape `@tbench/client`'s `InferInput` accepts. */
export interface TensorData {
  name: string;
  datatype: Datatype;
  shape: number[];
  data: ArrayLike<number | bigint> | string[];
}

/** Expected output values (from `validation_data`), flattened. */
export interface ExpectedOutput {
  name: string;
  values: (number | string | boolean)[];
}

/** The data of one distinct request; requests use these round-robin. */
export interface RequestData {
  inputs: TensorData[];
  expected: ExpectedOutput[] | undefined;
}

/** A parsed perf_analyzer input-data JSON file. */
export interface InputDataFile {
  path: string;
  json: unknown;
}

/** Options of {@link buildRequestData}. */
export interface InputDataOptions {
  /** The model's name, for messages. */
  model?: string;
  inputs: readonly InputMetadata[];
  /** `max_batch_size` from the model config: > 0 means the first metadata dimension is the batch. */
  maxBatchSize: number;
  batchSize: number;
  /** `--shape name:d1,d2` (without the batch dimension). */
  shapes: Readonly<Record<string, readonly number[]>>;
  source: "zero" | "random" | readonly InputDataFile[];
  stringLength: number;
  stringData: string | undefined;
  seed?: number;
}

function product(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** The per-sample shape of an input: `--shape`, or the metadata's shape without the batch dimension. */
function sampleShape(
  input: InputMetadata,
  options: InputDataOptions,
  fromFile?: readonly number[],
): number[] {
  const given = fromFile ?? options.shapes[input.name];
  const declared = options.maxBatchSize > 0 ? input.shape.slice(1) : [...input.shape];
  if (given !== undefined) {
    if (given.length !== declared.length) {
      throw new Error(
        `--shape ${input.name}: expected ${declared.length} dimension(s) (model declares [${declared.join(",")}]), ` +
          `got [${given.join(",")}]`,
      );
    }
    // A shape that contradicts a fixed dimension would fail every request; perf_analyzer silently uses
    // the model's shape instead. Refusing tells the user their flag does nothing there.
    if (fromFile === undefined && given.some((d, i) => declared[i]! >= 0 && declared[i] !== d)) {
      throw new Error(
        `--shape ${input.name}: ${modelOf(options)}declares [${declared.join(",")}] for ${input.name}; ` +
          `--shape can set only its variable (-1) dimensions, got [${given.join(",")}]`,
      );
    }
    return [...given];
  }
  if (declared.some((d) => d < 0)) {
    throw new Error(
      `input ${input.name} has variable dimensions [${declared.join(",")}]; give its shape with ` +
        `--shape ${input.name}:${declared.map((d) => (d < 0 ? "N" : String(d))).join(",")}`,
    );
  }
  return declared;
}

function modelOf(options: InputDataOptions): string {
  return options.model === undefined ? "the model " : `model '${options.model}' `;
}

/** Every `--shape` must name an input of the model (perf_analyzer ignores unknown names; a typo then goes unnoticed). */
function checkShapeNames(options: InputDataOptions): void {
  const names = new Set(options.inputs.map((input) => input.name));
  for (const name of Object.keys(options.shapes)) {
    if (!names.has(name)) {
      throw new Error(
        `--shape ${name}: ${modelOf(options)}has no input named ${name}; its inputs: ` +
          `${[...names].join(", ") || "(none)"}`,
      );
    }
  }
}

function generate(
  datatype: Datatype,
  count: number,
  kind: "zero" | "random",
  options: InputDataOptions,
  random: () => number,
): TensorData["data"] {
  if (datatype === "BYTES") {
    const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    return Array.from({ length: count }, () => {
      if (options.stringData !== undefined) return options.stringData;
      if (kind === "zero") return "0".repeat(options.stringLength);
      let s = "";
      for (let i = 0; i < options.stringLength; i++) s += alphabet[Math.floor(random() * alphabet.length)];
      return s;
    });
  }
  const info = datatypeInfo(datatype);
  if (info?.typedArray === undefined) throw new Error(`unsupported input datatype ${datatype}`);
  const array = new info.typedArray(count);
  if (kind === "zero") return array;
  for (let i = 0; i < count; i++) {
    const u = random();
    switch (datatype) {
      case "FP32":
      case "FP64":
        (array as Float32Array)[i] = u;
        break;
      case "FP16": // bit patterns of half floats in [0, 1)
        (array as Uint16Array)[i] = Math.floor(u * 0x3bff);
        break;
      case "BF16": // bit patterns of bfloat16 values in [0, 1)
        (array as Uint16Array)[i] = Math.floor(u * 0x3f7f);
        break;
      case "BOOL":
        (array as Uint8Array)[i] = u < 0.5 ? 0 : 1;
        break;
      case "INT64":
      case "UINT64":
        (array as BigInt64Array)[i] = BigInt(Math.floor(u * 256));
        break;
      case "INT8":
      case "INT16":
      case "INT32":
      case "UINT8":
      case "UINT16":
      case "UINT32":
        // Small non-negative values keep every integer type (and sums of them) in range.
        (array as Int32Array)[i] = Math.floor(u * 128);
        break;
      default:
        unhandledDatatype(datatype);
    }
  }
  return array;
}

function flattenValues(value: unknown, into: unknown[]): unknown[] {
  if (Array.isArray(value)) for (const v of value) flattenValues(v, into);
  else into.push(value);
  return into;
}

interface FileStep {
  values: Record<string, { values: unknown[]; shape: number[] | undefined }>;
  expected: ExpectedOutput[] | undefined;
}

function decodeB64(b64: string, datatype: Datatype, where: string): unknown[] {
  const bytes = Buffer.from(b64, "base64");
  if (datatype === "BYTES") return [bytes.toString("utf8")];
  const info = datatypeInfo(datatype);
  if (info?.typedArray === undefined || info.byteSize === undefined)
    throw new Error(`${where}: bad datatype`);
  if (bytes.byteLength % info.byteSize !== 0) {
    throw new Error(`${where}: b64 data of ${bytes.byteLength} bytes is not a multiple of ${info.byteSize}`);
  }
  const copy = new Uint8Array(bytes);
  return Array.from(
    new info.typedArray(copy.buffer, 0, bytes.byteLength / info.byteSize) as ArrayLike<unknown>,
  );
}

const MIXED_DATA =
  "Inconsistency in input-data provided. Can not have a combination of objects and arrays inside of the Data array";
const UNALIGNED_VALIDATION = "The 'validation_data' field doesn't align with 'data' field in the json file";

/** One step (an object of inputs) and its optional `validation_data` entry. */
function readStep(step: unknown, check: unknown, inputs: readonly InputMetadata[], where: string): FileStep {
  if (step === null || typeof step !== "object") throw new Error(`${where}: expected an object of inputs`);
  const values: FileStep["values"] = {};
  for (const input of inputs) {
    const raw = (step as Record<string, unknown>)[input.name];
    if (raw === undefined) throw new Error(`${where}: input "${input.name}" is missing`);
    if (raw !== null && typeof raw === "object" && !Array.isArray(raw)) {
      const obj = raw as { content?: unknown; shape?: unknown; b64?: unknown };
      const shape = Array.isArray(obj.shape) ? (obj.shape as number[]) : undefined;
      if (typeof obj.b64 === "string") {
        values[input.name] = {
          values: decodeB64(obj.b64, input.datatype, `${where}.${input.name}`),
          shape,
        };
      } else if (obj.content !== undefined) {
        values[input.name] = { values: flattenValues(obj.content, []), shape };
      } else {
        throw new Error(`${where}.${input.name}: expected an array, {"content", "shape"} or {"b64"}`);
      }
    } else {
      values[input.name] = { values: flattenValues(raw, []), shape: undefined };
    }
  }
  let expected: ExpectedOutput[] | undefined;
  if (check !== undefined && check !== null && typeof check === "object") {
    expected = Object.entries(check as Record<string, unknown>).map(([name, value]) => {
      const content =
        value !== null && typeof value === "object" && !Array.isArray(value)
          ? (value as { content?: unknown }).content
          : value;
      return { name, values: flattenValues(content, []) as ExpectedOutput["values"] };
    });
  }
  return { values, expected };
}

/**
 * Reads perf_analyzer's JSON input format, `{"data": [...], "validation_data": [...]}`, as its data loader
 * does: `data` is either a list of steps (objects of inputs), which every such file appends to one stream,
 * or a list of streams (lists of steps), each a stream of its own (a sequence model's sequence draws its
 * data from one stream); the two forms never mix, within a file or across files.
 */
function readFileStreams(
  files: readonly InputDataFile[],
  inputs: readonly InputMetadata[],
): { steps: FileStep[]; streamSteps: number[] } {
  const flat: FileStep[] = [];
  const streams: FileStep[][] = [];
  let multipleStreams: boolean | undefined;
  for (const file of files) {
    const json = file.json as { data?: unknown; validation_data?: unknown };
    if (json === null || typeof json !== "object" || !Array.isArray(json.data)) {
      throw new Error(
        `${file.path}: expected an object with a "data" array (perf_analyzer's input data format)`,
      );
    }
    const data = json.data as unknown[];
    for (const entry of data) {
      multipleStreams ??= Array.isArray(entry);
      if (Array.isArray(entry) !== multipleStreams) throw new Error(`${file.path}: ${MIXED_DATA}`);
    }
    const validation = Array.isArray(json.validation_data) ? (json.validation_data as unknown[]) : undefined;
    if (multipleStreams !== true) {
      if (validation !== undefined && validation.length !== data.length) {
        throw new Error(
          `${file.path}: "validation_data" has ${validation.length} entries, expected one per "data" entry (${data.length})`,
        );
      }
      data.forEach((step, k) => {
        flat.push(readStep(step, validation?.[k], inputs, `${file.path}, data[${k}]`));
      });
      continue;
    }
    if (validation !== undefined && validation.length !== data.length) {
      throw new Error(`${file.path}: ${UNALIGNED_VALIDATION}`);
    }
    data.forEach((stream, i) => {
      const steps = stream as unknown[];
      if (steps.length === 0) {
        throw new Error(`${file.path}: data[${i}] is an empty stream; a stream needs at least one step`);
      }
      const checks = validation?.[i];
      if (checks !== undefined && (!Array.isArray(checks) || checks.length !== steps.length)) {
        throw new Error(`${file.path}: ${UNALIGNED_VALIDATION}`);
      }
      streams.push(
        steps.map((step, k) =>
          readStep(step, (checks as unknown[] | undefined)?.[k], inputs, `${file.path}, data[${i}][${k}]`),
        ),
      );
    });
  }
  if (multipleStreams === true) return { steps: streams.flat(), streamSteps: streams.map((s) => s.length) };
  return { steps: flat, streamSteps: flat.length === 0 ? [] : [flat.length] };
}

function toTensorData(datatype: Datatype, values: unknown[], where: string): TensorData["data"] {
  if (datatype === "BYTES") return values.map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
  const info = datatypeInfo(datatype);
  if (info?.typedArray === undefined) throw new Error(`${where}: unsupported datatype ${datatype}`);
  const array = new info.typedArray(values.length);
  const big = datatype === "INT64" || datatype === "UINT64";
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const n = typeof v === "boolean" ? Number(v) : v;
    if (typeof n !== "number" && typeof n !== "string") {
      throw new Error(`${where}: expected numbers, got ${JSON.stringify(v)} at element ${i}`);
    }
    if (big) (array as BigInt64Array)[i] = BigInt(n);
    else (array as Float64Array)[i] = Number(n);
  }
  return array;
}

function concatData(datatype: Datatype, parts: TensorData["data"][]): TensorData["data"] {
  if (datatype === "BYTES") return (parts as string[][]).flat();
  const info = datatypeInfo(datatype);
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new info!.typedArray!(total);
  let offset = 0;
  for (const part of parts) {
    (out as Float64Array).set(part as Float64Array, offset);
    offset += part.length;
  }
  return out;
}

/** The distinct requests of a run, and how the JSON data divides them into streams. */
export interface InputData {
  readonly requests: RequestData[];
  /**
   * With JSON files, the step count of each stream, in request-list order (one request per step at
   * `-b 1`): a sequence model's sequence takes its data from one stream. `undefined` for zero or random data.
   */
  readonly streamSteps: readonly number[] | undefined;
}

/**
 * Builds the distinct requests tbench sends, from the model's metadata and the input-data options, as
 * perf_analyzer does: zero or seeded random data of the declared (or `--shape`) shape, or the steps of
 * JSON files (appended in order). With `-b N` on a batching model each request stacks N samples.
 */
export function buildRequestData(options: InputDataOptions): RequestData[] {
  return buildInputData(options).requests;
}

/** {@link buildRequestData}, with the JSON data's streams. */
export function buildInputData(options: InputDataOptions): InputData {
  const { inputs, batchSize } = options;
  if (options.maxBatchSize === 0 && batchSize > 1) {
    throw new Error(`-b ${batchSize}: the model does not support batching (max_batch_size 0); use -b 1`);
  }
  if (options.maxBatchSize > 0 && batchSize > options.maxBatchSize) {
    throw new Error(`-b ${batchSize}: expected at most the model's max_batch_size ${options.maxBatchSize}`);
  }
  checkShapeNames(options);
  const batched = (shape: number[]) => (options.maxBatchSize > 0 ? [batchSize, ...shape] : shape);

  if (options.source === "zero" || options.source === "random") {
    const kind = options.source;
    const random = createSeededRandom(options.seed ?? 1);
    const tensors = inputs.map((input) => {
      const shape = batched(sampleShape(input, options));
      return {
        name: input.name,
        datatype: input.datatype,
        shape,
        data: generate(input.datatype, product(shape), kind, options, random),
      };
    });
    return { requests: [{ inputs: tensors, expected: undefined }], streamSteps: undefined };
  }

  const { steps, streamSteps } = readFileStreams(options.source, inputs);
  if (steps.length === 0) throw new Error("--input-data: the JSON file(s) hold no data entries");
  const requests = steps.map((_, first) => {
    const group = Array.from({ length: batchSize }, (__, k) => steps[(first + k) % steps.length]!);
    const tensors = inputs.map((input) => {
      let shape: number[] = [];
      const parts = group.map((step, k) => {
        const entry = step.values[input.name]!;
        shape = sampleShape(input, options, entry.shape);
        const where = `--input-data, data[${(first + k) % steps.length}].${input.name}`;
        if (entry.values.length !== product(shape)) {
          throw new Error(
            `${where}: expected ${product(shape)} element(s) for shape [${shape.join(",")}], got ${entry.values.length}`,
          );
        }
        return toTensorData(input.datatype, entry.values, where);
      });
      return {
        name: input.name,
        datatype: input.datatype,
        shape: batched(shape),
        data: concatData(input.datatype, parts),
      };
    });
    const expectations = group.map((step) => step.expected);
    const expected = expectations.every((e) => e !== undefined)
      ? (expectations[0] ?? []).map((out) => ({
          name: out.name,
          values: expectations.flatMap((e) => e.find((o) => o.name === out.name)?.values ?? []),
        }))
      : undefined;
    return { inputs: tensors, expected };
  });
  return { requests, streamSteps };
}
