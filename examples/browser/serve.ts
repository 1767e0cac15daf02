/**
 * Builds the browser example and serves it: `npx tsx examples/browser/serve.ts [--port 8080]`. Then start
 * a server that allows the page's origin and open the page:
 *   npx tbench-server --model-repository examples/models --http-cors-allow-origin http://localhost:8080
 *   open http://localhost:8080/?server=http://localhost:8000
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildPage } from "./build-page.js";
import { serveStatic } from "./static-server.js";

const { values } = parseArgs({ options: { port: { type: "string", default: "8080" } } });
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port: expected a port number from 0 to 65535, got '${values.port}'`);
  process.exit(2);
}
const outDir = join(new URL(".", import.meta.url).pathname, "dist");
const bytes = await buildPage(outDir);
const site = await serveStatic(outDir, port, "localhost");
const origin = site.origin;
console.log(`built ${outDir} (page.js ${(bytes / 1024).toFixed(1)} KiB); serving it at ${origin}`);
console.log(
  `start the server with: npx tbench-server --model-repository examples/models --http-cors-allow-origin ${origin}`,
);
console.log(`then open: ${origin}/?server=http://localhost:8000`);
process.once("SIGINT", () => void site.close());
