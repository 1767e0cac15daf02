/**
 * What a generator version needs beyond an ONNX model's load: its settings from the config, its tokenizer
 * (a file inside the model's directory, bounded in size), and a step model whose inputs and outputs keep
 * the contract: `input_ids` int64 [batch, 1], `state` float32 [batch, H] in; `logits` float32
 * [batch, vocabulary] and `state_out` float32 [batch, H] out. Every failure is INVALID_ARG naming the model.
 */
import { readFile, stat } from "node:fs/promises";
import { ServerError } from "../core/server-error.js";
import type { SessionIo } from "../instances/worker-protocol.js";
import { ConfinementError, confinedPath } from "../repository/confinement.js";
import type { ModelSpec } from "../repository/model-spec.js";
import { type GeneratorSettings, generatorSettings, STEP_IO } from "./generator-config.js";
import { createTokenizer, type Tokenizer } from "./tokenizer.js";

/** The largest tokenizer file read (a config's word, still bounded before reading). */
const MAX_TOKENIZER_BYTES = 32 * 1024 * 1024;

export interface PreparedGenerator {
  readonly settings: GeneratorSettings;
  readonly tokenizer: Tokenizer;
  /** Elements of one stream's state (H). */
  readonly stateSize: number;
}

function fail(message: string): never {
  throw new ServerError("INVALID_ARG", message);
}

async function readTokenizer(dir: string, spec: ModelSpec, file: string): Promise<Tokenizer> {
  const what = `tokenizer '${file}' of model '${spec.name}'`;
  let path: string;
  try {
    path = await confinedPath(dir, "", file, what);
  } catch (error) {
    if (error instanceof ConfinementError) fail(error.message);
    throw error;
  }
  const size = await stat(path).then(
    (info) => info.size,
    () => fail(`unable to read ${what}: no such file in the model's directory`),
  );
  if (size > MAX_TOKENIZER_BYTES)
    fail(`${what} is ${size} bytes, more than the ${MAX_TOKENIZER_BYTES} allowed`);
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    fail(`${what} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return createTokenizer(json);
  } catch (error) {
    return fail(`${what} is invalid: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Checks the step model's IO against the contract; returns H. */
function stepStateSize(spec: ModelSpec, io: SessionIo, vocabularySize: number): number {
  const find = (list: SessionIo["inputs"], name: string, kind: string, ortType: string) => {
    const tensor = list.find((t) => t.name === name);
    if (tensor === undefined || tensor.ortType !== ortType || tensor.dims.length !== 2) {
      fail(
        `the step model of '${spec.name}' must have ${kind} '${name}' of type ${ortType} with 2 dimensions [batch, n]` +
          (tensor ? `, got ${tensor.ortType ?? "a non-tensor"} with ${tensor.dims.length}` : ", it has none"),
      );
    }
    return tensor;
  };
  find(io.inputs, STEP_IO.inputIds, "input", "int64");
  const state = find(io.inputs, STEP_IO.state, "input", "float32");
  const logits = find(io.outputs, STEP_IO.logits, "output", "float32");
  const stateOut = find(io.outputs, STEP_IO.stateOut, "output", "float32");
  const size = state.dims[1]!;
  if (size < 1 || stateOut.dims[1] !== size) {
    fail(
      `the step model of '${spec.name}' must have '${STEP_IO.state}' and '${STEP_IO.stateOut}' of one fixed width`,
    );
  }
  if (logits.dims[1] !== vocabularySize) {
    fail(
      `the step model of '${spec.name}' has ${logits.dims[1]} logits per row, its tokenizer ${vocabularySize} tokens`,
    );
  }
  return size;
}

/** Reads and checks everything a generator version needs besides its instances. */
export async function prepareGenerator(
  dir: string,
  spec: ModelSpec,
  decoupled: boolean,
  stepIo: SessionIo,
): Promise<PreparedGenerator> {
  const settings = generatorSettings(spec, decoupled);
  const tokenizer = await readTokenizer(dir, spec, settings.tokenizerFile);
  return { settings, tokenizer, stateSize: stepStateSize(spec, stepIo, tokenizer.vocabularySize) };
}
