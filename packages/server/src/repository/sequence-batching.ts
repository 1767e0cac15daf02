/**
 * `sequence_batching` (Triton's sequence batcher for stateful models): its checks, with Triton's messages
 * (model_config_utils.cc ValidateModelConfig and the scheduler's state checks), its defaults (an idle
 * timeout of 1 s, the direct strategy, oldest's preferred size [max_batch_size]), and the resolved spec the
 * scheduler runs on: the strategy, the control inputs the server fills (START, END, READY as a configured
 * false/true pair, CORRID in a configured type) and the implicit states it carries between requests.
 */
import {
  type Datatype,
  datatypeFromConfigType,
  type ModelConfig,
  type ModelSequenceBatching,
  type ModelSequenceBatching_Control,
  type ModelSequenceBatching_State,
} from "@tbench/proto";
import { int64List, int64Value } from "./config-numbers.js";

/** Triton's SEQUENCE_IDLE_DEFAULT_MICROSECONDS: max_sequence_idle_microseconds 0 or unset means this. */
export const DEFAULT_MAX_SEQUENCE_IDLE_US = 1_000_000;

/** A control the server sets as one of two values: a sequence's first request, last request, a live row. */
export interface FlagControlSpec {
  readonly kind: "START" | "END" | "READY";
  /** The model input that receives it. */
  readonly name: string;
  readonly datatype: "INT32" | "FP32" | "BOOL";
  /** [false value, true value], from int32_false_true, fp32_false_true or bool_false_true. */
  readonly values: readonly [number | boolean, number | boolean];
}

/** The control that receives the correlation id (a 32-bit type keeps the id's low 32 bits). */
export interface CorrIdControlSpec {
  readonly kind: "CORRID";
  readonly name: string;
  readonly datatype: "UINT64" | "INT64" | "UINT32" | "INT32" | "BYTES";
}

export type SequenceControlSpec = FlagControlSpec | CorrIdControlSpec;

/** An implicit state: `outputName` of one request is `inputName` of the sequence's next. */
export interface SequenceStateSpec {
  readonly inputName: string;
  readonly outputName: string;
  readonly datatype: Datatype;
  /** Config dims without the batch dimension (-1: variable, the state output's shape decides). */
  readonly dims: readonly number[];
  /** The first request's state shape: initial_state's dims, or `dims` with every -1 as 1. */
  readonly initialDims: readonly number[];
  /**
   * What a sequence's first request gets: zeros, or the bytes of `initial_state/<file>` in the model's
   * directory (read at load). Without initial_state Triton leaves the buffer uninitialised; here it is zeros.
   */
  readonly initial: { readonly kind: "zero" } | { readonly kind: "file"; readonly file: string };
}

export type SequenceStrategySpec =
  | {
      readonly kind: "direct";
      readonly maxQueueDelayUs: number;
      /** 0: a batch runs as soon as a slot has a request. */
      readonly minimumSlotUtilization: number;
    }
  | {
      readonly kind: "oldest";
      readonly maxCandidateSequences: number;
      readonly preferredBatchSizes: readonly number[];
      readonly maxQueueDelayUs: number;
      readonly preserveOrdering: boolean;
    };

export interface SequenceBatchingSpec {
  readonly strategy: SequenceStrategySpec;
  readonly maxSequenceIdleUs: number;
  readonly controls: readonly SequenceControlSpec[];
  readonly states: readonly SequenceStateSpec[];
  /** Sequences one instance holds at once: max(1, max_batch_size), or oldest's max_candidate_sequences. */
  readonly slotsPerInstance: number;
}

const CORRID_TYPES = ["TYPE_UINT64", "TYPE_INT64", "TYPE_UINT32", "TYPE_INT32", "TYPE_STRING"];
const FALSE_TRUE_FIELDS = ["int32_false_true", "fp32_false_true", "bool_false_true"] as const;

/** Fills Triton's defaults in place (NormalizeModelConfig): the idle timeout, oldest's preferred sizes. */
export function normalizeSequenceBatching(config: ModelConfig): void {
  const sequence = config.sequence_batching;
  if (!sequence) return;
  if (int64Value(sequence.max_sequence_idle_microseconds, "max_sequence_idle_microseconds") === 0) {
    sequence.max_sequence_idle_microseconds = String(DEFAULT_MAX_SEQUENCE_IDLE_US);
  }
  const maxBatchSize = config.max_batch_size ?? 0;
  if (sequence.oldest && !sequence.oldest.preferred_batch_size?.length && maxBatchSize > 0) {
    sequence.oldest.preferred_batch_size = [maxBatchSize];
  }
}

function falseTrueFields(control: ModelSequenceBatching_Control) {
  return FALSE_TRUE_FIELDS.filter((field) => control[field] !== undefined && control[field].length > 0);
}

/** Triton's per-entry checks of control_input (the first Get...ControlProperties call makes them all). */
function validateControlEntries(sequence: ModelSequenceBatching, model: string): string | undefined {
  const seenNames = new Set<string>();
  const seenKinds = new Set<string>();
  for (const input of sequence.control_input ?? []) {
    const name = input.name ?? "";
    if (name === "") return `sequence batching control tensor must have a name for ${model}`;
    if (seenNames.has(name)) {
      return `sequence batching control tensor '${name}' is specified for multiple control kinds for ${model}`;
    }
    seenNames.add(name);
    for (const control of input.control ?? []) {
      const kind = control.kind ?? "CONTROL_SEQUENCE_START";
      if (seenKinds.has(kind)) return `sequence batching specifies multiple ${kind} tensors for ${model}`;
      seenKinds.add(kind);
      const lists = falseTrueFields(control);
      if (kind === "CONTROL_SEQUENCE_CORRID") {
        if (lists.length > 0) {
          return `sequence batching must not specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for CONTROL_SEQUENCE_CORRID for ${model}`;
        }
        if (!CORRID_TYPES.includes(control.data_type ?? "TYPE_INVALID")) {
          return `unexpected data type for control CONTROL_SEQUENCE_CORRID for ${model}. Allowed data types are TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING`;
        }
        continue;
      }
      if (lists.length === 0) {
        return `sequence batching must specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for ${kind} for ${model}`;
      }
      if (lists.length > 1) {
        return `sequence batching specifies more than one from 'int32_false_true', 'fp32_false_true' and 'bool_false_true' for ${kind} for ${model}`;
      }
      const field = lists[0]!;
      if (control[field]!.length !== 2) {
        return `sequence batching control '${field}' must have exactly 2 entries for ${kind} for ${model}`;
      }
    }
  }
  return undefined;
}

function validateState(
  state: ModelSequenceBatching_State,
  seenInputs: Set<string>,
  model: string,
): string | undefined {
  const input = state.input_name ?? "";
  const output = state.output_name ?? "";
  if (input === "" || output === "") {
    return `sequence batching state must have an input_name and an output_name for ${model}`;
  }
  const datatype = datatypeFromConfigType(state.data_type ?? "TYPE_INVALID");
  if (!datatype) return `sequence batching state '${input}' must have a valid data_type for ${model}`;
  const dims = int64List(state.dims, `state '${input}' dims`);
  if (dims.length === 0 || dims.some((d) => d < 1 && d !== -1)) {
    return `sequence batching state '${input}' must have dims of values >= 1 or -1 for ${model}`;
  }
  const initial = state.initial_state ?? [];
  if (initial.length > 1) {
    return `initial_state field for state input '${input}' must contain exactly one or zero element. Found '${initial.length}' elements.`;
  }
  const first = initial[0];
  if (first === undefined) return undefined;
  if ((first.data_type ?? "TYPE_INVALID") !== state.data_type) {
    return `The data type used for 'initial_state' field of state '${input}' does not match the state data type.`;
  }
  if ((first.name ?? "") === "") {
    return `Field 'name' must be set when using initial_state for state input '${input}'.`;
  }
  if (seenInputs.has(input)) return `State input name '${input}' specified more than once.`;
  seenInputs.add(input);
  const initialDims = int64List(first.dims, `initial_state of '${input}' dims`);
  if (initialDims.length !== dims.length) {
    return `Number of dimensions in 'initial_state' doesn't match the size of 'state' dimensions for state input '${input}'. ${initialDims.length} != ${dims.length}`;
  }
  for (let i = 0; i < dims.length; i++) {
    if (initialDims[i] === -1) {
      return `'initial_state' field for state input name '${input}' contains variable dimensions.`;
    }
    if (dims[i] !== -1 && initialDims[i] !== dims[i]) {
      return `'initial_state' dim for input name '${input}' doesn't match 'state' dim description. ${initialDims[i]} != ${dims[i]}`;
    }
  }
  if (first.zero_data !== true && (first.data_file ?? "") === "") {
    return `initial_state setting expects state'${input}' to have state_data set`;
  }
  return undefined;
}

/** Triton's checks of a (normalized) sequence_batching section; undefined when it is valid. */
export function validateSequenceBatching(config: ModelConfig): string | undefined {
  const sequence = config.sequence_batching;
  if (!sequence) return undefined;
  const model = config.name ?? "";
  const maxBatchSize = config.max_batch_size ?? 0;
  if (config.dynamic_batching) {
    return `model '${model}' sets both dynamic_batching and sequence_batching; a model has one scheduler`;
  }
  if (config.response_cache?.enable === true) {
    return `Response Cache does not currently support model ${model} with sequence batching scheduler. Please disable the response cache.`;
  }
  const controls = validateControlEntries(sequence, model);
  if (controls) return controls;
  if (sequence.oldest) {
    for (const size of sequence.oldest.preferred_batch_size ?? []) {
      if (size <= 0) return `sequence batching preferred batch size must be positive for ${model}`;
      if (size > maxBatchSize)
        return `sequence batching preferred batch size must be <= max batch size for ${model}`;
    }
    if ((sequence.oldest.max_candidate_sequences ?? 0) < 0) {
      return `sequence batching max_candidate_sequences must be non-negative for ${model}`;
    }
  } else {
    const utilization = sequence.direct?.minimum_slot_utilization ?? 0;
    if (utilization < 0 || utilization > 1) {
      return `sequence batching minimum slot utilization must be in range (0.0, 1.0] for ${model}`;
    }
  }
  const seenInputs = new Set<string>();
  for (const state of sequence.state ?? []) {
    const problem = validateState(state, seenInputs, model);
    if (problem) return problem;
  }
  return undefined;
}

function controlSpec(name: string, control: ModelSequenceBatching_Control): SequenceControlSpec {
  const kind = control.kind ?? "CONTROL_SEQUENCE_START";
  if (kind === "CONTROL_SEQUENCE_CORRID") {
    const datatype = datatypeFromConfigType(control.data_type ?? "TYPE_INVALID")!.datatype;
    return { kind: "CORRID", name, datatype: datatype as CorrIdControlSpec["datatype"] };
  }
  const flagKind = kind.slice("CONTROL_SEQUENCE_".length) as FlagControlSpec["kind"];
  if (control.int32_false_true?.length) {
    const [f, t] = control.int32_false_true;
    return { kind: flagKind, name, datatype: "INT32", values: [f!, t!] };
  }
  if (control.fp32_false_true?.length) {
    const [f, t] = control.fp32_false_true;
    return { kind: flagKind, name, datatype: "FP32", values: [f!, t!] };
  }
  const [f, t] = control.bool_false_true ?? [false, true];
  return { kind: flagKind, name, datatype: "BOOL", values: [f!, t!] };
}

/** The resolved spec of a validated, normalized sequence_batching section. */
export function sequenceBatchingSpec(config: ModelConfig): SequenceBatchingSpec | undefined {
  const sequence = config.sequence_batching;
  if (!sequence) return undefined;
  const maxBatchSize = config.max_batch_size ?? 0;
  const controls = (sequence.control_input ?? []).flatMap((input) =>
    (input.control ?? []).map((control) => controlSpec(input.name ?? "", control)),
  );
  const states = (sequence.state ?? []).map((state): SequenceStateSpec => {
    const first = state.initial_state?.[0];
    const file = first?.data_file ?? "";
    const dims = int64List(state.dims, "state dims");
    return {
      inputName: state.input_name ?? "",
      outputName: state.output_name ?? "",
      datatype: datatypeFromConfigType(state.data_type ?? "TYPE_INVALID")!.datatype,
      dims,
      initialDims: first ? int64List(first.dims, "initial_state dims") : dims.map((d) => (d === -1 ? 1 : d)),
      initial: file !== "" ? { kind: "file", file } : { kind: "zero" },
    };
  });
  const oldest = sequence.oldest;
  const strategy: SequenceStrategySpec = oldest
    ? {
        kind: "oldest",
        maxCandidateSequences: oldest.max_candidate_sequences || Math.max(1, maxBatchSize),
        preferredBatchSizes: [...new Set(oldest.preferred_batch_size ?? [])].sort((a, b) => a - b),
        maxQueueDelayUs: int64Value(oldest.max_queue_delay_microseconds, "max_queue_delay_microseconds"),
        preserveOrdering: oldest.preserve_ordering === true,
      }
    : {
        kind: "direct",
        maxQueueDelayUs: int64Value(
          sequence.direct?.max_queue_delay_microseconds,
          "max_queue_delay_microseconds",
        ),
        minimumSlotUtilization: sequence.direct?.minimum_slot_utilization ?? 0,
      };
  return {
    strategy,
    maxSequenceIdleUs:
      int64Value(sequence.max_sequence_idle_microseconds, "max_sequence_idle_microseconds") ||
      DEFAULT_MAX_SEQUENCE_IDLE_US,
    controls,
    states,
    slotsPerInstance: strategy.kind === "oldest" ? strategy.maxCandidateSequences : Math.max(1, maxBatchSize),
  };
}
