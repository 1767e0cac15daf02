/**
 * Triton's config normalization: the defaults a model configuration gets before it is validated and served
 * (model_config_utils.cc NormalizeModelConfig, SetDefaultInstanceCount, the onnxruntime backend's fill-ins).
 * Every function edits the proto3-JSON config in place; callers work on a clone.
 */
import {
  arrayField,
  type ConfigObject,
  hasField,
  numberField,
  objectArrayField,
  objectField,
  stringField,
} from "./config-fields.js";

/** The platform and backend names Triton uses for ONNX models. */
export const ONNX_PLATFORM = "onnxruntime_onnx";
export const ONNX_BACKEND = "onnxruntime";
export const ENSEMBLE_PLATFORM = "ensemble";

/**
 * Fills what Triton fills before anything else: the name from the directory, backend/platform for ONNX
 * models, `default_model_filename`, and `version_policy` (latest 1).
 */
export function fillModelIdentity(config: ConfigObject, directoryName: string, hasOnnxFile: boolean): void {
  if (stringField(config, "name") === "") config["name"] = directoryName;
  const platform = stringField(config, "platform");
  const backend = stringField(config, "backend");
  if (platform === "" && backend === "" && hasOnnxFile) {
    config["backend"] = ONNX_BACKEND;
    config["platform"] = ONNX_PLATFORM;
  } else if (platform === ONNX_PLATFORM && backend === "") {
    config["backend"] = ONNX_BACKEND;
  } else if (backend === ONNX_BACKEND && platform === "") {
    config["platform"] = ONNX_PLATFORM;
  }
  if (
    stringField(config, "platform") !== ENSEMBLE_PLATFORM &&
    stringField(config, "default_model_filename") === ""
  ) {
    config["default_model_filename"] = "model.onnx";
  }
  if (!hasField(config, "version_policy")) config["version_policy"] = { latest: { num_versions: 1 } };
  if (!hasField(config, "max_batch_size")) config["max_batch_size"] = 0;
}

/**
 * Triton's NormalizeModelConfig after auto-complete: preferred batch sizes default to [max_batch_size];
 * instance groups get a name, a kind (KIND_AUTO is KIND_CPU here: no GPU is detected) and a count (Triton's
 * default for onnxruntime on KIND_CPU is 2, otherwise 1); KIND_GPU without `gpus` uses GPU 0.
 */
export function normalizeModelConfig(config: ConfigObject): void {
  const name = stringField(config, "name");
  const maxBatchSize = numberField(config, "max_batch_size");
  const db = objectField(config, "dynamic_batching");
  if (hasField(config, "dynamic_batching")) {
    const batching = db ?? {};
    config["dynamic_batching"] = batching;
    if (arrayField(batching, "preferred_batch_size").length === 0 && maxBatchSize > 0) {
      batching["preferred_batch_size"] = [maxBatchSize];
    }
  }
  const groups = objectArrayField(config, "instance_group");
  if (groups.length === 0) {
    groups.push({ name, kind: "KIND_CPU" });
  }
  groups.forEach((group, index) => {
    if (stringField(group, "name") === "") group["name"] = `${name}_${index}`;
    const kind = stringField(group, "kind");
    if (kind === "" || kind === "KIND_AUTO") group["kind"] = "KIND_CPU";
    if (numberField(group, "count") < 1) {
      const onnxCpu = group["kind"] === "KIND_CPU" && stringField(config, "backend") === ONNX_BACKEND;
      group["count"] = onnxCpu ? 2 : 1;
    }
    if (group["kind"] === "KIND_GPU" && arrayField(group, "gpus").length === 0) group["gpus"] = [0];
  });
  config["instance_group"] = groups;
}
