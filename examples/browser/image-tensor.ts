/**
 * The browser example's pixels and tensors, free of the DOM so the page and its test compute the same
 * thing: the example picture (computed per pixel, so every browser's canvas holds exactly these bytes),
 * canvas RGBA to `resnet_like`'s [3, 224, 224] FP32 input, and Triton's classification strings parsed.
 */

/** The model's image side, in pixels. */
export const IMAGE_SIDE = 224;

// ImageNet's per-channel mean and standard deviation, the usual normalization of a ResNet's input.
const MEAN = [0.485, 0.456, 0.406] as const;
const STD = [0.229, 0.224, 0.225] as const;

/** RGBA bytes of the example picture: smooth colour bands, opaque, the same in every browser. */
export function examplePixels(side = IMAGE_SIDE): Uint8ClampedArray<ArrayBuffer> {
  const rgba = new Uint8ClampedArray(side * side * 4);
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const at = (y * side + x) * 4;
      rgba[at] = 128 + 127 * Math.sin(x / 17);
      rgba[at + 1] = 128 + 127 * Math.cos(y / 23);
      rgba[at + 2] = ((x + y) * 255) / (2 * side);
      rgba[at + 3] = 255;
    }
  }
  return rgba;
}

/** Canvas RGBA bytes (row-major, `side` x `side`) to a normalized CHW float32 tensor. */
export function tensorFromPixels(rgba: Uint8ClampedArray, side = IMAGE_SIDE): Float32Array {
  if (rgba.length !== side * side * 4) {
    throw new RangeError(`expected ${side * side * 4} RGBA bytes (${side}x${side}), got ${rgba.length}`);
  }
  const plane = side * side;
  const tensor = new Float32Array(3 * plane);
  for (let i = 0; i < plane; i++) {
    for (let c = 0; c < 3; c++) tensor[c * plane + i] = (rgba[i * 4 + c]! / 255 - MEAN[c]!) / STD[c]!;
  }
  return tensor;
}

/** One class of Triton's classification extension: the string `score:index[:label]`. */
export interface ClassScore {
  readonly score: number;
  readonly index: number;
  readonly label: string | undefined;
}

/** Parses one classification string; a label may itself hold colons. */
export function parseClassification(entry: string): ClassScore {
  const [score, index, ...label] = entry.split(":");
  const parsed = { score: Number(score), index: Number(index) };
  if (!Number.isFinite(parsed.score) || !Number.isInteger(parsed.index)) {
    throw new Error(`not a classification entry (score:index[:label]): '${entry}'`);
  }
  return { ...parsed, label: label.length > 0 ? label.join(":") : undefined };
}

/** How the page lists a class: `class 7 (label): 0.1234`. */
export function describeClass({ score, index, label }: ClassScore): string {
  return `class ${index}${label === undefined ? "" : ` (${label})`}: ${score.toFixed(4)}`;
}
