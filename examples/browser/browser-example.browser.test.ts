// The browser example in Debian's headless chromium: the page is built by esbuild, served from one origin,
// and calls tbench-server on another. With the page's origin allowed (--http-cors-allow-origin) it shows the
// classes the server answers for its picture, the same as a Node client gets for the same tensor; with CORS
// off, or another origin, chromium blocks the call and the page says so. Skipped without chromium, except
// under .ci/run, which installs it and requires it (scripts/system-tools.ts).
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createHttpClient } from "@tbench/client";
import { type RunningServer, silentLogger, startServer } from "@tbench/server";
import { runHeadlessChromium } from "../../scripts/testing/headless-chromium.js";
import { skipWithout } from "../../scripts/testing/system-tools.js";
import { buildPage } from "./build-page.js";
import { describeClass, examplePixels, parseClassification, tensorFromPixels } from "./image-tensor.js";
import { type StaticServer, serveStatic } from "./static-server.js";

const REPOSITORY = new URL("../models", import.meta.url).pathname;

/** What chromium rendered: the page's state, its status line, its list, and what it logged. */
interface Rendered {
  state: string | undefined;
  status: string;
  classes: string[];
  ensemble: string;
  console: string[];
}

const textOf = (dom: string, id: string) =>
  (new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(dom)?.[1] ?? "").replaceAll("&amp;", "&").trim();

let dir = "";

/** Opens `url` in headless chromium until the page's work is done (virtual time waits for its fetches). */
async function render(url: string, name: string): Promise<Rendered> {
  const { stdout, console: logged } = await runHeadlessChromium(
    join(dir, `profile-${name}`),
    ["--virtual-time-budget=60000", "--dump-dom", url],
    90_000,
  );
  return {
    state: /<body[^>]*data-state="(\w+)"/.exec(stdout)?.[1],
    status: textOf(stdout, "status"),
    classes: [...stdout.matchAll(/<li data-index="\d+">([^<]*)<\/li>/g)].map((m) => m[1]!),
    ensemble: textOf(stdout, "ensemble"),
    console: logged,
  };
}

describe("the browser example in headless chromium", {
  skip: skipWithout("chromium"),
  timeout: 300_000,
}, () => {
  let site: StaticServer;
  let elsewhere: StaticServer;
  let withCors: RunningServer;
  let withoutCors: RunningServer;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "tbench-browser-example-"));
    await buildPage(join(dir, "site"));
    site = await serveStatic(join(dir, "site"));
    elsewhere = await serveStatic(join(dir, "site"));
    const server = (models: string[], allowOrigins?: string[]) =>
      startServer({
        modelRepository: REPOSITORY,
        httpPort: 0,
        httpAddress: "127.0.0.1",
        grpcPort: false,
        metricsPort: false,
        modelControlMode: "explicit",
        loadModels: models,
        logger: silentLogger,
        ...(allowOrigins !== undefined ? { httpCors: { allowOrigins } } : {}),
      });
    withCors = await server(["resnet_like", "label_head", "ensemble_pipeline"], [site.origin]);
    withoutCors = await server(["resnet_like"]);
  });
  after(async () => {
    await Promise.all([site?.close(), elsewhere?.close(), withCors?.close(), withoutCors?.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("with its origin allowed, the page shows the classes the server answers, as a Node client gets them", async () => {
    const page = await render(`${site.origin}/?server=${withCors.httpUrl}`, "allowed");
    assert.equal(page.state, "done", page.status);
    assert.deepEqual(page.console, []);

    await using node = createHttpClient({ url: withCors.httpUrl });
    const input = {
      name: "input",
      datatype: "FP32" as const,
      shape: [1, 3, 224, 224],
      data: tensorFromPixels(examplePixels()),
    };
    const top3 = await node.infer("resnet_like", {
      inputs: [input],
      outputs: [{ name: "output", classification: 3 }],
    });
    const expected = top3
      .output("output")!
      .strings()
      .map((entry) => describeClass(parseClassification(entry)));
    assert.equal(expected.length, 3);
    assert.deepEqual(page.classes, expected);
    const label = await node.infer("ensemble_pipeline", { inputs: [{ ...input, name: "IMAGE" }] });
    assert.equal(page.ensemble, `ensemble_pipeline label: ${label.output("LABEL")!.as("INT64")[0]}`);
  });

  it("with CORS off, chromium blocks the call: the page shows a ConnectionError and nothing else", async () => {
    const page = await render(`${site.origin}/?server=${withoutCors.httpUrl}`, "off");
    assert.equal(page.state, "error");
    assert.match(page.status, /^ConnectionError \(CONNECTION\): /);
    assert.deepEqual(page.classes, []);
    assert.ok(
      page.console.some((line) => line.includes("has been blocked by CORS policy")),
      page.console.join("\n"),
    );
  });

  it("a page from an origin the server does not name is blocked the same way", async () => {
    const page = await render(`${elsewhere.origin}/?server=${withCors.httpUrl}`, "other-origin");
    assert.equal(page.state, "error");
    assert.match(page.status, /^ConnectionError/);
    assert.deepEqual(page.classes, []);
  });
});
