/**
 * Access to the config.pbtxt codec of @tbench/proto (`parseModelConfig`), looked up at run time so the core
 * builds while the codec is being written; a repository read without it fails with a clear reason.
 */
import * as proto from "@tbench/proto";
import type { ConfigObject } from "../repository/config-fields.js";

type Parse = (text: string, options?: { fileName?: string }) => unknown;

/** Parses config.pbtxt text into the proto3-JSON object form; throws with the codec's message. */
export function parseConfigText(text: string, fileName?: string): ConfigObject {
  const parse = (proto as unknown as { parseModelConfig?: Parse }).parseModelConfig;
  if (typeof parse !== "function") {
    throw new Error(
      "the config.pbtxt codec (parseModelConfig of @tbench/proto) is not available in this build",
    );
  }
  return structuredClone(parse(text, fileName !== undefined ? { fileName } : {})) as ConfigObject;
}
