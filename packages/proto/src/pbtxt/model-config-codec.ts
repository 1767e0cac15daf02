/**
 * config.pbtxt entry points: the text format codec bound to Triton's `inference.ModelConfig`.
 */
import type { ModelConfig } from "../model-config.js";
import { modelConfigType } from "../proto-root.js";
import { withDefaults } from "./defaults.js";
import { type ParseTextFormatOptions, parseTextFormat } from "./parser.js";
import { printTextFormat } from "./printer.js";

/** Options of {@link parseModelConfig}. */
export type ParseModelConfigOptions = ParseTextFormatOptions;

/**
 * Parses a Triton config.pbtxt into a {@link ModelConfig} (proto3 JSON form with the .proto field names;
 * 64-bit integers as decimal strings). Only fields written in the text appear.
 *
 * @param text - the contents of a config.pbtxt.
 * @param options - `fileName` to name in error messages (default `config.pbtxt`).
 * @throws {@link TextFormatError} with line and column when the text is malformed or does not fit the schema.
 */
export function parseModelConfig(text: string, options: ParseModelConfigOptions = {}): ModelConfig {
  return parseTextFormat(modelConfigType(), text, {
    fileName: options.fileName ?? "config.pbtxt",
  }) as ModelConfig;
}

/**
 * Prints a {@link ModelConfig} as config.pbtxt text, as a Triton user writes it; {@link parseModelConfig}
 * reads it back to a deep-equal object.
 *
 * @throws {@link TextFormatValueError} naming the path of a value that does not fit the schema.
 */
export function printModelConfig(config: ModelConfig): string {
  return printTextFormat(modelConfigType(), config);
}

/**
 * Returns a copy of `config` with every field that has no presence set to its proto3 default, the way
 * Triton shows a model config as JSON: scalars 0 / "" / false, enums their first value, 64-bit integers
 * "0", repeated fields [], maps {}. Sub-messages that are unset stay absent.
 */
export function applyModelConfigDefaults(config: ModelConfig): ModelConfig {
  return withDefaults(modelConfigType(), config) as ModelConfig;
}
