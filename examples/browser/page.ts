/**
 * The browser example's page: classifies a picture with `resnet_like` through @tbench/client's fetch
 * transport, straight from the page to the inference server. The server is the page's `?server=` (default
 * http://localhost:8000) and must allow the page's origin: tbench-server's `--http-cors-allow-origin`, or a
 * proxy that adds CORS in front of Triton. A blocked or failed call is shown, with the error's class.
 */
import { createHttpClient, InferenceError } from "@tbench/client/browser";
import {
  describeClass,
  examplePixels,
  IMAGE_SIDE,
  parseClassification,
  tensorFromPixels,
} from "./image-tensor.js";

const serverUrl = new URL(location.href).searchParams.get("server") ?? "http://localhost:8000";
const client = createHttpClient({ url: serverUrl, timeoutMs: 30_000 });

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`the page has no #${id}`);
  return found as T;
}

const canvas = element<HTMLCanvasElement>("image");
const context = canvas.getContext("2d", { willReadFrequently: true })!;
const status = element<HTMLParagraphElement>("status");
const classes = element<HTMLOListElement>("classes");
const ensemble = element<HTMLParagraphElement>("ensemble");
element("server").textContent = serverUrl;

function show(kind: "busy" | "done" | "error", text: string): void {
  status.dataset["kind"] = kind;
  status.textContent = text;
  document.body.dataset["state"] = kind;
}

/** Sends the canvas's picture and lists the answer. */
async function classify(): Promise<void> {
  show("busy", "Classifying…");
  classes.replaceChildren();
  ensemble.textContent = "";
  const pixels = context.getImageData(0, 0, IMAGE_SIDE, IMAGE_SIDE).data;
  const input = {
    name: "input",
    datatype: "FP32" as const,
    shape: [1, 3, IMAGE_SIDE, IMAGE_SIDE],
    data: tensorFromPixels(pixels),
  };
  try {
    const answer = await client.infer("resnet_like", {
      inputs: [input],
      outputs: [{ name: "output", classification: 3 }],
    });
    for (const entry of answer.output("output")!.strings()) {
      const parsed = parseClassification(entry);
      const item = document.createElement("li");
      item.dataset["index"] = String(parsed.index);
      item.textContent = describeClass(parsed);
      classes.append(item);
    }
    // The same picture through the ensemble (resnet_like, then label_head), where the server has it.
    if (await client.isModelReady("ensemble_pipeline")) {
      const pipeline = await client.infer("ensemble_pipeline", { inputs: [{ ...input, name: "IMAGE" }] });
      ensemble.textContent = `ensemble_pipeline label: ${pipeline.output("LABEL")!.as("INT64")[0]}`;
    }
    show("done", `resnet_like on ${serverUrl} answered:`);
  } catch (error) {
    // A call the browser blocked (no CORS answer) never reaches the page: it is a ConnectionError.
    const what = error instanceof InferenceError ? `${error.name} (${error.code})` : "Error";
    show("error", `${what}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Draws a picked file scaled to the model's side, then classifies it. */
async function classifyFile(file: File): Promise<void> {
  const bitmap = await createImageBitmap(file);
  context.drawImage(bitmap, 0, 0, IMAGE_SIDE, IMAGE_SIDE);
  bitmap.close();
  await classify();
}

element<HTMLInputElement>("file").addEventListener("change", (event) => {
  const file = (event.target as HTMLInputElement).files?.[0];
  if (file !== undefined) void classifyFile(file);
});

context.putImageData(new ImageData(examplePixels(), IMAGE_SIDE, IMAGE_SIDE), 0, 0);
void classify();
