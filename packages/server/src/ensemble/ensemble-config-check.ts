/**
 * The checks Triton makes on an ensemble's own configuration, before it looks at any member (core
 * model_config_utils.cc: ValidateModelConfig's ensemble branch, ValidateEnsembleSchedulingConfig and
 * BuildEnsembleGraph), with Triton's messages (INVALID_ARG). The data-flow part walks the graph of
 * ensemble tensors: every ensemble input must be read, every ensemble output written and reachable from the
 * inputs, and every other tensor reachable and read by some step, which also rules out steps that feed each
 * other in a cycle.
 *
 * Run it on the config as read (and auto-completed), before instance groups or optimization defaults are
 * filled in: Triton normalizes neither for ensembles, and this check refuses both.
 */
import type { ModelConfig } from "@tbench/proto";
import { ENSEMBLE_PLATFORM } from "../repository/config-normalize.js";

/** One ensemble tensor in the data-flow graph. */
interface FlowTensor {
  readonly name: string;
  /** Some step writes it (it appears in an output map). */
  written: boolean;
  ready: boolean;
  /** Tensors this one is computed from: the inputs of the step that writes it. */
  readonly prev: FlowTensor[];
  /** Tensors computed from this one. */
  readonly next: FlowTensor[];
}

type Graph = Map<string, FlowTensor>;

function node(graph: Graph, name: string, written: boolean): FlowTensor {
  let tensor = graph.get(name);
  if (!tensor) {
    tensor = { name, written, ready: false, prev: [], next: [] };
    graph.set(name, tensor);
  }
  return tensor;
}

/**
 * BuildEnsembleGraph: links each step's output tensors to its input tensors. Returns Triton's message for a
 * step without model_name, input_map or output_map, or for a tensor written by two steps (or twice by one).
 * Triton's "input '…' is mapped to multiple ensemble tensors" cannot occur here: input_map is a map, and the
 * text-format parser keeps the last value of a repeated key, as protobuf does.
 */
function buildGraph(config: ModelConfig, graph: Graph): string | undefined {
  const name = config.name ?? "";
  const steps = config.ensemble_scheduling?.step ?? [];
  for (const [index, step] of steps.entries()) {
    const where = `in step ${index} of ensemble '${name}'`;
    if (!step.model_name) return `must specify 'model_name' ${where}`;
    const inputMap = Object.entries(step.input_map ?? {});
    const outputMap = Object.entries(step.output_map ?? {});
    if (inputMap.length === 0) return `must specify 'input_map' ${where}`;
    if (outputMap.length === 0) return `must specify 'output_map' ${where}`;
    const outputs: FlowTensor[] = [];
    for (const [, tensorName] of outputMap) {
      const existing = graph.get(tensorName);
      if (existing?.written) {
        return `ensemble tensor '${tensorName}' can appear in an output map only once for ensemble '${name}' step ${index}`;
      }
      const tensor = existing ?? node(graph, tensorName, true);
      tensor.written = true;
      outputs.push(tensor);
    }
    for (const [, tensorName] of inputMap) {
      const input = node(graph, tensorName, false);
      for (const output of outputs) {
        output.prev.push(input);
        input.next.push(output);
      }
    }
  }
  return undefined;
}

/** Marks every tensor computable from the ensemble inputs (all of a tensor's sources ready). */
function markReady(ready: FlowTensor[]): void {
  const queue = [...ready];
  for (let i = 0; i < queue.length; i++) {
    for (const next of queue[i]!.next) {
      if (next.ready) continue;
      if (next.prev.every((p) => p.ready)) {
        next.ready = true;
        queue.push(next);
      }
    }
  }
}

/**
 * Follows an unwritten output back through the first not-ready source at each level (names seen once, as
 * the sources can form a cycle) and names the last one reached, as Triton's message does.
 */
function unconnectedSource(output: FlowTensor): string | undefined {
  let last = output;
  const seen = new Set<string>();
  let sources: FlowTensor[] | undefined = output.prev;
  while (sources && sources.length > 0) {
    const current: FlowTensor[] = sources;
    sources = undefined;
    for (const source of current) {
      if (!source.ready && !seen.has(source.name)) {
        seen.add(source.name);
        last = source;
        sources = source.prev;
        break;
      }
    }
  }
  return last === output ? undefined : last.name;
}

/** The data-flow checks of ValidateEnsembleSchedulingConfig on a built graph. */
function checkDataFlow(config: ModelConfig, graph: Graph): string | undefined {
  const name = config.name ?? "";
  const ready: FlowTensor[] = [];
  for (const input of config.input ?? []) {
    const tensor = graph.get(input.name ?? "");
    // Triton's text, its unbalanced quote included.
    if (!tensor) return `ensemble input '${input.name ?? ""}' for ensemble ${name}' is not used`;
    tensor.ready = true;
    ready.push(tensor);
  }
  markReady(ready);
  const outputs = new Set<string>();
  for (const output of config.output ?? []) {
    const outputName = output.name ?? "";
    const tensor = graph.get(outputName);
    if (!tensor) return `ensemble output '${outputName}' for ensemble ${name}' is not used`;
    if (!tensor.ready) {
      const source = unconnectedSource(tensor);
      const message = `output '${outputName}' for ensemble '${name}' is not written`;
      return source === undefined
        ? message
        : `${message}: at least one of its depending tensors, '${source}', is not connected`;
    }
    outputs.add(outputName);
  }
  for (const tensor of graph.values()) {
    if (outputs.has(tensor.name)) continue;
    if (!tensor.ready || tensor.next.length === 0) {
      return `ensemble tensor '${tensor.name}' is unused in ensemble '${name}'`;
    }
  }
  return undefined;
}

/**
 * A step that writes an ensemble input passes Triton's checks, and Triton then runs the steps reading that
 * input a second time on the new value (its iteration machinery for decoupled models). tbench-server runs
 * each step once per request, so it refuses such a config instead of answering differently.
 */
function inputOverwritten(config: ModelConfig): string | undefined {
  const inputs = new Set((config.input ?? []).map((io) => io.name ?? ""));
  for (const [index, step] of (config.ensemble_scheduling?.step ?? []).entries()) {
    for (const tensorName of Object.values(step.output_map ?? {})) {
      if (inputs.has(tensorName)) {
        return (
          `ensemble tensor '${tensorName}' is an input of ensemble '${config.name ?? ""}' and cannot appear in ` +
          `the output map of step ${index}: tbench-server runs each step once per request`
        );
      }
    }
  }
  return undefined;
}

/**
 * Triton's checks of an ensemble's own config: the message of the first problem, or undefined. A config
 * that is not an ensemble and has no ensemble_scheduling passes.
 */
export function validateEnsembleScheduling(config: ModelConfig): string | undefined {
  const name = config.name ?? "";
  if (!config.ensemble_scheduling) {
    return config.platform === ENSEMBLE_PLATFORM
      ? `ensemble scheduling must be set for ensemble ${name} whose platform is ${ENSEMBLE_PLATFORM}`
      : undefined;
  }
  if (config.platform !== ENSEMBLE_PLATFORM) {
    return `ensemble scheduling cannot be set for model '${name}' whose platform is not ${ENSEMBLE_PLATFORM}`;
  }
  if ((config.instance_group ?? []).length > 0) {
    return `instance group should not be specified for ensemble '${name}'`;
  }
  if (config.optimization !== undefined) return `optimization should not be specified for ensemble '${name}'`;
  if ((config.model_warmup ?? []).length > 0)
    return `model_warmup can not be specified for ensemble '${name}'`;
  if ((config.ensemble_scheduling.step ?? []).length === 0) {
    return `must specify 'step' for ensemble '${name}'`;
  }
  const graph: Graph = new Map();
  return buildGraph(config, graph) ?? checkDataFlow(config, graph) ?? inputOverwritten(config);
}
