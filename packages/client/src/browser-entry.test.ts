// The browser entry (browser.ts) as a browser gets it. Its import graph holds no Node builtin, undici or
// gRPC: esbuild bundles it for platform "browser", where a `node:` import fails the build; and what the
// bundle holds is checked (protobufjs, which @tbench/proto's index also exports, is left out: that package
// is marked free of side effects). Bundled, it runs in a realm with only web globals (no Buffer, process
// or require) against a real tbench-server on 127.0.0.1:0. And package.json's conditions pick it for each
// runtime that is not Node.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import vm from "node:vm";
import type { RunningServer } from "@tbench/server";
import { build } from "esbuild";
import { startBundledServer } from "./testing/bundled-server.js";
import {
  FETCH_CONFORMANCE_EXPECTED,
  FETCH_CONFORMANCE_MODELS,
  GZIP_VALUES,
} from "./testing/fetch-conformance.js";

const SRC = new URL(".", import.meta.url).pathname;

/** Bundles `contents` (TypeScript, resolved from src/) for browsers; `source` resolves packages to their sources. */
async function bundle(contents: string, format: "esm" | "iife") {
  const result = await build({
    stdin: { contents, resolveDir: SRC, loader: "ts", sourcefile: "entry.ts" },
    bundle: true,
    platform: "browser",
    format,
    conditions: ["source"],
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const output = Object.values(result.metafile.outputs)[0]!;
  return {
    code: result.outputFiles[0]!.text,
    /** Every module the build read. */
    inputs: Object.keys(result.metafile.inputs),
    /** The modules with code in the bundle (after tree shaking). */
    bundled: Object.entries(output.inputs)
      .filter(([, input]) => input.bytesInOutput > 0)
      .map(([path]) => path),
  };
}

/** The globals a browser (or a web worker, or workerd) has that the client may use; nothing of Node's. */
function webRealm(withCompressionStream: boolean): vm.Context {
  const g = globalThis;
  const sandbox: Record<string, unknown> = {
    fetch: g.fetch,
    Headers: g.Headers,
    Request: g.Request,
    Response: g.Response,
    Blob: g.Blob,
    ReadableStream: g.ReadableStream,
    AbortController: g.AbortController,
    AbortSignal: g.AbortSignal,
    DOMException: g.DOMException,
    TextEncoder: g.TextEncoder,
    TextDecoder: g.TextDecoder,
    URL: g.URL,
    btoa: g.btoa,
    atob: g.atob,
    setTimeout: g.setTimeout,
    clearTimeout: g.clearTimeout,
    queueMicrotask: g.queueMicrotask,
    console: g.console,
  };
  if (withCompressionStream) sandbox["CompressionStream"] = g.CompressionStream;
  return vm.createContext(sandbox);
}

/** The conformance run, exposed by an IIFE bundle as `runConformance(url)` (a JSON string: realms differ). */
const CONFORMANCE_ENTRY = `
import * as client from "./browser.js";
import { fetchConformance } from "./testing/fetch-conformance.js";
globalThis.runConformance = (url) => fetchConformance(client, url).then((report) => JSON.stringify(report));
globalThis.compressionOption = (url) => {
  try {
    client.createHttpClient({ url, compression: { request: "gzip" } });
    return "accepted";
  } catch (error) {
    return error instanceof client.InvalidArgumentError ? error.message : String(error);
  }
};
`;

describe("the import graph", () => {
  test("bundles for browsers with no Node builtin, undici or gRPC; the bundle holds zod and no protobufjs", async () => {
    const { inputs, bundled } = await bundle('export * from "./browser.js";', "esm");
    assert.deepEqual(
      inputs.filter((path) => /^node:|undici|grpc/.test(path)),
      [],
    );
    const packages = new Set(
      bundled.flatMap((path) => {
        const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
        return match === null ? [] : [match[1]!];
      }),
    );
    assert.deepEqual([...packages], ["zod"], "the only third-party code is zod");
    assert.ok(bundled.includes("packages/client/src/fetch/fetch-client.ts"));
    assert.ok(!inputs.some((path) => /packages\/client\/src\/(grpc|http\/wire)\//.test(path)));
  });

  test("a Node-only module fails the same build (the check can fail)", async () => {
    await assert.rejects(bundle('export * from "./index.js";', "esm"), /node:|Could not resolve/);
  });

  test("package.json's conditions give the fetch entry to browsers, workers, Deno and Bun, Node its own", async () => {
    const entryOf = async (conditions: string[], platform: "browser" | "neutral") => {
      const result = await build({
        stdin: { contents: 'export * from "@tbench/client";', resolveDir: SRC, loader: "ts" },
        bundle: true,
        platform,
        conditions: [...conditions, "source"],
        write: false,
        metafile: true,
        logLevel: "silent",
      });
      const inputs = Object.keys(result.metafile.inputs);
      return inputs.includes("packages/client/src/browser.ts") ? "browser.ts" : "another entry";
    };
    for (const condition of ["browser", "deno", "bun", "workerd", "worker"]) {
      assert.equal(await entryOf([condition], "neutral"), "browser.ts", condition);
    }
    assert.equal(await entryOf([], "browser"), "browser.ts", "esbuild's platform browser");
    // Node itself resolves the package to the Node entry (source or built), and the explicit subpath anywhere.
    assert.match(
      import.meta.resolve("@tbench/client"),
      /packages\/client\/(src\/index\.ts|dist\/index\.js)$/,
    );
    assert.match(
      import.meta.resolve("@tbench/client/browser"),
      /packages\/client\/(src\/browser\.ts|dist\/browser\.js)$/,
    );
  });
});

describe("in a realm with web globals only", () => {
  let server: RunningServer;
  let code: string;
  before(async () => {
    server = await startBundledServer([...FETCH_CONFORMANCE_MODELS]);
    code = (await bundle(CONFORMANCE_ENTRY, "iife")).code;
  });
  after(async () => {
    await server?.close();
  });

  test("the realm has none of Node's globals", () => {
    const realm = webRealm(true);
    assert.equal(
      vm.runInContext("[typeof Buffer, typeof process, typeof require].join()", realm),
      ["undefined", "undefined", "undefined"].join(),
    );
  });

  test("every call of the conformance run answers as on Node, gzip requests included", async () => {
    const realm = webRealm(true);
    vm.runInContext(code, realm);
    const run = vm.runInContext("runConformance", realm) as (url: string) => Promise<string>;
    const report = JSON.parse(await run(server.httpUrl));
    assert.deepEqual(
      report,
      JSON.parse(JSON.stringify({ ...FETCH_CONFORMANCE_EXPECTED, gzip: GZIP_VALUES })),
    );
  });

  test("without CompressionStream, request compression is refused up front and the rest works", async () => {
    const realm = webRealm(false);
    vm.runInContext(code, realm);
    const option = vm.runInContext("compressionOption", realm) as (url: string) => string;
    assert.match(option(server.httpUrl), /'compression.request' "gzip" needs CompressionStream/);
    const run = vm.runInContext("runConformance", realm) as (url: string) => Promise<string>;
    const report = JSON.parse(await run(server.httpUrl));
    assert.deepEqual(
      report,
      JSON.parse(JSON.stringify({ ...FETCH_CONFORMANCE_EXPECTED, gzip: "no CompressionStream" })),
    );
  });
});
