/**
 * Image classification with `resnet_like` (a [3, 224, 224] FP32 image -> 1000 class scores): the top
 * classes through Triton's classification extension, and the whole pipeline in one request through the
 * `ensemble_pipeline` ensemble (image -> resnet_like -> label_head -> label) when the server has it.
 *   npx tsx examples/image-classification.ts [http://localhost:8000]
 */
import { pathToFileURL } from "node:url";
import { createHttpClient } from "@tbench/client";

/** What the example found. */
export interface ClassificationResult {
  /** Top-3 classes as the server reports them: "score:index[:label]". */
  top3: string[];
  /** The index of the highest score, computed here from the raw scores. */
  argmax: number;
  /** The ensemble's label, when ensemble_pipeline is loaded. */
  ensembleLabel: bigint | undefined;
}

/** A deterministic stand-in for a decoded, normalised RGB image (CHW order). */
function syntheticImage(): Float32Array {
  const image = new Float32Array(3 * 224 * 224);
  for (let c = 0; c < 3; c++) {
    for (let y = 0; y < 224; y++) {
      for (let x = 0; x < 224; x++)
        image[(c * 224 + y) * 224 + x] = Math.sin((x + 1) * (y + 2) * (c + 3) * 0.001);
    }
  }
  return image;
}

/** Classifies one image. */
export async function main(
  url: string,
  log: (line: string) => void = console.log,
): Promise<ClassificationResult> {
  await using client = createHttpClient({ url, timeoutMs: 30_000 });
  const image = syntheticImage();
  const input = { name: "input", datatype: "FP32" as const, shape: [1, 3, 224, 224], data: image };

  // 1. The top 3 classes, computed by the server (classification extension): a BYTES output.
  const classified = await client.infer("resnet_like", {
    inputs: [input],
    outputs: [{ name: "output", classification: 3 }],
  });
  const top3 = classified.output("output")!.strings();
  log(`top 3 (score:index): ${top3.join(", ")}`);

  // 2. The raw scores, as a Float32Array view of the response; argmax on the client.
  const scored = await client.infer("resnet_like", { inputs: [input] });
  const scores = scored.output("output")!.as("FP32");
  let argmax = 0;
  for (let i = 1; i < scores.length; i++) if (scores[i]! > scores[argmax]!) argmax = i;
  log(`${scores.length} scores, best class ${argmax} (${scores[argmax]})`);

  // 3. The ensemble does both steps in one request, if the server has it.
  let ensembleLabel: bigint | undefined;
  if (await client.isModelReady("ensemble_pipeline")) {
    const pipeline = await client.infer("ensemble_pipeline", {
      inputs: [{ ...input, name: "IMAGE" }],
    });
    ensembleLabel = pipeline.output("LABEL")!.as("INT64")[0];
    log(`ensemble_pipeline label: ${ensembleLabel}`);
  } else {
    log("ensemble_pipeline is not loaded; skipped");
  }
  return { top3, argmax, ensembleLabel };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv[2] ?? "http://localhost:8000");
}
