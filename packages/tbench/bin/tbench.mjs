#!/usr/bin/env node
// The tbench command's launcher. npm links bins when it installs, and in a fresh clone that is before
// `npm run build` has written dist/, so the link points at this file, which is always there.
import { existsSync } from "node:fs";

const entry = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("tbench: not built yet; run `npm run build` in the repository first\n");
  process.exit(2);
}
await import(entry.href);
