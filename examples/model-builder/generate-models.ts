/**
 * `npm run models`: generates the bundled model repository (examples/models) deterministically, one line
 * per model. `--out DIR` writes a complete repository (models and configs) elsewhere, e.g. for tests.
 * `--update-checksums` also records the models' SHA-256 in model-checksums.json (after a change on purpose).
 */
import { relative } from "node:path";
import { parseArgs } from "node:util";
import { updateModelChecksums } from "./model-checksums.js";
import { writeModelRepository } from "./write-model-repository.js";

const USAGE = "usage: generate-models [--out DIR] [--update-checksums]";

function main(): void {
  const { values } = parseArgs({
    options: {
      out: { type: "string" },
      "update-checksums": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help === true) {
    console.log(USAGE);
    return;
  }
  if (values.out === "") throw new Error("--out needs a directory");
  const started = performance.now();
  const written = writeModelRepository(values.out === undefined ? {} : { outDir: values.out });
  const width = Math.max(...written.map((m) => m.name.length));
  for (const model of written) {
    const size = model.sizeBytes === 0 ? "(ensemble: empty version directory)" : `${model.sizeBytes} bytes`;
    console.log(
      `${model.name.padEnd(width)}  ${relative(process.cwd(), model.path)}  ${size}  ${model.status}`,
    );
  }
  console.log(`generated ${written.length} models in ${Math.round(performance.now() - started)} ms`);
  if (values["update-checksums"] === true) {
    const count = Object.keys(updateModelChecksums()).length;
    console.log(`stored the SHA-256 of ${count} models in examples/model-builder/model-checksums.json`);
  }
}

try {
  main();
} catch (error) {
  console.error(`generate-models: ${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  process.exitCode = 1;
}
