// Benchmark (not a test): the bytes a web page pays for @tbench/client. esbuild bundles, minifies and
// tree-shakes, for platform "browser", a one-page entry that creates a client and calls infer() once,
// importing "@tbench/client" as an application would (package.json's "browser" condition picks the fetch
// entry, built: dist/). Beside it, in the same run, the whole browser entry (every export kept), so the
// page's figure reads against the most a page could pull in. Reports raw and gzip (level 9) bytes, brotli for
// reference, and the bytes per package; fails the "no Node polyfills" half of the target when the bundle
// holds any module other than the client's, @tbench/proto's and zod's (a polyfilled `node:` module or an
// undici would show up there; a `node:` import that is not polyfilled fails the build itself).
// Target: no Node polyfills, and the page's gzip size at most TARGET_GZIP_BYTES.
// Writes bench-results/client-bundle.{json,md}. Run: npm run bench:client-bundle (it builds dist/ first).
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import {
  atMost,
  benchOptions,
  environmentMarkdown,
  startEnvironment,
  verdictMarkdown,
  writeResult,
} from "@tbench/bench-kit";
import { build, version as esbuildVersion, type Metafile } from "esbuild";

const options = benchOptions();
/** The target for the page's gzip size (see the result file for why this number). */
const TARGET_GZIP_BYTES = 24 * 1024;
/** The only packages a page's bundle may hold. */
const ALLOWED = new Set(["@tbench/client", "@tbench/proto", "zod"]);

const PAGE = `
import { createHttpClient } from "@tbench/client";
const client = createHttpClient({ url: location.origin });
const result = await client.infer("simple", {
  inputs: [
    { name: "INPUT0", datatype: "INT32", shape: [1, 16], data: new Int32Array(16).fill(1) },
    { name: "INPUT1", datatype: "INT32", shape: [1, 16], data: new Int32Array(16).fill(2) },
  ],
});
document.body.textContent = String(result.output("OUTPUT0")?.as("INT32"));
`;
const WHOLE_ENTRY = 'export * from "@tbench/client";';

interface BundleFigures {
  rawBytes: number;
  gzipBytes: number;
  brotliBytes: number;
  /** Minified bytes in the bundle per package (the workspace's own by package name). */
  bytesByPackage: Record<string, number>;
}

/** The package a bundled module belongs to. */
function packageOf(path: string): string {
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (dependency !== null) return dependency[1]!;
  const workspace = /^packages\/([^/]+)\//.exec(path);
  if (workspace !== null) return `@tbench/${workspace[1]}`;
  return path;
}

async function measure(contents: string): Promise<BundleFigures> {
  const result = await build({
    stdin: { contents, resolveDir: new URL(".", import.meta.url).pathname, sourcefile: "page.js" },
    bundle: true,
    minify: true,
    treeShaking: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    write: false,
    metafile: true,
    logLevel: "warning",
  });
  const code = result.outputFiles[0]!.contents;
  const output: Metafile["outputs"][string] = Object.values(result.metafile.outputs)[0]!;
  const bytesByPackage: Record<string, number> = {};
  for (const [path, input] of Object.entries(output.inputs)) {
    if (input.bytesInOutput === 0) continue;
    const name = packageOf(path);
    bytesByPackage[name] = (bytesByPackage[name] ?? 0) + input.bytesInOutput;
  }
  return {
    rawBytes: code.length,
    gzipBytes: gzipSync(code, { level: 9 }).length,
    brotliBytes: brotliCompressSync(code, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11 },
    }).length,
    bytesByPackage,
  };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

const endEnvironment = startEnvironment(options);
const page = await measure(PAGE);
const whole = await measure(WHOLE_ENTRY);
const end = endEnvironment();

const others = Object.keys(page.bytesByPackage).filter((name) => !ALLOWED.has(name));
const noPolyfills = others.length === 0;
const sizeVerdict = atMost(page.gzipBytes, TARGET_GZIP_BYTES);
const verdict = noPolyfills && sizeVerdict === "met" ? "met" : "not met";

const rows = [
  ["a page that calls `infer()`", page],
  ["the whole browser entry (every export)", whole],
] as const;
const markdown = [
  "# @tbench/client in a web page: bundle size",
  "",
  environmentMarkdown(end),
  `esbuild ${esbuildVersion}: bundle, minify, tree shaking, platform "browser", format esm, target es2022;`,
  '`@tbench/client` resolved as an application resolves it (the "browser" condition: the fetch entry, dist/).',
  "gzip at level 9, brotli at quality 11.",
  "",
  "| bundle | minified | gzip | brotli |",
  "| --- | ---: | ---: | ---: |",
  ...rows.map(
    ([label, f]) =>
      `| ${label} | ${f.rawBytes} B (${kb(f.rawBytes)}) | ${f.gzipBytes} B (${kb(f.gzipBytes)}) | ${f.brotliBytes} B (${kb(f.brotliBytes)}) |`,
  ),
  "",
  "Minified bytes of the page's bundle by package (the page's own few hundred bytes are not counted here):",
  "",
  "| package | bytes |",
  "| --- | ---: |",
  ...Object.entries(page.bytesByPackage)
    .sort((a, b) => b[1] - a[1])
    .map(([name, bytes]) => `| ${name} | ${bytes} |`),
  "",
  `Target: no Node polyfills (the bundle holds only ${[...ALLOWED].join(", ")}), and the page at most ` +
    `${kb(TARGET_GZIP_BYTES)} gzip. Polyfills: ${noPolyfills ? "none" : `**${others.join(", ")}**`}; ` +
    `gzip ${kb(page.gzipBytes)}: ${verdictMarkdown(sizeVerdict)}. Verdict: ${verdictMarkdown(verdict)}.`,
  "",
  "Why this target: a client class is kept whole by any bundler (its methods cannot be tree-shaken), so a",
  "page that calls only `infer()` carries every call of the API, the binary tensor codec, typed errors,",
  "retries and zod/mini for validating options and answers; the page and the whole entry differ by little.",
  "The target is the size measured when the fetch transport landed, rounded up to the next 2 KiB step, so",
  "that a change which pulls in more (classic zod, protobufjs through @tbench/proto, a polyfill) fails it.",
  "",
].join("\n");

const paths = await writeResult(
  options,
  "client-bundle",
  {
    date: end.date,
    esbuild: esbuildVersion,
    targetGzipBytes: TARGET_GZIP_BYTES,
    page,
    wholeEntry: whole,
    polyfills: others,
    verdict,
    environment: end,
  },
  markdown,
);
console.log(markdown);
console.log(`written: ${paths.join(", ")}`);
