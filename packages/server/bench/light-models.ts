// The server benchmark's fast model (issue 28): `heavy`'s stack with 16 hidden layers instead of 48, about
// a third of its run at every batch size, so that its run costs well under 150 µs per row at batch 16 on
// any CPU this project runs on. On a fast device the model's run shrinks and the server's own cost per
// request decides what batching buys; this model shows that on a CPU, where `heavy` may still hide it.
// Written into a repository of its own, under the benchmark's work directory, with `heavy`'s configs
// (dynamic batching with max_queue_delay 1000 µs, and none), renamed.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ROOT } from "@tbench/bench-kit";
import { buildHeavyModel } from "../../../examples/model-builder/models/heavy.js";

/** Hidden layers of the light variant (`heavy` has 48). */
export const LIGHT_HIDDEN_LAYERS = 16;

/** The light models, each named after the `heavy` model whose config it takes. */
export const LIGHT_MODELS = { batching: "heavy_light", noBatching: "heavy_light_nobatch" } as const;

/** Writes `heavy_light` and `heavy_light_nobatch` under `dir`; returns the repository and the model file. */
export async function writeLightRepository(dir: string): Promise<{ repository: string; modelPath: string }> {
  const repository = join(dir, "light-models");
  const bytes = buildHeavyModel(LIGHT_HIDDEN_LAYERS);
  const pairs = [
    [LIGHT_MODELS.batching, "heavy"],
    [LIGHT_MODELS.noBatching, "heavy_nobatch"],
  ] as const;
  for (const [name, source] of pairs) {
    const config = await readFile(join(ROOT, "examples/models", source, "config.pbtxt"), "utf8");
    const renamed = config.replace(/^name: "[^"]*"$/m, `name: "${name}"`);
    if (renamed === config) throw new Error(`examples/models/${source}/config.pbtxt has no name line`);
    await mkdir(join(repository, name, "1"), { recursive: true });
    await writeFile(join(repository, name, "config.pbtxt"), renamed);
    await writeFile(join(repository, name, "1/model.onnx"), bytes);
  }
  return { repository, modelPath: join(repository, LIGHT_MODELS.batching, "1/model.onnx") };
}
