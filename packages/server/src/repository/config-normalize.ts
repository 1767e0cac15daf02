/**
 * Triton's config normalization: the defaults a model configuration gets before it is validated and served
 * (model_config_utils.cc NormalizeModelConfig, SetDefaultInstanceCount, the onnxruntime backend's fill-ins).
 * Every function edits the config in place; callers work on a clone.
 */
import type { ModelConfig } from "@tbench/proto";
import { normalizeSequenceBatching } from "./sequence-batching.js";

/** The platform and backend names Triton uses for ONNX models. */
export const ONNX_PLATFORM = "onnxruntime_onnx";
export const ONNX_BACKEND = "onnxruntime";
export const ENSEMBLE_PLATFORM = "ensemble";
/** The generation backend (generation/): a step model run once per token by the server's decoding loop. */
export const GENERATOR_BACKEND = "tbench_generator";

/**
 * Fills what Triton fills before anything else: the name from the directory, backend/platform for ONNX
 * models, `default_model_filename`, and `version_policy` (latest 1).
 */
export function fillModelIdentity(config: ModelConfig, directoryName: string, hasOnnxFile: boolean): void {
  if (!config.name) config.name = directoryName;
  const platform = config.platform ?? "";
  const backend = config.backend ?? "";
  if (platform === "" && backend === "" && hasOnnxFile) {
    config.backend = ONNX_BACKEND;
    config.platform = ONNX_PLATFORM;
  } else if (platform === ONNX_PLATFORM && backend === "") {
    config.backend = ONNX_BACKEND;
  } else if (backend === ONNX_BACKEND && platform === "") {
    config.platform = ONNX_PLATFORM;
  }
  if (config.platform !== ENSEMBLE_PLATFORM && !config.default_model_filename) {
    config.default_model_filename = "model.onnx";
  }
  config.version_policy ??= { latest: { num_versions: 1 } };
  config.max_batch_size ??= 0;
}

/**
 * Triton's NormalizeModelConfig after auto-complete: preferred batch sizes default to [max_batch_size], and
 * the instance groups are normalized (see normalizeInstanceGroups); an ensemble has no instances of its
 * own, so it gets no instance group.
 */
export function normalizeModelConfig(config: ModelConfig): void {
  const maxBatchSize = config.max_batch_size ?? 0;
  const batching = config.dynamic_batching;
  if (batching && !batching.preferred_batch_size?.length && maxBatchSize > 0) {
    batching.preferred_batch_size = [maxBatchSize];
  }
  normalizeSequenceBatching(config);
  if (config.platform !== ENSEMBLE_PLATFORM) normalizeInstanceGroups(config);
}

/**
 * Instance groups get a name, a kind (KIND_AUTO is KIND_CPU here: no GPU is detected) and a count (Triton's
 * default for onnxruntime on KIND_CPU is 2, otherwise 1); KIND_GPU without `gpus` uses GPU 0. Needs only
 * what fillModelIdentity set, not the model, and is idempotent.
 */
export function normalizeInstanceGroups(config: ModelConfig): void {
  const name = config.name ?? "";
  const groups = config.instance_group ?? [];
  if (groups.length === 0) groups.push({ name, kind: "KIND_CPU" });
  groups.forEach((group, index) => {
    if (!group.name) group.name = `${name}_${index}`;
    if (group.kind === undefined || group.kind === "KIND_AUTO") group.kind = "KIND_CPU";
    if ((group.count ?? 0) < 1) {
      group.count = group.kind === "KIND_CPU" && config.backend === ONNX_BACKEND ? 2 : 1;
    }
    if (group.kind === "KIND_GPU" && !group.gpus?.length) group.gpus = [0];
  });
  config.instance_group = groups;
}
