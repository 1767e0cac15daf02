// Opens `tbench report`'s HTML in Debian's headless chromium and checks the charts are drawn: the screenshot
// is not one colour and the page logs nothing to the console. Skipped without chromium, except under
// .ci/run, which installs it and requires it (scripts/system-tools.ts).
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { inflateSync } from "node:zlib";
import { runHeadlessChromium } from "../../../../scripts/testing/headless-chromium.js";
import { skipWithout } from "../../../../scripts/testing/system-tools.js";
import type { ChartRun } from "./chart-data.js";
import { renderHtmlReport } from "./html-report.js";

/** Distinct RGBA colours of an 8-bit RGB or RGBA, non-interlaced PNG (what chromium writes). */
function pngColours(png: Buffer): Set<number> {
  assert.equal(png.subarray(1, 4).toString("latin1"), "PNG", "a PNG file");
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.subarray(offset + 4, offset + 8).toString("latin1");
    const data = png.subarray(offset + 8, offset + 8 + length);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      assert.equal(data[8], 8, "8-bit PNG");
      channels = data[9] === 6 ? 4 : data[9] === 2 ? 3 : 0;
      assert.ok(channels > 0 && data[12] === 0, "RGB(A), not interlaced");
    } else if (type === "IDAT") idat.push(data);
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x] ?? 0;
      const a = x >= channels ? (pixels[y * stride + x - channels] ?? 0) : 0;
      const b = y > 0 ? (pixels[(y - 1) * stride + x] ?? 0) : 0;
      const c = x >= channels && y > 0 ? (pixels[(y - 1) * stride + x - channels] ?? 0) : 0;
      let predictor = 0;
      if (filter === 1) predictor = a;
      else if (filter === 2) predictor = b;
      else if (filter === 3) predictor = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
        predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      pixels[y * stride + x] = (v + predictor) & 0xff;
    }
  }
  const colours = new Set<number>();
  for (let i = 0; i < pixels.length; i += channels) {
    colours.add(pixels.readUIntBE(i, 3) * 256 + (channels === 4 ? (pixels[i + 3] ?? 0) : 255));
  }
  return colours;
}

interface PageOutcome {
  colours: Set<number>;
  /** Console lines chromium logged for the page (errors, uncaught exceptions, any console call). */
  console: string[];
}

let dir = "";

/** Screenshots `html` in headless chromium, collecting what the page logs. */
async function openInChromium(html: string, name: string): Promise<PageOutcome> {
  const page = join(dir, `${name}.html`);
  const shot = join(dir, `${name}.png`);
  await writeFile(page, html);
  const { console: logged } = await runHeadlessChromium(join(dir, `profile-${name}`), [
    `--screenshot=${shot}`,
    "--window-size=900,1400",
    pathToFileURL(page).href,
  ]);
  return { colours: pngColours(await readFile(shot)), console: logged };
}

const runs: ChartRun[] = [
  {
    label: "batching on",
    mode: "concurrency",
    points: [1, 4, 16].map((level) => ({
      level,
      inferPerSec: 300 * level ** 0.7,
      latencyUs: { "50": 2_000 + level * 200, "99": 4_000 + level * 500 },
      breakdown: { queueUs: 800, computeInputUs: 20, computeInferUs: 2_000, computeOutputUs: 10 },
    })),
  },
  {
    label: "batching off",
    mode: "concurrency",
    points: [1, 4, 16].map((level) => ({
      level,
      inferPerSec: 360,
      latencyUs: { "50": 2_800 * level, "99": 3_000 * level },
      breakdown: {
        queueUs: 2_700 * (level - 1),
        computeInputUs: 20,
        computeInferUs: 2_700,
        computeOutputUs: 10,
      },
    })),
  },
];

describe("tbench report in a browser", { skip: skipWithout("chromium") }, () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tbench-report-browser-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("draws the charts in headless chromium with no console errors", async () => {
    const outcome = await openInChromium(renderHtmlReport(runs), "report");
    assert.deepEqual(outcome.console, []);
    // Axes, text, and each series' colour: far more than a blank page's one colour.
    assert.ok(outcome.colours.size > 50, `${outcome.colours.size} colours in the screenshot`);
  });

  it("the checks fail on a blank page and on a page with a console error", async () => {
    const blank = await openInChromium("<!doctype html><html><body></body></html>", "blank");
    assert.equal(blank.colours.size, 1);
    const broken = await openInChromium(
      "<!doctype html><html><body><script>throw new Error('not drawn')</script></body></html>",
      "broken",
    );
    assert.equal(broken.console.length, 1);
    assert.match(broken.console[0] ?? "", /Uncaught Error: not drawn/);
  });
});
